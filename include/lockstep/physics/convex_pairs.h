// Contacts of an ellipsoid with a box, a cylinder or another ellipsoid: MuJoCo's general convex
// collision (engine_collision_convex.c, mjc_Convex: one contact, multiccd leaves ellipsoids alone) in
// exact geometry, as the least translation that separates the two shapes.
//
// With h1, h2 the shapes' support functions (h(n) = the largest n . x over the shape), the signed
// distance of the pair is -min over unit n of f(n) = h1(n) + h2(-n): the least of f is the depth of
// the overlap (f > 0), or minus the gap between the shapes (f < 0), and its n the normal from the
// first shape to the second. Each shape's surface splits the directions into pieces on which f is
// smooth (a box: its faces' six normals, its edges' arcs, its corners' regions; a cylinder: its
// caps' normals, its side's circle, its rims' halves of the sphere); the least f is a least f on one
// piece, so every piece's stationary directions are listed as candidates, f is evaluated at each and
// the lowest kept. Evaluating f itself, never a piece's formula, keeps a wrong or unneeded candidate
// harmless: it can only be higher than the least.
#pragma once

#include "lockstep/physics/math.h"

namespace lockstep {

// The best direction found so far and f there.
template <class T>
struct ConvexOptimum {
  Vec3<T> n;
  T f;
};

// best := (n, f) where f is lower (lane by lane; a NaN f is never lower).
template <class T>
LOCKSTEP_HD_INLINE void keepLower(ConvexOptimum<T>* best, const Vec3<T>& n, T f) {
  const MaskOf<T> lower = f < best->f;
  best->n = selectVec3(lower, n, best->n);
  best->f = selectT(lower, f, best->f);
}

// v / |v|, or x where v is below 1e-300 (then also no direction of use).
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> convexUnit(const Vec3<T>& v) {
  const T len = norm(v);
  const MaskOf<T> tiny = !(len > T(1e-300));
  const T inverse = T(1) / selectT(tiny, T(1), len);
  return {{selectT(tiny, T(1), v[0] * inverse), selectT(tiny, T(0), v[1] * inverse), selectT(tiny, T(0), v[2] * inverse)}};
}

// An ellipsoid with radii a about its centre, in its own frame: the support function
// h(n) = |a n|, the support point a^2 n / h(n), and u' H v with H = d^2 h / dn^2
// = (diag(a^2) - (a^2 n)(a^2 n)' / h^2) / h.
template <class T>
LOCKSTEP_HD_INLINE T ellipsoidSupport(const Vec3<T>& a, const Vec3<T>& n) {
  return sqrtT(a[0] * a[0] * n[0] * n[0] + a[1] * a[1] * n[1] * n[1] + a[2] * a[2] * n[2] * n[2]);
}
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> ellipsoidSupportPoint(const Vec3<T>& a, const Vec3<T>& n) {
  const T inverse = T(1) / ellipsoidSupport(a, n);
  return {{a[0] * a[0] * n[0] * inverse, a[1] * a[1] * n[1] * inverse, a[2] * a[2] * n[2] * inverse}};
}
// u' diag(a^2) v.
template <class T>
LOCKSTEP_HD_INLINE T ellipsoidWeighted(const Vec3<T>& a, const Vec3<T>& u, const Vec3<T>& v) {
  T sum = T(0);
  for (int k = 0; k < 3; ++k) sum = sum + a[k] * a[k] * u[k] * v[k];
  return sum;
}
template <class T>
LOCKSTEP_HD_INLINE T ellipsoidCurvature(const Vec3<T>& a, const Vec3<T>& n, const Vec3<T>& u, const Vec3<T>& v) {
  const T h = ellipsoidSupport(a, n);
  return (ellipsoidWeighted(a, u, v) - ellipsoidWeighted(a, n, u) * ellipsoidWeighted(a, n, v) / (h * h)) / h;
}

// Where sphereNewton stands and how it steps: the tangents t1, t2 at n and its chart's bend. A chart
// takes a step (d1, d2) to a point n(d) of the sphere; f along it has the second derivative
// d' (t' H t) d + w . n'' (H, w: f's Hessian and gradient in R^3), where the plain chart's
// n'' = -|d|^2 n and another's adds bend (2 g2 d1 d2 - g1 d2^2) to that, g = (t1 . w, t2 . w) (the
// polar chart's bend is the cotangent of the angle from its pole).
template <class T>
struct SphereStep {
  Vec3<T> t1, t2;
  T bend;
  T sinPolar, cosPolar;  // the polar chart's angle from its pole (unused by the plain one)
};

// The plain chart: two tangents from a fixed axis, the step normalized back onto the sphere.
struct PlainSphereChart {
  template <class T>
  LOCKSTEP_HD_INLINE SphereStep<T> at(const Vec3<T>& n) const {
    const MaskOf<T> useY = (n[1] < T(0.5)) & (n[1] > T(-0.5));
    const Vec3<T> y{{T(0), selectT(useY, T(1), T(0)), selectT(useY, T(0), T(1))}};
    const Vec3<T> t1 = convexUnit(y - dot(n, y) * n);
    return {t1, cross(n, t1), T(0), T(0), T(0)};
  }
  template <class T>
  LOCKSTEP_HD_INLINE Vec3<T> move(const Vec3<T>& n, const SphereStep<T>& s, T d1, T d2) const {
    return convexUnit(n + d1 * s.t1 + d2 * s.t2);
  }
  template <class T>
  LOCKSTEP_HD_INLINE MaskOf<T> leaves(const SphereStep<T>&) const {
    return T(1) > T(2);
  }
};

// The point (cos, sin) of the unit circle at the angle 2 atan(x / 2), which is x to third order: a
// chart's turn by x without trigonometry.
template <class T>
struct CircleTurn {
  T cos, sin;
};
template <class T>
LOCKSTEP_HD_INLINE CircleTurn<T> circleTurn(T x) {
  const T h = T(0.5) * x, inverse = T(1) / (T(1) + h * h);
  return {(T(1) - h * h) * inverse, x * inverse};
}

// Polar angles about a pole: t1 down the meridian, t2 along the parallel, the step d1 in the angle
// from the pole and d2 / sin(angle) in azimuth (each by circleTurn). A function with a cone at the
// pole (|P n|, P the projection across the pole) is smooth in these angles, where the plain step's
// quadratic model fails within a step's length of the pole.
template <class T>
struct PolarSphereChart {
  Vec3<T> pole, across;  // across: a unit vector across the pole, the meridian at the pole itself

  LOCKSTEP_HD_INLINE SphereStep<T> at(const Vec3<T>& n) const {
    const T c = dot(n, pole);
    const Vec3<T> off = n - c * pole;
    const T s = norm(off);
    const MaskOf<T> onPole = !(s > T(1e-30));
    const T safe = selectT(onPole, T(1), s);
    const Vec3<T> e = selectVec3(onPole, across, T(T(1) / safe) * off);
    return {c * e - s * pole, cross(pole, e), selectT(onPole, T(0), c / safe), s, c};
  }
  // Whether a run stops here: well into the other half of the sphere (30 degrees beyond the equator;
  // a run that crosses it may come back, but none seen from there) or on the pole (within an angle
  // whose square is below the rounding of f: the pole's own f, a candidate, is as low).
  LOCKSTEP_HD_INLINE MaskOf<T> leaves(const SphereStep<T>& s) const {
    constexpr double kOnPole = sizeof(ScalarOf<T>) == sizeof(float) ? 1e-4 : 1e-8;
    return (s.cosPolar < T(-0.5)) | (s.sinPolar < T(kOnPole));
  }
  // On the pole itself the step is down the meridian of d1 e + d2 t2, by its length.
  LOCKSTEP_HD_INLINE Vec3<T> move(const Vec3<T>& n, const SphereStep<T>& s, T d1, T d2) const {
    const MaskOf<T> onPole = !(s.sinPolar > T(1e-30));
    const Vec3<T> e = s.cosPolar * s.t1 + s.sinPolar * n;  // the meridian's way from the pole
    const T len = sqrtT(d1 * d1 + d2 * d2);
    const CircleTurn<T> down = circleTurn(selectT(onPole, len, d1));
    const CircleTurn<T> turn = circleTurn(d2 / selectT(onPole, T(1), s.sinPolar));
    const Vec3<T> way = selectVec3(onPole, convexUnit(d1 * e + d2 * s.t2), turn.cos * e + turn.sin * s.t2);
    const T c = selectT(onPole, T(1), s.cosPolar), sn = selectT(onPole, T(0), s.sinPolar);
    return convexUnit(T(c * down.cos - sn * down.sin) * pole + T(sn * down.cos + c * down.sin) * way);
  }
};

// The local least of a smooth f on the unit sphere from start (a trust region Newton method on the
// sphere, at most a fixed number of steps, in the chart's coordinates). model(n, t1, t2) gives f at
// n, its gradient w (in R^3), n . w, the gradient along the tangents t1, t2 and the Hessian of f (in
// R^3) on them; value(n) gives f. The model on the sphere is the tangential Hessian less (n . w) I
// and the chart's bend; where it is not positive definite the step goes down the gradient. A step
// is taken where it lowers f, and within sqrt(epsilon) of a least (below). A lane's run ends where
// its step is below kSettled or where its chart says it leaves; the loop ends when every lane's has.
template <class T>
struct SphereModel {
  T f, nw, g1, g2, h11, h12, h22;
};
template <class T, class Model, class Value, class Chart = PlainSphereChart>
LOCKSTEP_HD_INLINE Vec3<T> sphereNewton(Vec3<T> n, Model&& model, Value&& value, const Chart& chart = Chart{}) {
  constexpr bool kFloat = sizeof(ScalarOf<T>) == sizeof(float);
  constexpr int kSteps = kFloat ? 24 : 40;
  constexpr double kPolish = kFloat ? 1e-3 : 1e-6, kSettled = kFloat ? 1e-6 : 1e-12;
  T radius = T(0.5);
  n = convexUnit(n);
  // A lane's n stays as it is once settled, so a world's result does not depend on the lanes beside it.
  MaskOf<T> settled = T(1) > T(2);
  for (int s = 0; s < kSteps && !allLanes(settled); ++s) {
    const SphereStep<T> at = chart.at(n);
    settled = settled | chart.leaves(at);
    const SphereModel<T> m = model(n, at.t1, at.t2);
    const T a11 = m.h11 - m.nw, a22 = m.h22 - m.nw - at.bend * m.g1, a12 = m.h12 + at.bend * m.g2;
    const T det = a11 * a22 - a12 * a12;
    const MaskOf<T> definite = (a11 > T(0)) & (det > T(0));
    const T safeDet = selectT(definite, det, T(1));
    const T d1 = selectT(definite, -(a22 * m.g1 - a12 * m.g2) / safeDet, -m.g1);
    const T d2 = selectT(definite, -(a11 * m.g2 - a12 * m.g1) / safeDet, -m.g2);
    // Within sqrt(epsilon) of the least, f changes by less than its rounding: a Newton step of a
    // positive definite model is taken there whole and as it is (n converges to its last digits, not
    // f alone).
    const T len = sqrtT(d1 * d1 + d2 * d2);
    const MaskOf<T> polish = definite & (len < T(kPolish)), clamp = (len > radius) & (!polish);
    const T scale = selectT(clamp, radius / selectT(clamp, len, T(1)), T(1));
    const Vec3<T> trial = chart.move(n, at, T(scale * d1), T(scale * d2));
    const MaskOf<T> lower = ((value(trial) < m.f) | polish) & (!settled);
    n = selectVec3(lower, trial, n);
    radius = selectT(lower, selectT(radius < T(0.5), T(2) * radius, T(1)), T(0.25) * radius);
    settled = settled | (polish & (len < T(kSettled)));
  }
  return n;
}

// Bisection for the root of a monotone g on (lo, hi): rising says g goes from negative to positive.
template <class T, class G>
LOCKSTEP_HD_INLINE T convexBisect(T lo, T hi, bool rising, G&& g) {
  constexpr int kSteps = sizeof(ScalarOf<T>) == sizeof(float) ? 40 : 90;
  for (int s = 0; s < kSteps; ++s) {
    const T mid = T(0.5) * (lo + hi);
    const MaskOf<T> above = g(mid) > T(0);
    const MaskOf<T> up = rising ? above : !above;
    hi = selectT(up, mid, hi);
    lo = selectT(up, lo, mid);
  }
  return T(0.5) * (lo + hi);
}

// The normal lines of an ellipse (D = 2) or an ellipsoid (D = 3) with radii a through a point p (in
// its axes): the points x of its boundary where the distance from p is stationary. Lagrange's
// condition gives x = a^2 p / (a^2 + t) at the roots t of g(t) = sum (a p / (a^2 + t))^2 - 1, which
// is convex between its poles -a^2: one root above the highest pole (the nearest point), one below
// the lowest (the farthest), none or two (either side of g's least) between two poles; where p lies
// on an axis plane (p_k = 0) the points with t = -a_k^2 itself, off that plane, are normal lines too.
// The outward normal at x is along x / a^2 = p / (a^2 + t).
template <class T, int D>
struct NormalLines {
  T a[D], p[D], a2[D];
  T pole[D];  // -a^2 ascending
  T reach;    // beyond the poles by this much, every term of g is below a quarter of p's share: g < 0

  LOCKSTEP_HD_INLINE NormalLines(const T* radii, const T* point) {
    T pp = T(0);
    for (int k = 0; k < D; ++k) {
      a[k] = radii[k];
      p[k] = point[k];
      a2[k] = a[k] * a[k];
      pole[k] = -a2[k];
      pp = pp + p[k] * p[k];
    }
    for (int i = 0; i + 1 < D; ++i) {  // a compare-and-swap network, lane by lane
      for (int j = 0; j + 1 < D - i; ++j) {
        const MaskOf<T> swap = pole[j + 1] < pole[j];
        const T lo = selectT(swap, pole[j + 1], pole[j]), hi = selectT(swap, pole[j], pole[j + 1]);
        pole[j] = lo;
        pole[j + 1] = hi;
      }
    }
    reach = T(2) * sqrtT(pp) * sqrtT(-pole[0]) - pole[0];
  }
  LOCKSTEP_HD_INLINE T g(T t) const {
    T s = T(-1);
    for (int k = 0; k < D; ++k) {
      const T q = a[k] * p[k] / (a2[k] + t);
      s = s + q * q;
    }
    return s;
  }
  LOCKSTEP_HD_INLINE T slope(T t) const {  // g'(t) = -2 sum (a p)^2 / (a^2 + t)^3
    T s = T(0);
    for (int k = 0; k < D; ++k) {
      const T ap = a[k] * p[k], d = a2[k] + t;
      s = s - T(2) * ap * ap / (d * d * d);
    }
    return s;
  }
  // The nearest point's root.
  LOCKSTEP_HD_INLINE T nearest() const {
    return convexBisect(pole[D - 1], pole[D - 1] + reach, false, [&](T t) { return g(t); });
  }
  // visit(y) with y along the outward normal at x(t) (not unit).
  template <class Visit>
  LOCKSTEP_HD_INLINE void normalAt(T t, Visit&& visit) const {
    T y[D];
    for (int k = 0; k < D; ++k) y[k] = p[k] / (a2[k] + t);
    visit(y);
  }
  // visit(y) at every normal line where |a n| - n . p may have a least: all but the farthest point's
  // (where it has its largest value); between two poles only where g's least is not above 0 in some
  // lane (elsewhere no root lies there); and the points on each pole, always (near an axis plane the
  // two roots beside a pole come as close to those as the rounding lets them).
  template <class Visit>
  LOCKSTEP_HD_INLINE void forEachButFarthest(Visit&& visit) const {
    auto gt = [&](T t) { return g(t); };
    normalAt(nearest(), visit);
    for (int k = 0; k + 1 < D; ++k) {
      const T least = convexBisect(pole[k], pole[k + 1], true, [&](T t) { return slope(t); });
      if (allLanes(g(least) > T(0))) continue;
      normalAt(convexBisect(pole[k], least, false, gt), visit);
      normalAt(convexBisect(least, pole[k + 1], true, gt), visit);
    }
    // t = -a_k^2: x_j = a_j^2 p_j / (a_j^2 - a_k^2) for j != k (0 where a_j = a_k: then, with p on
    // the axis, every direction of the round section is a normal line, and the axes among them).
    for (int k = 0; k < D; ++k) {
      T y[D], rest = T(1);
      for (int j = 0; j < D; ++j) {
        if (j == k) continue;
        const T gap = a2[j] - a2[k];
        const MaskOf<T> round = gap == T(0);
        y[j] = selectT(round, T(0), p[j] / selectT(round, T(1), gap));
        rest = rest - a2[j] * y[j] * y[j];
      }
      y[k] = sqrtT(selectT(rest > T(0), rest, T(0))) / a[k];
      visit(y);
      y[k] = -y[k];
      visit(y);
    }
  }
};

// The outward normal of an ellipsoid (radii a, its frame) at its point nearest p.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> ellipsoidNormalNearest(const Vec3<T>& a, const Vec3<T>& p) {
  const NormalLines<T, 3> lines(a.v, p.v);
  Vec3<T> n;
  lines.normalAt(lines.nearest(), [&](const T* y) { n = convexUnit(Vec3<T>{{y[0], y[1], y[2]}}); });
  return n;
}

// visit(n) at every stationary direction but the largest of |a n| - n . q (an ellipsoid with radii a,
// in its frame) over unit n in the plane of the orthonormal u, w. There |a n| is the support function
// of the ellipsoid's shadow on that plane, an ellipse whose axes are the eigenvectors of
// [u w]' diag(a^2) [u w], so these are that ellipse's normal lines through q's shadow
// (NormalLines<T, 2>: at most four, one the farthest).
template <class T, class Visit>
LOCKSTEP_HD_INLINE void forEachShadowNormal(const Vec3<T>& a, const Vec3<T>& u, const Vec3<T>& w, const Vec3<T>& q,
                                            Visit&& visit) {
  const T m11 = ellipsoidWeighted(a, u, u), m12 = ellipsoidWeighted(a, u, w), m22 = ellipsoidWeighted(a, w, w);
  const T angle = T(0.5) * atan2T(T(2) * m12, m11 - m22), c = cosT(angle), s = sinT(angle);
  const Vec3<T> e1 = c * u + s * w, e2 = c * w - s * u;
  const T half = T(0.5) * (m11 + m22), spread = sqrtT(T(0.25) * (m11 - m22) * (m11 - m22) + m12 * m12);
  const T radii[2] = {sqrtT(half + spread), sqrtT(selectT(half > spread, half - spread, T(0)))};
  const T at[2] = {dot(q, e1), dot(q, e2)};
  NormalLines<T, 2>(radii, at).forEachButFarthest([&](const T* y) { visit(convexUnit(y[0] * e1 + y[1] * e2)); });
}

// The least f of an ellipsoid (radii a, its frame: the first shape) and a box (centre c, axes the
// columns of R, half sizes b, in the ellipsoid's frame): f(n) = |a n| + h_box(-n). Candidates: the
// box's six face normals; on each edge's arc (n across the edge, between its faces' normals, where
// h_box(-n) = -n . q for a point q of the edge) the stationary directions of |a n| - n . q
// (forEachShadowNormal); in each corner's region (h_box(-n) = -n . v) those of |a n| - n . v, the
// normals through v but the farthest point's.
template <class T>
LOCKSTEP_HD_INLINE ConvexOptimum<T> ellipsoidBoxLeast(const Vec3<T>& a, const Vec3<T>& c, const Mat33<T>& R,
                                                      const Vec3<T>& b) {
  const Vec3<T> axis[3] = {R.col(0), R.col(1), R.col(2)};
  auto f = [&](const Vec3<T>& n) {
    T box = -dot(n, c);
    for (int k = 0; k < 3; ++k) box = box + absT(dot(n, axis[k])) * b[k];
    return ellipsoidSupport(a, n) + box;
  };
  ConvexOptimum<T> best{axis[0], f(axis[0])};
  for (int k = 0; k < 3; ++k) {
    keepLower(&best, axis[k], f(axis[k]));
    keepLower(&best, T(-1) * axis[k], f(T(-1) * axis[k]));
  }
  for (int k = 0; k < 3; ++k) {
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    for (int s = 0; s < 4; ++s) {
      const T si = (s & 1) ? T(-1) : T(1), sj = (s & 2) ? T(-1) : T(1);
      // n across the edge through q (on the arc from si axis_i to sj axis_j): h_box(-n) = -n . q.
      const Vec3<T> q = c - T(si * b[i]) * axis[i] - T(sj * b[j]) * axis[j];
      forEachShadowNormal(a, axis[i], axis[j], q, [&](const Vec3<T>& n) { keepLower(&best, n, f(n)); });
    }
  }
  for (int corner = 0; corner < 8; ++corner) {
    Vec3<T> v = c;
    for (int k = 0; k < 3; ++k) v = v + (((corner >> k) & 1) ? b[k] : -b[k]) * axis[k];
    NormalLines<T, 3>(a.v, v.v).forEachButFarthest([&](const T* y) {
      const Vec3<T> n = convexUnit(Vec3<T>{{y[0], y[1], y[2]}});
      keepLower(&best, n, f(n));
    });
  }
  return best;
}

// The least f of two ellipsoids (radii a, the first's frame; the second's centre c, axes the columns
// of R, radii b in it): f(n) = |a n| + (-n . c + |b R'(-n)|), smooth everywhere, by Newton's method
// on the sphere from the line of centres and from each ellipsoid's six axis directions, the lowest
// run continued to the last digits.
template <class T>
LOCKSTEP_HD_INLINE ConvexOptimum<T> ellipsoidPairLeast(const Vec3<T>& a, const Vec3<T>& c, const Mat33<T>& R,
                                                       const Vec3<T>& b) {
  auto value = [&](const Vec3<T>& n) {
    return ellipsoidSupport(a, n) - dot(n, c) + ellipsoidSupport(b, transposeTimes(R, T(-1) * n));
  };
  auto model = [&](const Vec3<T>& n, const Vec3<T>& t1, const Vec3<T>& t2) {
    const Vec3<T> m = transposeTimes(R, T(-1) * n), m1 = transposeTimes(R, t1), m2 = transposeTimes(R, t2);
    const Vec3<T> w = ellipsoidSupportPoint(a, n) - c - R * ellipsoidSupportPoint(b, m);
    SphereModel<T> s;
    s.f = ellipsoidSupport(a, n) - dot(n, c) + ellipsoidSupport(b, m);
    s.nw = dot(n, w);
    s.g1 = dot(t1, w);
    s.g2 = dot(t2, w);
    s.h11 = ellipsoidCurvature(a, n, t1, t1) + ellipsoidCurvature(b, m, m1, m1);
    s.h12 = ellipsoidCurvature(a, n, t1, t2) + ellipsoidCurvature(b, m, m1, m2);
    s.h22 = ellipsoidCurvature(a, n, t2, t2) + ellipsoidCurvature(b, m, m2, m2);
    return s;
  };
  Vec3<T> n = sphereNewton(c, model, value);
  ConvexOptimum<T> best{n, value(n)};
  for (int k = 0; k < 6; ++k) {
    const T sign = (k & 1) ? T(-1) : T(1);
    const Vec3<T> own{{T(k / 2 == 0 ? 1 : 0), T(k / 2 == 1 ? 1 : 0), T(k / 2 == 2 ? 1 : 0)}};
    n = sphereNewton(sign * own, model, value);
    keepLower(&best, n, value(n));
    n = sphereNewton(sign * R.col(k / 2), model, value);
    keepLower(&best, n, value(n));
  }
  // Near the least f tells the runs apart by its rounding only: the lowest run is polished again.
  best.n = sphereNewton(best.n, model, value);
  best.f = value(best.n);
  return best;
}

// The least f of an ellipsoid (radii a, its frame: the first shape) and a cylinder (centre c, axis z,
// radius r, half height hh, in the ellipsoid's frame): f(n) = |a n| + h_cyl(-n), with
// h_cyl(m) = m . c + hh |m . z| + r |P m|, P the projection across the axis. Candidates: the caps'
// normals +-z; on the side's circle of normals (n . z = 0: h_cyl(-n) = -n . c + r, the side's line
// nearest the ellipsoid) the stationary directions of |a n| - n . c (forEachShadowNormal); on each
// rim's half of the sphere (h_cyl(-n) = -n . cc + r |P n|, cc the cap's centre: the rim's point
// across from P n) Newton's method in polar angles about the cap's normal (f has a cone there), from
// the normals through eight points of the rim and from five tilts of the cap's normal, by 45 degrees
// and by 0.01; the lowest direction polished once more on its own rim.
template <class T>
LOCKSTEP_HD_INLINE ConvexOptimum<T> ellipsoidCylinderLeast(const Vec3<T>& a, const Vec3<T>& c, const Vec3<T>& z,
                                                           T r, T hh) {
  auto f = [&](const Vec3<T>& n) {
    const T nz = dot(n, z);
    return ellipsoidSupport(a, n) - dot(n, c) + hh * absT(nz) + r * norm(n - nz * z);
  };
  ConvexOptimum<T> best{z, f(z)};
  keepLower(&best, T(-1) * z, f(T(-1) * z));
  const SphereStep<T> across = PlainSphereChart{}.at(z);  // u1, u2: the cylinder's cross section
  const Vec3<T> &u1 = across.t1, &u2 = across.t2;
  forEachShadowNormal(a, u1, u2, c, [&](const Vec3<T>& n) { keepLower(&best, n, f(n)); });
  // Newton's method on the rim of the cap at c + sign hh z (sign +-1, lane by lane), from start.
  auto rimNewton = [&](T sign, const Vec3<T>& start) {
    const Vec3<T> cc = c + T(sign * hh) * z;
    auto value = [&](const Vec3<T>& n) { return ellipsoidSupport(a, n) - dot(n, cc) + r * norm(n - dot(n, z) * z); };
    // The rim's point for n is cc + r u, u = -P n / |P n|: the gradient of r |P n| is -r u and its
    // Hessian (r / |P n|) (P - u u').
    auto model = [&](const Vec3<T>& n, const Vec3<T>& t1, const Vec3<T>& t2) {
      const Vec3<T> off = n - dot(n, z) * z;
      const T len = norm(off), cone = r / len;
      const Vec3<T> u = T(T(-1) / len) * off, w = ellipsoidSupportPoint(a, n) - cc - r * u;
      const Vec3<T> p1 = t1 - dot(t1, z) * z, p2 = t2 - dot(t2, z) * z;
      const T ut1 = dot(u, t1), ut2 = dot(u, t2);
      SphereModel<T> s;
      s.f = ellipsoidSupport(a, n) - dot(n, cc) + r * len;
      s.nw = dot(n, w);
      s.g1 = dot(t1, w);
      s.g2 = dot(t2, w);
      s.h11 = ellipsoidCurvature(a, n, t1, t1) + cone * (dot(p1, p1) - ut1 * ut1);
      s.h12 = ellipsoidCurvature(a, n, t1, t2) + cone * (dot(p1, p2) - ut1 * ut2);
      s.h22 = ellipsoidCurvature(a, n, t2, t2) + cone * (dot(p2, p2) - ut2 * ut2);
      return s;
    };
    return sphereNewton(start, model, value, PolarSphereChart<T>{T(T(-1) * sign) * z, u1});
  };
  auto onRim = [&](T sign, const Vec3<T>& start) {
    const Vec3<T> n = rimNewton(sign, start);
    keepLower(&best, n, f(n));
  };
  for (int side = 0; side < 2; ++side) {
    const T sign = side ? T(-1) : T(1), pole = T(-1) * sign;
    for (int k = 0; k < 8; ++k) {
      const double angle = 0.7853981633974483 * k;
      const Vec3<T> rim = c + T(sign * hh) * z + T(r * T(cos(angle))) * u1 + T(r * T(sin(angle))) * u2;
      onRim(sign, ellipsoidNormalNearest(a, rim));
    }
    const Vec3<T> toward = convexUnit(dot(c, z) * z - c);  // across the axis towards the ellipsoid's centre
    const Vec3<T> tilts[5] = {u1, T(-1) * u1, u2, T(-1) * u2, toward};
    for (int k = 0; k < 5; ++k) {
      onRim(sign, pole * z + tilts[k]);
      onRim(sign, pole * z + T(0.01) * tilts[k]);
    }
  }
  // A run from afar may use up its steps short of the last digits, where f no longer tells directions
  // apart: the lowest is polished again on the rim of its own half of the sphere, and the polished
  // direction kept unless f is higher there by more than its rounding.
  constexpr double kRounding = sizeof(ScalarOf<T>) == sizeof(float) ? 1e-6 : 1e-14;
  const Vec3<T> polished = rimNewton(selectT(dot(best.n, z) > T(0), T(-1), T(1)), best.n);
  const T fp = f(polished), rounding = T(kRounding) * (norm(c) + r + hh + norm(a));
  const MaskOf<T> kept = !(fp > best.f + rounding);
  best.n = selectVec3(kept, polished, best.n);
  best.f = selectT(kept, fp, best.f);
  return best;
}

}  // namespace lockstep
