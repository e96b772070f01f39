// Contacts of an ellipsoid with a box or with another ellipsoid: MuJoCo's general convex collision
// (engine_collision_convex.c, mjc_Convex: one contact, multiccd leaves ellipsoids alone) in exact
// geometry, as the least translation that separates the two shapes.
//
// With h1, h2 the shapes' support functions (h(n) = the largest n . x over the shape), the signed
// distance of the pair is -min over unit n of f(n) = h1(n) + h2(-n): the least of f is the depth of
// the overlap (f > 0), or minus the gap between the shapes (f < 0), and its n the normal from the
// first shape to the second. Each shape's surface splits the directions into pieces on which f is
// smooth (a box: its faces' six normals, its edges' arcs, its corners' regions); the least f is a
// least f on one piece, so every piece's stationary directions are listed as candidates, f is
// evaluated at each and the lowest kept. Evaluating f itself, never a piece's formula, keeps a wrong
// or unneeded candidate harmless: it can only be higher than the least.
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
template <class T>
LOCKSTEP_HD_INLINE T ellipsoidCurvature(const Vec3<T>& a, const Vec3<T>& n, const Vec3<T>& u, const Vec3<T>& v) {
  T uv = T(0), nu = T(0), nv = T(0);
  for (int k = 0; k < 3; ++k) {
    const T a2 = a[k] * a[k];
    uv = uv + a2 * u[k] * v[k];
    nu = nu + a2 * n[k] * u[k];
    nv = nv + a2 * n[k] * v[k];
  }
  const T h = ellipsoidSupport(a, n);
  return (uv - nu * nv / (h * h)) / h;
}

// The local least of a smooth f on the unit sphere from start (a trust region Newton method on the
// sphere, a fixed number of steps). model(n, t1, t2) gives f at n, its gradient w (in R^3), n . w,
// the gradient along the tangents t1, t2 and the Hessian of f (in R^3) on them; value(n) gives f.
// The sphere's Hessian is the tangential one less (n . w) I; where it is not positive definite the
// step goes down the gradient. A step is taken where it lowers f, and within sqrt(epsilon) of a
// least (below).
template <class T>
struct SphereModel {
  T f, nw, g1, g2, h11, h12, h22;
};
template <class T, class Model, class Value>
LOCKSTEP_HD_INLINE Vec3<T> sphereNewton(Vec3<T> n, Model&& model, Value&& value) {
  constexpr int kSteps = sizeof(ScalarOf<T>) == sizeof(float) ? 24 : 40;
  constexpr double kPolish = sizeof(ScalarOf<T>) == sizeof(float) ? 1e-3 : 1e-6;
  T radius = T(0.5);
  n = convexUnit(n);
  for (int s = 0; s < kSteps; ++s) {
    const MaskOf<T> useY = (n[1] < T(0.5)) & (n[1] > T(-0.5));
    const Vec3<T> y{{T(0), selectT(useY, T(1), T(0)), selectT(useY, T(0), T(1))}};
    const Vec3<T> t1 = convexUnit(y - dot(n, y) * n), t2 = cross(n, t1);
    const SphereModel<T> m = model(n, t1, t2);
    const T a11 = m.h11 - m.nw, a22 = m.h22 - m.nw, a12 = m.h12, det = a11 * a22 - a12 * a12;
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
    const Vec3<T> trial = convexUnit(n + T(scale * d1) * t1 + T(scale * d2) * t2);
    const MaskOf<T> lower = (value(trial) < m.f) | polish;
    n = selectVec3(lower, trial, n);
    radius = selectT(lower, selectT(radius < T(0.5), T(2) * radius, T(1)), T(0.25) * radius);
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

// visit(n) for the outward normal n at every point x of an ellipsoid's surface (radii a, its frame)
// whose normal line passes through p: the points where the distance from p is stationary, of which
// the nearest is one. Lagrange's condition gives x = a^2 p / (a^2 + t) at the roots t of
// g(t) = sum (a p / (a^2 + t))^2 - 1, which is convex between its poles -a^2: one root below the
// lowest pole, one above the highest, none or two (either side of g's least) between two poles.
// The normal there is along p / (a^2 + t).
template <class T, class Visit>
LOCKSTEP_HD_INLINE void forEachEllipsoidNormalThrough(const Vec3<T>& p, const Vec3<T>& a, Visit&& visit) {
  T a2[3], pole[3];
  for (int k = 0; k < 3; ++k) a2[k] = a[k] * a[k];
  // -a^2 ascending (a compare-and-swap network, lane by lane).
  for (int k = 0; k < 3; ++k) pole[k] = -a2[k];
  auto order = [&](int i, int j) {
    const MaskOf<T> swap = pole[j] < pole[i];
    const T lo = selectT(swap, pole[j], pole[i]), hi = selectT(swap, pole[i], pole[j]);
    pole[i] = lo;
    pole[j] = hi;
  };
  order(0, 1);
  order(1, 2);
  order(0, 1);
  auto g = [&](T t) {
    T s = T(-1);
    for (int k = 0; k < 3; ++k) {
      const T q = a[k] * p[k] / (a2[k] + t);
      s = s + q * q;
    }
    return s;
  };
  auto slope = [&](T t) {  // g'(t) = -2 sum (a p)^2 / (a^2 + t)^3
    T s = T(0);
    for (int k = 0; k < 3; ++k) {
      const T ap = a[k] * p[k], d = a2[k] + t;
      s = s - T(2) * ap * ap / (d * d * d);
    }
    return s;
  };
  auto normalAt = [&](T t) { return convexUnit(Vec3<T>{{p[0] / (a2[0] + t), p[1] / (a2[1] + t), p[2] / (a2[2] + t)}}); };
  // Beyond the poles by this much, every term of g is below a quarter of p's share: g < 0.
  const T reach = T(2) * norm(p) * sqrtT(-pole[0]) - pole[0];
  visit(normalAt(convexBisect(pole[0] - reach, pole[0], true, g)));
  visit(normalAt(convexBisect(pole[2], pole[2] + reach, false, g)));
  for (int k = 0; k < 2; ++k) {
    const T least = convexBisect(pole[k], pole[k + 1], true, slope);
    visit(normalAt(convexBisect(pole[k], least, false, g)));
    visit(normalAt(convexBisect(least, pole[k + 1], true, g)));
  }
}

// The least of a smooth g(phi) for phi in [0, pi/2], whose slope is slope(phi): g at 17 points, then
// bisection on the slope's sign within the interval (between two neighbouring points, where the
// slope turns from negative to positive) whose ends are lowest; the lowest point where no interval
// turns.
template <class T, class G, class Slope>
LOCKSTEP_HD_INLINE T quarterArcLeast(G&& g, Slope&& slope) {
  constexpr int kPoints = 16;
  constexpr double kWidth = 1.5707963267948966 / kPoints;
  T best = T(0), bestLo = T(0), bestHi = T(0), bestTurn = T(0);
  T gPrev = g(T(0)), sPrev = slope(T(0)), lowest = gPrev;
  MaskOf<T> turned = T(1) > T(2);
  for (int k = 1; k <= kPoints; ++k) {
    const T phi = T(kWidth * k), gk = g(phi), sk = slope(phi);
    const MaskOf<T> lower = gk < lowest;
    best = selectT(lower, phi, best);
    lowest = selectT(lower, gk, lowest);
    const T end = selectT(gPrev < gk, gPrev, gk);
    const MaskOf<T> turns = (sPrev < T(0)) & (sk > T(0)) & ((!turned) | (end < bestTurn));
    bestLo = selectT(turns, T(kWidth * (k - 1)), bestLo);
    bestHi = selectT(turns, phi, bestHi);
    bestTurn = selectT(turns, end, bestTurn);
    turned = turned | turns;
    gPrev = gk;
    sPrev = sk;
  }
  const T root = convexBisect(bestLo, bestHi, true, slope);
  return selectT(turned, root, best);
}

// The least f of an ellipsoid (radii a, its frame: the first shape) and a box (centre c, axes the
// columns of R, half sizes b, in the ellipsoid's frame): f(n) = |a n| + h_box(-n). Candidates: the
// box's six face normals; on each edge's arc (n across the edge, between its faces' normals, where
// h_box(-n) = -n . q for a point q of the edge) the least of |a n| - n . q; in each corner's region
// (h_box(-n) = -n . v) every stationary direction of |a n| - n . v, the normals through v.
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
      // n(phi) = cos phi u + sin phi w; the box's support along -n is then the edge through q.
      const Vec3<T> u = si * axis[i], w = sj * axis[j];
      const Vec3<T> q = c - T(si * b[i]) * axis[i] - T(sj * b[j]) * axis[j];
      auto along = [&](T phi) { return cosT(phi) * u + sinT(phi) * w; };
      auto g = [&](T phi) {
        const Vec3<T> n = along(phi);
        return ellipsoidSupport(a, n) - dot(n, q);
      };
      auto slope = [&](T phi) {
        const Vec3<T> n = along(phi), dn = cosT(phi) * w - sinT(phi) * u;
        return dot(ellipsoidSupportPoint(a, n) - q, dn);
      };
      const Vec3<T> n = along(quarterArcLeast<T>(g, slope));
      keepLower(&best, n, f(n));
    }
  }
  for (int corner = 0; corner < 8; ++corner) {
    Vec3<T> v = c;
    for (int k = 0; k < 3; ++k) v = v + (((corner >> k) & 1) ? b[k] : -b[k]) * axis[k];
    forEachEllipsoidNormalThrough(v, a, [&](const Vec3<T>& n) { keepLower(&best, n, f(n)); });
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

}  // namespace lockstep
