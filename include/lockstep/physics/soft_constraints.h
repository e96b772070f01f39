// Stage 4b, soft constraints: MuJoCo's constraint law for contacts against planes, contacts between
// geoms on different bodies (pair contacts) and joint limits (MuJoCo's documentation, "Computation"),
// solved per world in joint space:
//   rows      each contact point within its margin gives a frictionless row (condim 1), the edges
//             of a friction pyramid (condim 3: n +- mu1 t1, n +- mu2 t2; condim 4 adds the torsional
//             pair n +- mu3 spin, condim 6 also the rolling pairs n +- mu4 roll1, n +- mu5 roll2,
//             where spin, roll1 and roll2 are the relative angular velocity about n, t1 and t2) or,
//             under MuJoCo's elliptic cone, the rows n, t1, t2 (then spin, roll1, roll2) of one
//             cone; each joint limit within its margin gives a row per side. J is the rows'
//             Jacobian, pos the point's (or side's) distance, margin what MuJoCo calls includemargin
//             (margin - gap);
//   law       impedance d(pos) from solimp; R = max(1e-15, (1 - d) / d * dA) with dA MuJoCo's
//             diagApprox from the bodies' and dofs' invweight0; a pyramid's rows all get
//             Rpy = 2 mu1^2 R_0 / impratio, a cone's first tangent R_1 = R_0 / impratio and its
//             row k R_1 mu1^2 / mu_k^2; D = 1/R; K and B from solref (timeconst at least twice the
//             model's timestep: refsafe); aref = -B (J u) - K d (pos - margin) (a cone's frictional
//             rows: -B (J u));
//   solve     qacc = argmin 1/2 ||qacc - qacc0||^2_M + sum over rows with J qacc - aref < 0 of
//             1/2 D (J qacc - aref)^2 + each cone's cost (softConeForce), qacc0 the unconstrained
//             acceleration (the sweep's udot), by Newton's method: gradient g = M (qacc - qacc0) -
//             J' f (f the rows' forces), Hessian M + J' D_active J + each cone's J' H J (dense
//             Cholesky), an exact line search along the step (the cost is convex and its slope
//             continuous in the step length: Newton's method on its derivative within a bracket),
//             from qacc0, until the gradient's largest entry is below the tolerance (1e-11
//             of the forces' scale in double, 1e-5 in float: the largest of 1, M qacc0, and
//             M (qacc - qacc0) plus the rows' forces) or the cap of iterations.
// The constraint force of a row is -D (J qacc - aref) where active, 0 elsewhere (a cone's from its
// zone); qacc replaces udot. Friction is at least MuJoCo's mjMINMU (1e-5).
// M comes from crba.h. The contact points are MuJoCo's (engine_collision_primitive.c): a sphere's
// deepest point, a capsule's two end spheres, a box's corners below the plane (at most four, the
// first in corner order), a cylinder's rim points and triangle points, each at the middle of its
// penetration, with the plane's normal and MuJoCo's contact frame (mju_makeFrame: the capsule's axis
// as the first tangent's hint). A pair's points are MuJoCo's too: a sphere pair's along the line of
// centres, a capsule's from the nearest points of its segment (two for parallel capsules), a
// cylinder's from its side, cap or rim nearest to a sphere (or to a capsule's deepest point), a box
// pair's from the separating axes and the clipped incident face (softBoxPair), the
// normal from the first geom to the second, the row's Jacobian the second body's velocity of the
// point minus the first's (MuJoCo's mj_jacDifPair). Each world (each lane of a pack) iterates until its own gradient is
// small; a world that does not converge within the cap is flagged (kStatusSoftSolveFailed).
#pragma once

#include "lockstep/physics/convex_pairs.h"
#include "lockstep/physics/crba.h"
#include "lockstep/physics/forces.h"

namespace lockstep {

// The largest number of Newton iterations of one solve, and of line-search steps of one iteration.
constexpr int kSoftNewtonIterations = 100;
constexpr int kSoftLineSearchSteps = 50;
// MuJoCo's mjMINVAL, mjMINIMP and mjMAXIMP.
constexpr double kSoftMinValue = 1e-15;
constexpr double kSoftMinImpedance = 0.0001, kSoftMaxImpedance = 0.9999;

// Rows of one contact point: 1 (condim 1), the 2 (condim - 1) pyramid edges (condim 3, 4 or 6) or,
// under an elliptic cone, its condim rows (the normal, the two tangents, then spin and rolling).
LOCKSTEP_HD_INLINE int softRowsPerPoint(int condim, bool elliptic) {
  return condim == 1 ? 1 : elliptic ? condim : 2 * (condim - 1);
}
// MuJoCo's mjMINMU: the least friction a contact takes (mj_assignFriction).
constexpr double kSoftMinFriction = 1e-5;

// The parameters of one row's law (planeContactLaw, softLimitLaw), as MuJoCo's getsolparam makes them.
template <class T>
struct SoftLaw {
  T solref[2], solimp[5];
  T margin;    // MuJoCo's includemargin: margin - gap
  T timestep;  // the model's, for refsafe
};

// x^p for x in [0, 1]: x x where p is 2 (solimp's power unless a model says otherwise) and x where
// p is 1, in every lane without calling pow (a pack's pow is one libm call per lane), else pow.
template <class T>
LOCKSTEP_HD_INLINE T softPower(T x, T p) {
  const MaskOf<T> one = p == T(1), two = p == T(2);
  if (allLanes(two)) return x * x;
  if (allLanes(one)) return x;
  return selectT(two, x * x, selectT(one, x, T(powT(x, p))));
}

// MuJoCo's getimpedance: d(pos) from solimp (clamped as getsolparam clamps it), lane by lane.
template <class T>
LOCKSTEP_HD_INLINE T softImpedance(const SoftLaw<T>& law, T pos) {
  auto clamp = [](T x) { return selectT(x < T(kSoftMinImpedance), T(kSoftMinImpedance), selectT(x > T(kSoftMaxImpedance), T(kSoftMaxImpedance), x)); };
  const T d0 = clamp(law.solimp[0]), dwidth = clamp(law.solimp[1]);
  const T width = selectT(law.solimp[2] > T(0), law.solimp[2], T(0)), mid = clamp(law.solimp[3]);
  const T power = selectT(law.solimp[4] < T(1), T(1), law.solimp[4]);
  const MaskOf<T> flat = (d0 == dwidth) | (width <= T(kSoftMinValue));
  T x = (pos - law.margin) / selectT(flat, T(1), width);
  x = absT(x);
  // y(x) = a x^p below the midpoint, 1 - b (1 - x)^p above it (linear for p = 1)
  const T xl = selectT(x > T(0), selectT(x < T(1), x, T(1)), T(0));
  const T a = T(1) / softPower(mid, power - T(1)), b = T(1) / softPower(T(1) - mid, power - T(1));
  const T below = a * softPower(xl, power), above = T(1) - b * softPower(T(1) - xl, power);
  T y = selectT(power == T(1), xl, selectT(xl <= mid, below, above));
  y = selectT(x >= T(1), T(1), selectT(x <= T(0), T(0), y));
  return selectT(flat, T(0.5) * (d0 + dwidth), d0 + y * (dwidth - d0));
}

// MuJoCo's K (stiffness) and B (damping) of a row from solref: standard (timeconst, dampratio),
// timeconst at least twice the timestep (refsafe), or direct (-stiffness, -damping).
template <class T>
LOCKSTEP_HD_INLINE void softStiffnessDamping(const SoftLaw<T>& law, T* K, T* B) {
  const T dwidth = selectT(law.solimp[1] < T(kSoftMinImpedance), T(kSoftMinImpedance),
                           selectT(law.solimp[1] > T(kSoftMaxImpedance), T(kSoftMaxImpedance), law.solimp[1]));
  const T tc = selectT(law.solref[0] < T(2) * law.timestep, T(2) * law.timestep, law.solref[0]);
  const T minValue = T(kSoftMinValue);
  auto atLeast = [&](T x) { return selectT(x < minValue, minValue, x); };
  const MaskOf<T> standard = law.solref[0] > T(0);
  *K = selectT(standard, T(1) / atLeast(dwidth * dwidth * tc * tc * law.solref[1] * law.solref[1]),
               -law.solref[0] / atLeast(dwidth * dwidth));
  *B = selectT(law.solref[1] > T(0), T(2) / atLeast(dwidth * tc), -law.solref[1] / atLeast(dwidth));
}

// mju_makeFrame's tangents of a contact frame with normal n (unit): the hint (a capsule's axis) when
// it is given and not along n, else (0, 1, 0) unless n is near it, else (0, 0, 1), made orthogonal to
// n; the second tangent n x t1.
template <class T>
LOCKSTEP_HD_INLINE void softContactTangents(const Vec3<T>& n, const Vec3<T>& hint, bool hinted, Vec3<T>* t1,
                                             Vec3<T>* t2) {
  Vec3<T> y;
  const MaskOf<T> useY = (n[1] < T(0.5)) & (n[1] > T(-0.5));
  const Vec3<T> fallback{{T(0), selectT(useY, T(1), T(0)), selectT(useY, T(0), T(1))}};
  if (hinted) {
    const MaskOf<T> weak = dot(hint, hint) < T(0.25);
    for (int k = 0; k < 3; ++k) y[k] = selectT(weak, fallback[k], hint[k]);
  } else {
    y = fallback;
  }
  y = y - dot(n, y) * n;
  y = (T(1) / norm(y)) * y;
  *t1 = y;
  *t2 = cross(n, y);
}


// One contact point of a plane contact, in Ground (MuJoCo's mjContact: dist, pos and frame).
template <class T>
struct SoftPoint {
  MaskOf<T> exists;  // within the margin (lane by lane)
  T dist;            // signed distance (negative: penetration)
  Vec3<T> pos;       // the middle of the penetration
  Vec3<T> normal;    // unit, from the first geom (the plane) to the second
  Vec3<T> hint;      // the first tangent's hint (a capsule's axis), when hinted
  bool hinted;
};

// The values of one contact point in the field softContact: active, dist, pos (3), normal (3), force
// in the contact frame (3: normal, t1, t2), force in Ground (3), torque in the contact frame (3: the
// torsional about the normal, the rolling about t1 and t2; zero below condim 4 and 6), torque in
// Ground (3). The forces and torques act on the second geom's body, their opposites on the first's.
constexpr int kSoftContactValues = 20;
static_assert(kSoftContactValues == fieldWidth::softContact, "softContact's components (views.h) are a point's values");
// The most rows of one elliptic cone (condim 6).
constexpr int kSoftConeRowsMax = 6;

// The most points a shape makes against a plane: slots of soft points (a box's eight corners, of
// which at most four are used, lane by lane).
LOCKSTEP_HD_INLINE int softPointSlots(int shape) {
  switch (shape) {
    case kShapeCapsule: return 2;
    case kShapeCylinder: return 4;
    case kShapeBox: return 8;
    default: return 1;
  }
}

// MuJoCo's plane collisions (engine_collision_primitive.c; an ellipsoid's, mjc_PlaneConvex in
// engine_collision_convex.c: one point, the support point along -n) of a geom at X_GG with MuJoCo's
// size against the plane through p with unit normal n, within margin: the points of every slot.
template <class T>
LOCKSTEP_HD void softPlanePoints(int shape, const Transform<T>& X_GG, const Vec3<T>& size, const Vec3<T>& n,
                                 const Vec3<T>& p, T margin, SoftPoint<T>* out) {
  auto sphere = [&](const Vec3<T>& c, T r, SoftPoint<T>& point) {  // mjraw_PlaneSphere
    const T cdist = dot(c - p, n);
    point.exists = !(cdist > margin + r);
    point.dist = cdist - r;
    point.pos = c + T(-point.dist / T(2) - r) * n;
    point.hinted = false;
    point.hint = Vec3<T>::zero();
  };
  const Rotation<T>& R = X_GG.R;
  const Vec3<T> axis{{R(0, 2), R(1, 2), R(2, 2)}};
  switch (shape) {
    case kShapeSphere: sphere(X_GG.p, size[0], out[0]); break;
    case kShapeCapsule: {
      const Vec3<T> segment = size[1] * axis;
      sphere(X_GG.p + segment, size[0], out[0]);
      sphere(X_GG.p - segment, size[0], out[1]);
      for (int k = 0; k < 2; ++k) {
        out[k].hint = axis;
        out[k].hinted = true;
      }
      break;
    }
    case kShapeBox: {
      const T dist = dot(X_GG.p - p, n);
      T count = T(0);
      for (int i = 0; i < 8; ++i) {
        const Vec3<T> v{{(i & 1) ? size[0] : -size[0], (i & 2) ? size[1] : -size[1], (i & 4) ? size[2] : -size[2]}};
        const Vec3<T> corner = R * v;
        const T ldist = dot(n, corner);
        SoftPoint<T>& point = out[i];
        const MaskOf<T> qualifies = !((dist + ldist > margin) | (ldist > T(0)));
        point.exists = qualifies & (count < T(4));
        count += selectT(point.exists, T(1), T(0));
        point.dist = dist + ldist;
        point.pos = corner + X_GG.p + T(-point.dist / T(2)) * n;
        point.hinted = false;
        point.hint = Vec3<T>::zero();
      }
      break;
    }
    case kShapeCylinder: {  // mjc_PlaneCylinder
      Vec3<T> a = axis;
      T prjaxis = dot(n, a);
      const MaskOf<T> flip = prjaxis > T(0);
      for (int k = 0; k < 3; ++k) a[k] = selectT(flip, -a[k], a[k]);
      prjaxis = selectT(flip, -prjaxis, prjaxis);
      const T dist0 = dot(X_GG.p - p, n);
      Vec3<T> vec = prjaxis * a - n;
      const T lenSqr = dot(vec, vec);
      const MaskOf<T> general = lenSqr >= T(kSoftMinValue * kSoftMinValue);
      const T scl = size[0] / sqrtT(selectT(general, lenSqr, T(1)));
      const Vec3<T> xAxis{{R(0, 0), R(1, 0), R(2, 0)}};
      for (int k = 0; k < 3; ++k) vec[k] = selectT(general, scl * vec[k], size[0] * xAxis[k]);
      const T prjvec = dot(vec, n);
      const Vec3<T> ha = size[1] * a;
      prjaxis = prjaxis * size[1];
      auto point = [&](SoftPoint<T>& q, MaskOf<T> exists, T dist, const Vec3<T>& at) {
        q.exists = exists;
        q.dist = dist;
        q.pos = at + T(-dist * T(0.5)) * n;
        q.hinted = false;
        q.hint = Vec3<T>::zero();
      };
      const MaskOf<T> first = dist0 + prjaxis + prjvec <= margin;  // else no contact at all
      point(out[0], first, dist0 + prjaxis + prjvec, X_GG.p + vec + ha);
      point(out[1], first & (dist0 - prjaxis + prjvec <= margin), dist0 - prjaxis + prjvec, X_GG.p + vec - ha);
      const T prjvec1 = -prjvec * T(0.5);
      const MaskOf<T> triangle = first & (dist0 + prjaxis + prjvec1 <= margin);
      Vec3<T> vec1 = cross(vec, ha);
      vec1 = (size[0] * T(0.8660254037844386) / norm(vec1)) * vec1;  // sqrt(3) / 2
      point(out[2], triangle, dist0 + prjaxis + prjvec1, X_GG.p + vec1 + ha + T(-0.5) * vec);
      point(out[3], triangle, dist0 + prjaxis + prjvec1, X_GG.p - vec1 + ha + T(-0.5) * vec);
      break;
    }
    case kShapeEllipsoid: {  // mjc_PlaneConvex: the ellipsoid's support point along -n
      const Vec3<T> d = R.invTimes(T(-1) * n);
      Vec3<T> s{{d[0] * size[0], d[1] * size[1], d[2] * size[2]}};
      s = softNormalized(s, norm(s));
      for (int k = 0; k < 3; ++k) s[k] = s[k] * size[k];
      const Vec3<T> support = R * s + X_GG.p;
      SoftPoint<T>& point = out[0];
      point.dist = dot(n, support - p);
      point.exists = !(point.dist > margin);
      point.pos = support + T(-point.dist * T(0.5)) * n;
      point.hinted = false;
      point.hint = Vec3<T>::zero();
      break;
    }
    default: break;
  }
}

// The pairs of shapes whose contacts Lockstep makes (MuJoCo's order: shape1 <= shape2): a sphere
// or a capsule with anything; an ellipsoid with an ellipsoid, a cylinder or a box; two boxes.
LOCKSTEP_HD_INLINE bool softPairModelled(int shape1, int shape2) {
  if (shape1 > shape2) return false;
  switch (shape1) {
    case kShapeSphere: return true;
    case kShapeCapsule: return shape2 != kShapeSphere;
    case kShapeEllipsoid: return shape2 == kShapeEllipsoid || shape2 == kShapeCylinder || shape2 == kShapeBox;
    case kShapeBox: return shape2 == kShapeBox;
    default: return false;
  }
}

// The most points a pair of geoms makes (MuJoCo's box pair: a clipped face's eight vertices; its
// capsule pair: 2; the others 1), and the most of any pair.
constexpr int kSoftPairSlotsMax = 8;
LOCKSTEP_HD_INLINE int softPairSlots(int shape1, int shape2) {
  return shape1 == kShapeBox && shape2 == kShapeBox ? 8
         : shape1 == kShapeCapsule && (shape2 == kShapeCapsule || shape2 == kShapeBox) ? 2
                                                                                         : 1;
}

// a where m, else b, lane by lane (a point that does not exist in a lane is b's there).
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> selectPoint(MaskOf<T> m, const SoftPoint<T>& a, const SoftPoint<T>& b) {
  SoftPoint<T> p;
  p.exists = (m & a.exists) | ((!m) & b.exists);
  p.dist = selectT(m, a.dist, b.dist);
  p.pos = selectVec3(m, a.pos, b.pos);
  p.normal = selectVec3(m, a.normal, b.normal);
  p.hint = Vec3<T>::zero();
  p.hinted = false;
  return p;
}

// MuJoCo's mju_normalize3 of v of length len: (1, 0, 0) where len is below mjMINVAL.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> softNormalized(const Vec3<T>& v, T len) {
  const MaskOf<T> tiny = len < T(kSoftMinValue);
  const T inverse = T(1) / selectT(tiny, T(1), len);
  return {{selectT(tiny, T(1), v[0] * inverse), selectT(tiny, T(0), v[1] * inverse), selectT(tiny, T(0), v[2] * inverse)}};
}

// MuJoCo's sphere pair (engine_collision_primitive.c), also the last step of its sphere-capsule and
// capsule pairs: spheres at c1 and c2 (geoms' z axes z1, z2) within margin touch along the line of
// centres, the normal from c1 to c2 (where the centres coincide, z1 x z2; where those are parallel
// too, x), the point in the middle of the penetration.
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softSpherePair(const Vec3<T>& c1, const Vec3<T>& z1, T r1, const Vec3<T>& c2,
                                               const Vec3<T>& z2, T r2, T margin) {
  SoftPoint<T> p;
  const Vec3<T> dif = c2 - c1;
  const T cdist = norm(dif);
  p.exists = !(cdist > margin + r1 + r2);
  p.dist = cdist - r1 - r2;
  const Vec3<T> z = cross(z1, z2);
  p.normal = selectVec3(cdist < T(kSoftMinValue), softNormalized(z, norm(z)), softNormalized(dif, cdist));
  p.pos = c1 + (r1 + p.dist / T(2)) * p.normal;
  p.hint = Vec3<T>::zero();
  p.hinted = false;
  return p;
}

// MuJoCo's sphere-cylinder (engine_collision_primitive.c): a sphere of radius r at c (its z axis z)
// against a cylinder at X_GC (its axis z; MuJoCo's size: radius, half-height), the normal from the
// sphere into the cylinder. A centre outside touches the nearest of the round side (the axis point
// as a sphere of the cylinder's radius), a flat cap (a plane) and a rim point; a centre inside, the
// nearer of the side and the cap.
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softSphereCylinder(const Vec3<T>& c, const Vec3<T>& z, T r, const Transform<T>& X_GC,
                                                   const Vec3<T>& size, T margin) {
  const Vec3<T> axis{{X_GC.R(0, 2), X_GC.R(1, 2), X_GC.R(2, 2)}};
  const T radius = size[0], height = size[1];
  const Vec3<T> vec = c - X_GC.p;
  const T x = dot(axis, vec);
  const Vec3<T> along = x * axis, across = vec - along;
  const T acrossSqr = dot(across, across);
  const MaskOf<T> withinHeight = absT(x) < height, withinRadius = acrossSqr < radius * radius;
  const MaskOf<T> capNearer = height - absT(x) < radius - sqrtT(acrossSqr);  // for a centre inside
  const MaskOf<T> side = withinHeight & !(withinRadius & capNearer);
  const MaskOf<T> cap = withinRadius & !side;
  const MaskOf<T> top = x > T(0);
  const SoftPoint<T> onSide = softSpherePair(c, z, r, X_GC.p + along, axis, radius, margin);
  SoftPoint<T> onCap;  // MuJoCo's plane-sphere against the cap's plane, its normal reversed
  const Vec3<T> outward = selectVec3(top, axis, T(-1) * axis);
  const T capDist = absT(x) - height;
  onCap.exists = !(capDist > margin + r);
  onCap.dist = capDist - r;
  onCap.pos = c + (onCap.dist / T(2) + r) * (T(-1) * outward);
  onCap.normal = T(-1) * outward;
  onCap.hint = Vec3<T>::zero();
  onCap.hinted = false;
  const T scale = radius / sqrtT(selectT(withinRadius, T(1), acrossSqr));
  const Vec3<T> rim = X_GC.p + selectT(top, height, -height) * axis + scale * across;
  const SoftPoint<T> onRim = softSpherePair(c, z, r, rim, axis, T(0), margin);
  return selectPoint(side, onSide, selectPoint(cap, onCap, onRim));
}

// The point x of an ellipsoid with radii size nearest a point p (both in the ellipsoid's frame; with
// p inside, nearest it from inside), the outward unit normal there and p's signed distance from the
// surface (negative inside). x = a^2 p / (a^2 + t) at the t where x is on the surface (Lagrange's
// condition; t > 0 outside, -min a^2 < t < 0 inside: unique there), found by bisection; a point
// inside on the plane of the smallest radius, where that t does not exist (the centre, for one),
// has its nearest point off that plane along that radius.
template <class T>
struct EllipsoidNearest {
  Vec3<T> x, outward;
  T signedDistance;
};
template <class T>
LOCKSTEP_HD_INLINE EllipsoidNearest<T> softEllipsoidNearest(const Vec3<T>& p, const Vec3<T>& size) {
  using M = MaskOf<T>;
  T a2[3], inside1 = T(0);
  for (int k = 0; k < 3; ++k) {
    a2[k] = size[k] * size[k];
    inside1 = inside1 + p[k] * p[k] / a2[k];
  }
  const M inside = inside1 < T(1);
  // The smallest radius's axis (the first at a tie) and its a^2.
  T small = T(0), a2min = a2[0];
  for (int k = 1; k < 3; ++k) {
    const M less = a2[k] < a2min;
    small = selectT(less, T(k), small);
    a2min = selectT(less, a2[k], a2min);
  }
  const T largest = selectT(size[0] > size[1], selectT(size[0] > size[2], size[0], size[2]),
                            selectT(size[1] > size[2], size[1], size[2]));
  // The bisection runs on s = t + min a^2 (0 < s < min a^2 inside), so that a^2 + t = (a^2 - min a^2)
  // + s keeps its digits where the root is near -min a^2 (a point near the smallest radius's plane,
  // where a capsule's deepest point lies when its segment crosses that plane inside).
  T lo = selectT(inside, T(0), a2min), hi = selectT(inside, a2min, a2min + norm(p) * largest);
  T base[3];
  for (int k = 0; k < 3; ++k) base[k] = a2[k] - a2min;
  auto excess = [&](T shifted) {  // sum (a p / (a^2 + t))^2 - 1: decreasing in t
    T f = T(-1);
    for (int k = 0; k < 3; ++k) {
      const T q = size[k] * p[k] / (base[k] + shifted);
      f = f + q * q;
    }
    return f;
  };
  constexpr int kIterations = sizeof(ScalarOf<T>) == sizeof(float) ? 40 : 80;
  for (int i = 0; i < kIterations; ++i) {
    const T shifted = T(0.5) * (lo + hi);
    const M above = excess(shifted) > T(0);
    lo = selectT(above, shifted, lo);
    hi = selectT(above, hi, shifted);
  }
  T shifted = T(0.5) * (lo + hi);
  // Derivatives (T a dual number): the bisection's bounds carry none of the root's. The tangents of
  // one Newton step on excess(s) = 0 give them (the implicit function theorem: ds = -(d excess / dp)
  // / (d excess / ds)), the value staying the bisection's.
  if constexpr (CarriesTangents<T>::value) {
    T slope = T(0);  // d excess / ds = -2 sum (a p)^2 / (a^2 - min a^2 + s)^3 < 0
    for (int k = 0; k < 3; ++k) {
      const T ap = size[k] * p[k], den = base[k] + shifted;
      slope = slope - T(2) * ap * ap / (den * den * den);
    }
    shifted = plusTangents(shifted, -(excess(shifted) / selectT(slope < T(0), slope, T(-1))));
  }
  EllipsoidNearest<T> e;
  for (int k = 0; k < 3; ++k) e.x[k] = a2[k] * p[k] / (base[k] + shifted);
  // A point inside on the smallest radius's plane: the others' coordinates at t = -min a^2, the
  // smallest radius's from the surface's equation, on the point's side (+ on the plane itself).
  T rest = T(1), pSmall = p[0];
  Vec3<T> off;
  for (int k = 0; k < 3; ++k) {
    const M isSmall = small == T(k);
    off[k] = a2[k] * p[k] / selectT(isSmall, T(1), a2[k] - a2min);
    rest = rest - selectT(isSmall, T(0), off[k] * off[k] / a2[k]);
    pSmall = selectT(isSmall, p[k], pSmall);
  }
  const M onPlane = inside & (absT(pSmall) < T(kSoftMinValue)) & (rest > T(0));
  const T height = sqrtT(selectT(rest > T(0), rest, T(0))) * sqrtT(a2min);
  for (int k = 0; k < 3; ++k) off[k] = selectT(small == T(k), selectT(pSmall < T(0), -height, height), off[k]);
  e.x = selectVec3(onPlane, off, e.x);
  const Vec3<T> gradient{{e.x[0] / a2[0], e.x[1] / a2[1], e.x[2] / a2[2]}};
  e.outward = softNormalized(gradient, norm(gradient));
  const T gap = norm(p - e.x);
  e.signedDistance = selectT(inside, -gap, gap);
  return e;
}

// A sphere (centre c, radius r) against an ellipsoid at X_GE with radii size: MuJoCo's general
// convex contact (its nativeccd; one contact, multiccd leaves ellipsoids alone), which is exact
// geometry to its tolerance: the ellipsoid's surface point nearest the centre (softEllipsoidNearest),
// the normal from the sphere into the ellipsoid along the surface normal there, the distance the
// centre's signed distance from the surface less r, the point in the middle of the penetration.
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softSphereEllipsoid(const Vec3<T>& c, T r, const Transform<T>& X_GE, const Vec3<T>& size,
                                                    T margin) {
  const EllipsoidNearest<T> e = softEllipsoidNearest(X_GE.R.invTimes(c - X_GE.p), size);
  SoftPoint<T> q;
  q.dist = e.signedDistance - r;
  q.exists = !(q.dist > margin);
  q.normal = X_GE.R * (T(-1) * e.outward);
  q.pos = c + (r + q.dist / T(2)) * q.normal;
  q.hint = Vec3<T>::zero();
  q.hinted = false;
  return q;
}

// A capsule (centre c, axis z, MuJoCo's size: radius, half-length) against an ellipsoid at X_GE:
// MuJoCo's general convex contact in exact geometry, as softCapsuleCylinder: the point of the
// capsule's segment deepest into the ellipsoid (its signed distance is convex along the segment,
// its slope the outward normal at the nearest point dotted with the segment: bisection on the
// slope's sign) as a sphere of the capsule's radius against it (softSphereEllipsoid). Where the
// segment itself enters the ellipsoid, the deepest point's nearest surface, not MuJoCo's least
// translation of the whole capsule (docs/mjcf.md).
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softCapsuleEllipsoid(const Vec3<T>& c, const Vec3<T>& z, const Vec3<T>& size,
                                                     const Transform<T>& X_GE, const Vec3<T>& radii, T margin) {
  const Vec3<T> start = X_GE.R.invTimes(c - size[1] * z - X_GE.p), d = X_GE.R.invTimes(T(T(2) * size[1]) * z);
  T lo = T(0), hi = T(1);  // the first t where the slope is positive
  for (int k = 0; k < 56; ++k) {
    const T mid = T(0.5) * (lo + hi);
    const MaskOf<T> rising = dot(softEllipsoidNearest(start + mid * d, radii).outward, d) > T(0);
    hi = selectT(rising, mid, hi);
    lo = selectT(rising, lo, mid);
  }
  const T t = T(0.5) * (lo + hi);
  return softSphereEllipsoid(c + T(T(T(2) * t - T(1)) * size[1]) * z, size[0], X_GE, radii, margin);
}

// An ellipsoid at X_GE with radii a against a box, a cylinder or another ellipsoid (shape2 at X_G2,
// MuJoCo's size2): MuJoCo's general convex contact (one contact: multiccd leaves ellipsoids alone) in
// exact geometry (convex_pairs.h): the least translation of the two apart, its direction n the normal
// from the ellipsoid to the other shape, the distance minus its length (the gap where they are apart),
// the point in the middle of the penetration from the ellipsoid's support point along n.
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softEllipsoidConvex(const Transform<T>& X_GE, const Vec3<T>& a, int shape2,
                                                    const Transform<T>& X_G2, const Vec3<T>& size2, T margin) {
  const Transform<T> X_E2 = X_GE.invTimes(X_G2);
  const ConvexOptimum<T> o =
      shape2 == kShapeBox        ? ellipsoidBoxLeast(a, X_E2.p, X_E2.R.R, size2)
      : shape2 == kShapeCylinder ? ellipsoidCylinderLeast(a, X_E2.p, X_E2.R.R.col(2), size2[0], size2[1])
                                 : ellipsoidPairLeast(a, X_E2.p, X_E2.R.R, size2);
  SoftPoint<T> q;
  q.dist = -o.f;
  q.exists = !(q.dist > margin);
  q.normal = X_GE.R * o.n;
  q.pos = X_GE * (ellipsoidSupportPoint(a, o.n) + (q.dist / T(2)) * o.n);
  q.hint = Vec3<T>::zero();
  q.hinted = false;
  return q;
}

// A capsule (centre c, axis z, MuJoCo's size: radius, half-length) against a cylinder at X_GC:
// MuJoCo's general convex contact (its nativeccd, one contact: multiccd disabled), which is exact
// geometry to its tolerance. The point of the capsule's segment deepest into the cylinder (least
// signed distance, a convex function along the segment: bisection on its slope), as a sphere of the
// capsule's radius against the cylinder (softSphereCylinder). Where the least distance is reached
// along a stretch (a segment parallel to a cap or to the axis), the stretch's middle. Where the
// segment itself enters the cylinder (a penetration deeper than the capsule's radius), the deepest
// point's nearest face, not MuJoCo's least translation (docs/mjcf.md).
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softCapsuleCylinder(const Vec3<T>& c, const Vec3<T>& z, const Vec3<T>& size,
                                                    const Transform<T>& X_GC, const Vec3<T>& cylinder, T margin) {
  const T radius = cylinder[0], height = cylinder[1];
  const Vec3<T> start = X_GC.R.invTimes(c - size[1] * z - X_GC.p), d = X_GC.R.invTimes(T(T(2) * size[1]) * z);
  // The slope's sign along the segment at t (p = start + t d, in the cylinder's frame): outside,
  // (p - its nearest point) . d; inside, the nearer face's outward normal . d.
  auto slope = [&](T t) {
    const Vec3<T> p = start + t * d;
    const T rho = sqrtT(p[0] * p[0] + p[1] * p[1]);
    const T radial = rho - radius, axial = absT(p[2]) - height;
    const T shrink = selectT(radial > T(0), radius / selectT(radial > T(0), rho, T(1)), T(1));
    const T zNearest = selectT(p[2] > height, height, selectT(p[2] < -height, -height, p[2]));
    const T outside = (T(1) - shrink) * (p[0] * d[0] + p[1] * d[1]) + (p[2] - zNearest) * d[2];
    const T inside = selectT(axial > radial, selectT(p[2] > T(0), d[2], -d[2]), p[0] * d[0] + p[1] * d[1]);
    return selectT((radial > T(0)) | (axial > T(0)), outside, inside);
  };
  // The first t where the slope is positive, and the last where it is negative: the same point
  // unless the least distance holds along a stretch.
  T lo1 = T(0), hi1 = T(1), lo2 = T(0), hi2 = T(1);
  for (int k = 0; k < 56; ++k) {
    const T mid1 = T(0.5) * (lo1 + hi1), mid2 = T(0.5) * (lo2 + hi2);
    const MaskOf<T> rising = slope(mid1) > T(0), notFalling = !(slope(mid2) < T(0));
    hi1 = selectT(rising, mid1, hi1);
    lo1 = selectT(rising, lo1, mid1);
    hi2 = selectT(notFalling, mid2, hi2);
    lo2 = selectT(notFalling, lo2, mid2);
  }
  T t = T(0.25) * (lo1 + hi1 + lo2 + hi2);
  // Derivatives (T a dual number): the bisections' bounds carry none of the root's. Within the
  // segment, where the slope crosses zero smoothly, the tangents of one Newton step on slope(t) = 0
  // give them (the implicit function theorem: dt = -(d slope / dp) / (d slope / dt), the value staying
  // the bisection's); at an end of the segment t stays where it is (no tangents). Where the least
  // distance holds along a stretch, or the slope jumps across zero (inside, between two faces), no
  // derivative is given: NaN tangents.
  if constexpr (CarriesTangents<T>::value) {
    const Vec3<T> p = start + t * d;
    const T rho = sqrtT(p[0] * p[0] + p[1] * p[1]);
    const T radial = rho - radius, axial = absT(p[2]) - height;
    const T along = p[0] * d[0] + p[1] * d[1], across = d[0] * d[0] + d[1] * d[1];
    const MaskOf<T> outside = (radial > T(0)) | (axial > T(0));
    // d slope / dt: outside, of (1 - r / rho) (p . d)_xy + (p_z - z nearest) d_z; inside, of (p . d)_xy
    // where the side is the nearer face (the cap's slope is constant).
    const T rhoOut = selectT(radial > T(0), rho, T(1));
    const T shrink = selectT(radial > T(0), radius / rhoOut, T(1));
    const T shrinkRate = selectT(radial > T(0), radius * along / (rhoOut * rhoOut * rhoOut), T(0));
    const T axialRate = selectT(absT(p[2]) > height, d[2] * d[2], T(0));
    const T rate = selectT(outside, shrinkRate * along + (T(1) - shrink) * across + axialRate,
                           selectT(axial > radial, T(0), across));
    const T value = slope(t), scale = dot(d, d);
    const MaskOf<T> interior = (t > T(1e-12)) & (t < T(1) - T(1e-12));
    const MaskOf<T> crossing = (rate > T(1e-12) * scale) & !(absT(value) > T(1e-9) * scale) &
                               !(absT(T(0.5) * (lo1 + hi1) - T(0.5) * (lo2 + hi2)) > T(1e-9));
    const T undefined = T(0) / T(0);  // NaN, tangents too
    t = plusTangents(t, selectT(interior, selectT(crossing, -(value / selectT(crossing, rate, T(1))), undefined),
                                T(0)));
  }
  return softSphereCylinder(c + T(T(T(2) * t - T(1)) * size[1]) * z, z, size[0], X_GC, cylinder, margin);
}

// MuJoCo 4's sphere-box (engine_collision_box.c, mjraw_SphereBox): a sphere of radius r at c against
// a box at X_GB with half-sizes size, the normal from the sphere into the box. A centre outside: the
// normal from the centre to the box's nearest point, the point between that and the sphere's
// deepest point. A centre inside the box: the nearest face's inward normal, its distance the face's.
template <class T>
LOCKSTEP_HD_INLINE SoftPoint<T> softSphereBox(const Vec3<T>& c, T r, const Transform<T>& X_GB, const Vec3<T>& size,
                                              T margin) {
  const Rotation<T>& R = X_GB.R;
  const Vec3<T> centre = R.invTimes(c - X_GB.p);  // the sphere's centre in the box's frame
  Vec3<T> clamped;
  for (int k = 0; k < 3; ++k)
    clamped[k] = selectT(centre[k] < -size[k], -size[k], selectT(centre[k] > size[k], size[k], centre[k]));
  const Vec3<T> toBox = clamped - centre;
  const T dist = norm(toBox);
  const Vec3<T> n = softNormalized(toBox, dist);
  const MaskOf<T> inside = !(dist > T(kSoftMinValue));
  T closest = T(2) * (size[0] + size[1] + size[2]);
  Vec3<T> face = Vec3<T>::zero();
  for (int i = 0; i < 6; ++i) {
    const T gap = absT((i % 2 ? T(1) : T(-1)) * size[i / 2] - centre[i / 2]);
    const MaskOf<T> nearer = closest > gap;
    closest = selectT(nearer, gap, closest);
    for (int k = 0; k < 3; ++k) face[k] = selectT(nearer, k == i / 2 ? (i % 2 ? T(-1) : T(1)) : T(0), face[k]);
  }
  const Vec3<T> outsidePos = T(0.5) * clamped + T(0.5) * (centre + r * n);
  const Vec3<T> insidePos = centre + ((r - closest) / T(2)) * face;
  SoftPoint<T> p;
  p.exists = !(dist - r > margin);
  p.dist = selectT(inside, -closest, dist) - r;
  p.pos = R * selectVec3(inside, insidePos, outsidePos) + X_GB.p;
  p.normal = R * selectVec3(inside, face, n);
  p.hint = Vec3<T>::zero();
  p.hinted = false;
  return p;
}

// MuJoCo's capsule-box (engine_collision_box.c, mjraw_CapsuleBox): a capsule (centre c, axis z,
// MuJoCo's size: radius, half-length) against a box at X_GB with half-sizes size, up to two points,
// each a sphere of the capsule's radius on its segment against the box (softSphereBox).
//   first    the segment's point nearest the box: of the segment's ends, those whose nearest box
//            point is on a face (clamped in at most one coordinate), and the nearest points of the
//            segment and each of the box's twelve edges (skipped where they are parallel); the
//            nearest wins, an edge only by more than mjMINVAL.
//   second   MuJoCo's heuristic along the segment from the first (secondpos, in half-lengths): by
//            the box's corner nearest, unless the segment points to or away from it, the farther
//            end, cut where the segment leaves the edge (a segment within 45 degrees of it) or the
//            faces about the corner; by the middle of an edge, where the segment crosses it (not
//            in a T), the end on the side of the face the segment is flatter to, cut where it
//            leaves that face or passes the edge's end; by an end over a face, the other end, cut
//            where the segment leaves the face's slab. None where the first point is an end inside
//            the box.
// Lane by lane: MuJoCo's integer codes become T flags (the winning candidate's kind, its box edge,
// the bits of its box corner), and its case analysis selects between the three second points.
template <class T>
LOCKSTEP_HD void softCapsuleBox(const Vec3<T>& c, const Vec3<T>& z, const Vec3<T>& capsule, const Transform<T>& X_GB,
                                const Vec3<T>& size, T margin, SoftPoint<T>* out) {
  using M = MaskOf<T>;
  const T radius = capsule[0], half = capsule[1];
  const Vec3<T> pos = X_GB.R.invTimes(c - X_GB.p), axis = X_GB.R.invTimes(z), ha = half * axis;
  T axisBit[3];  // MuJoCo's axisdir: the half-axis's signs
  for (int k = 0; k < 3; ++k) axisBit[k] = selectT(ha[k] > T(0), T(1), T(0));
  // v[(idx + shift) % 3] for a per-lane index idx in {0, 1, 2}.
  auto at = [](T idx, const T* v, int shift) {
    return selectT(idx == T(0), v[shift % 3], selectT(idx == T(1), v[(1 + shift) % 3], v[(2 + shift) % 3]));
  };
  auto atMin = [](T e, T current) { return selectT(e < current, e, current); };  // MuJoCo's "if (e1 < pos) pos = e1"

  // ---- the nearest point: kind -4 none, -3 / -1 the end at -1 / +1 over a face, 0..8 an edge
  // (3 s1 + s2: s1 where on the box's edge, s2 where on the segment; 0 one end, 1 between, 2 the other)
  T best = margin + T(2) * (radius + half + size[0] + size[1] + size[2]);
  T kind = T(-4), segmentAt = T(0), edgeAt = T(0), face = T(-1), onEdge = T(0), edgeAxis = T(0);
  T corner[3] = {T(0), T(0), T(0)};  // the bits of the box corner at the edge's end nearest
  for (int i = -1; i <= 1; i += 2) {
    const Vec3<T> end = pos + T(i) * ha;
    T clampedCount = T(0), clampedAxis = T(-1), gap2 = T(0);
    for (int j = 0; j < 3; ++j) {
      const M out1 = (end[j] < -size[j]) | (end[j] > size[j]);
      clampedCount = clampedCount + selectT(out1, T(1), T(0));
      clampedAxis = selectT(out1, T(j), clampedAxis);
      const T g = selectT(end[j] < -size[j], -size[j], selectT(end[j] > size[j], size[j], end[j])) - end[j];
      gap2 = gap2 + g * g;
    }
    const M nearer = (clampedCount < T(1.5)) & (gap2 < best);
    best = selectT(nearer, gap2, best);
    segmentAt = selectT(nearer, T(i), segmentAt);
    kind = selectT(nearer, T(-2 + i), kind);
    face = selectT(nearer, clampedAxis, face);
  }
  const T mc = half * half;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 8; ++i) {
      if (i & (1 << j)) continue;
      Vec3<T> mid{{(i & 1) ? size[0] : -size[0], (i & 2) ? size[1] : -size[1], (i & 4) ? size[2] : -size[2]}};
      mid[j] = T(0);  // the edge along axis j through corner i, from its middle
      const Vec3<T> dif = mid - pos;
      const T ma = size[j] * size[j], mb = -size[j] * ha[j], u = -size[j] * dif[j], v = dot(ha, dif);
      const T det = ma * mc - mb * mb;
      const M valid = !(absT(det) < T(kSoftMinValue));
      const T idet = T(1) / selectT(valid, det, T(1));
      T x1 = (mc * u - mb * v) * idet, x2 = (ma * v - mb * u) * idet;  // along the edge, the segment
      const M over1 = x1 > T(1), under1 = x1 < T(-1);
      x2 = selectT(over1, (v - mb) * (T(1) / mc), selectT(under1, (v + mb) * (T(1) / mc), x2));
      x1 = selectT(over1, T(1), selectT(under1, T(-1), x1));
      T s1 = selectT(over1, T(2), selectT(under1, T(0), T(1)));
      const M over2 = x2 > T(1), under2 = x2 < T(-1), again = over2 | under2;
      const T x1again = selectT(over2, (u - mb) * (T(1) / ma), (u + mb) * (T(1) / ma));
      s1 = selectT(again & (x1again > T(1)), T(2), selectT(again & (x1again < T(-1)), T(0), s1));
      x1 = selectT(again, selectT(x1again > T(1), T(1), selectT(x1again < T(-1), T(-1), x1again)), x1);
      const T s2 = selectT(over2, T(2), selectT(under2, T(0), T(1)));
      x2 = selectT(over2, T(1), selectT(under2, T(-1), x2));
      Vec3<T> gap = dif - x2 * ha;
      gap[j] = gap[j] + size[j] * x1;
      const T gap2 = dot(gap, gap);
      const M nearer = valid & (gap2 < best - T(kSoftMinValue));
      best = selectT(nearer, gap2, best);
      segmentAt = selectT(nearer, x2, segmentAt);
      edgeAt = selectT(nearer, x1, edgeAt);
      kind = selectT(nearer, T(3) * s1 + s2, kind);
      onEdge = selectT(nearer, s1, onEdge);
      edgeAxis = selectT(nearer, T(j), edgeAxis);
      for (int k = 0; k < 3; ++k)
        corner[k] = selectT(nearer, k == j ? selectT(s1 == T(2), T(1), T(0)) : T((i >> k) & 1), corner[k]);
    }
  const M found = kind > T(-3.5), byEdge = kind > T(-0.5);
  T differ[3], absHa[3];  // MuJoCo's axisdir ^ clcorner, bit by bit; |ha|
  for (int k = 0; k < 3; ++k) {
    differ[k] = absT(axisBit[k] - corner[k]);
    absHa[k] = absT(ha[k]);
  }
  const T differing = differ[0] + differ[1] + differ[2];

  // ---- by a corner: the segment not pointing to or away from it (one or two bits differ)
  const M two = differing == T(2);
  const T cornerMul = selectT(two, T(-1), T(1));
  const T de = selectT(two, T(1) + segmentAt, T(1) - segmentAt), dp = selectT(two, T(1) - segmentAt, T(1) + segmentAt);
  const T ax = selectT(differ[0] != selectT(two, T(1), T(0)), T(0),
                       selectT(differ[1] != selectT(two, T(1), T(0)), T(1), T(2)));  // the odd bit
  const T axisAx = at(ax, axis.v, 0);
  const T alongEdge = atMin(T(2) * at(ax, size.v, 0) / at(ax, absHa, 0), de) * cornerMul;
  const T alongFace =
      atMin(T(2) * at(ax, size.v, 2) / at(ax, absHa, 2), atMin(T(2) * at(ax, size.v, 1) / at(ax, absHa, 1), dp)) *
      -cornerMul;
  const T byCornerAt = selectT(axisAx * axisAx > T(0.5), alongEdge, alongFace);
  const M byCorner = byEdge & (onEdge != T(1)) & (differing > T(0.5)) & (differing < T(2.5));

  // ---- by an edge's middle: crossing it (the bits off the edge's axis differ in one place, not a T)
  T crossing[3];
  for (int k = 0; k < 3; ++k) crossing[k] = selectT(edgeAxis == T(k), T(0), differ[k]);
  const T flatter = selectT(absT(at(edgeAxis, axis.v, 1)) > absT(at(edgeAxis, axis.v, 2)), edgeAxis + T(1),
                            edgeAxis + T(2));
  const T ax2 = selectT(flatter > T(2.5), flatter - T(3), flatter);  // MuJoCo's ax2
  const M up = at(ax2, crossing, 0) == T(1);
  const T middleMul = selectT(up, T(1), T(-1));
  T middleAt = selectT(up, T(1) - segmentAt, T(1) + segmentAt);
  middleAt = atMin(T(2) * at(ax2, size.v, 0) / at(ax2, absHa, 0), middleAt);
  const T e2 = selectT(at(edgeAxis, axisBit, 0) == at(ax2, crossing, 0), T(1) - edgeAt, T(1) + edgeAt);
  middleAt = atMin(at(edgeAxis, size.v, 0) * e2 / at(edgeAxis, absHa, 0), middleAt) * middleMul;
  const M byMiddle = byEdge & (onEdge == T(1)) & (crossing[0] + crossing[1] + crossing[2] == T(1));

  // ---- by an end over a face: toward the other end, until the segment leaves the face's slab
  const T endMul = -segmentAt;
  const Vec3<T> from = pos - endMul * ha;
  T endAt = T(2);
  for (int k = 0; k < 3; ++k)
    for (int sign = 1; sign >= -1; sign -= 2) {
      const T e1 = (T(sign) * size[k] - from[k]) / ha[k] * endMul;
      endAt = selectT((face != T(k)) & (e1 > T(0)) & (e1 < endAt), e1, endAt);
    }
  endAt = endAt * endMul;
  const M byEnd = found & !byEdge & (face > T(-0.5));

  const M second = byCorner | byMiddle | byEnd;
  const T secondAt = selectT(byCorner, byCornerAt, selectT(byMiddle, middleAt, endAt)) + segmentAt;
  out[0] = softSphereBox(X_GB.R * (pos + segmentAt * ha) + X_GB.p, radius, X_GB, size, margin);
  out[0].exists = out[0].exists & found;
  out[1] = softSphereBox(X_GB.R * (pos + secondAt * ha) + X_GB.p, radius, X_GB, size, margin);
  out[1].exists = out[1].exists & second;
}

// MuJoCo 4's box pair (engine_collision_box.c, mjc_BoxBox) of boxes at X_G1, X_G2 with half-sizes
// size1, size2, within margin: the points of its eight slots.
//   axes   the separating-axis test over each box's three face normals and the nine crossings of an
//          edge of one with an edge of the other (crossings of near-parallel edges skipped), with
//          MuJoCo's rounding slack; the deepest axis wins, an edge axis only by a relative 1e-6
//          over every face axis, and the best face replaces a winning edge within about 8 degrees
//          of it unless the edge is deeper by 5% of the face's depth;
//   edge   one point midway between the supporting edges' nearest points (both edges of a box
//          tried where an axis component is too small to choose), its dist along the axis;
//   face   the winning face's box is the reference, the other box's face most opposed to its normal
//          the incident face: a point at every vertex of the incident face clipped to the reference
//          face's rectangle whose height z above the reference face is within the margin, midway
//          between the two surfaces, dist z, near-duplicates dropped.
// The clipped polygon's vertices are found as a set, lane by lane: the incident face's corners
// within the rectangle, the rectangle's corners within the incident face, and the crossings of the
// incident face's edges with the rectangle's sides (what MuJoCo's Sutherland-Hodgman clipping
// keeps), packed into the slots in that order. At a tie, a vertex within a relative 1e-12 of a side
// or an edge (boxes of one size stacked face on face, corner on corner), each vertex is taken once
// and no crossing of an edge that runs along a side is made; MuJoCo's clipping there finds the
// corners and, as its rounding falls, points along such edges (4 to 6 points for two aligned
// boxes, docs/mjcf.md).
template <class T>
LOCKSTEP_HD void softBoxPair(const Transform<T>& X_G1, const Vec3<T>& size1, const Transform<T>& X_G2,
                             const Vec3<T>& size2, T margin, SoftPoint<T>* out) {
  using M = MaskOf<T>;
  const bool single = sizeof(ScalarOf<T>) == sizeof(float);  // MuJoCo's rounding scales per precision
  const T sepEps = T(single ? 1e-6 : 1e-13), parEps = T(single ? 1e-7 : 1e-16), sgnEps = T(single ? 1e-5 : 1e-9),
          dupEps = T(single ? 1e-10 : 1e-14), edgeBias = T(1e-6), maxValue = T(1e10);  // mjMAXVAL
  // Lockstep's own: the relative band about the rectangle's sides and the incident face's edges
  // within which a vertex is on them (a tie: see the face case below).
  const T onEdge = T(single ? 1e-5 : 1e-12);
  const Mat33<T> rot = (X_G1.R.inverse() * X_G2.R).R;  // box 2's axes in box 1's frame (columns)
  const Vec3<T> p21 = X_G1.R.invTimes(X_G2.p - X_G1.p), p12 = X_G2.R.invTimes(X_G1.p - X_G2.p);
  const T septol = margin + sepEps * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2]);
  const M no = T(0) > T(1);
  auto column = [](const Mat33<T>& m, int j) { return Vec3<T>{{m.m[0][j], m.m[1][j], m.m[2][j]}}; };
  auto row = [](const Mat33<T>& m, int i) { return Vec3<T>{{m.m[i][0], m.m[i][1], m.m[i][2]}}; };
  // v[i + shift] (indices mod 3) where is[i], lane by lane.
  auto at = [](const M (&is)[3], const Vec3<T>& v, int shift) {
    return selectT(is[0], v[shift % 3], selectT(is[1], v[(1 + shift) % 3], v[(2 + shift) % 3]));
  };
  auto atVec = [](const M (&is)[3], const Vec3<T> (&v)[3], int shift) {
    return selectVec3(is[0], v[shift % 3], selectVec3(is[1], v[(1 + shift) % 3], v[(2 + shift) % 3]));
  };
  auto clip = [](T x, T lo, T hi) { return selectT(x < lo, lo, selectT(x > hi, hi, x)); };

  // ---- the separating axes: box 1's faces (codes 0-2), box 2's (3-5), edge pairs (6 + 3 i + j)
  M separated = no;
  T best = -maxValue, code = T(0);
  for (int i = 0; i < 3; ++i) {
    const T sep = absT(p21[i]) - size1[i] -
                  (absT(rot.m[i][0]) * size2[0] + absT(rot.m[i][1]) * size2[1] + absT(rot.m[i][2]) * size2[2]);
    separated = separated | (sep > septol);
    const M deeper = sep > best;
    best = selectT(deeper, sep, best);
    code = selectT(deeper, T(i), code);
  }
  for (int j = 0; j < 3; ++j) {
    const T sep = absT(p12[j]) - size2[j] -
                  (absT(rot.m[0][j]) * size1[0] + absT(rot.m[1][j]) * size1[1] + absT(rot.m[2][j]) * size1[2]);
    separated = separated | (sep > septol);
    const M deeper = sep > best;
    best = selectT(deeper, sep, best);
    code = selectT(deeper, T(3 + j), code);
  }
  const T sepFace = best, codeFace = code;
  Vec3<T> edgeAxis = Vec3<T>::zero();  // the winning edge pair's unit axis in box 1's frame, and i, j
  T edgeI = T(0), edgeJ = T(0);
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      T ax1 = -rot.m[i2][j], ax2 = rot.m[i1][j];  // e_i x (box 2's axis j), in box 1's frame
      const T norm2 = ax1 * ax1 + ax2 * ax2;
      const M valid = !(norm2 < parEps);
      const T inverse = T(1) / sqrtT(selectT(valid, norm2, T(1)));
      ax1 = ax1 * inverse;
      ax2 = ax2 * inverse;
      const T radius1 = size1[i1] * absT(ax1) + size1[i2] * absT(ax2);
      const T b1 = ax1 * rot.m[i1][j1] + ax2 * rot.m[i2][j1], b2 = ax1 * rot.m[i1][j2] + ax2 * rot.m[i2][j2];
      const T radius2 = size2[j1] * absT(b1) + size2[j2] * absT(b2);
      const T sep = absT(ax1 * p21[i1] + ax2 * p21[i2]) - radius1 - radius2;
      separated = separated | (valid & (sep > septol));
      const M deeper = valid & (sep - edgeBias * absT(sep) > best) & (sep > sepFace);
      best = selectT(deeper, sep, best);
      code = selectT(deeper, T(6 + 3 * i + j), code);
      Vec3<T> axis = Vec3<T>::zero();
      axis[i1] = ax1;
      axis[i2] = ax2;
      edgeAxis = selectVec3(deeper, axis, edgeAxis);
      edgeI = selectT(deeper, T(i), edgeI);
      edgeJ = selectT(deeper, T(j), edgeJ);
    }
  }
  Vec3<T> faceAxis = Vec3<T>::zero();  // the best face axis in box 1's frame
  for (int k = 0; k < 6; ++k) {
    Vec3<T> e = Vec3<T>::zero();
    if (k < 3) e[k] = T(1);
    faceAxis = selectVec3(codeFace == T(k), k < 3 ? e : column(rot, k - 3), faceAxis);
  }
  const M edge = (code > T(5.5)) & !((absT(dot(edgeAxis, faceAxis)) > T(0.99)) &
                                     (best < sepFace + T(0.05) * absT(sepFace) + T(kSoftMinValue)));
  code = selectT(edge, code, codeFace);
  const M touching = !separated;

  // ---- an edge pair: the nearest points of the supporting edges
  SoftPoint<T> edgePoint;
  {
    const M isI[3] = {edgeI == T(0), edgeI == T(1), edgeI == T(2)};
    const M isJ[3] = {edgeJ == T(0), edgeJ == T(1), edgeJ == T(2)};
    const Vec3<T> axis = selectVec3(dot(edgeAxis, p21) < T(0), T(-1) * edgeAxis, edgeAxis);  // box 1 to box 2
    const Vec3<T> a2 = transposeTimes(rot, axis);  // in box 2's frame
    const Vec3<T> columns[3] = {column(rot, 0), column(rot, 1), column(rot, 2)};
    const Vec3<T> d2 = atVec(isJ, columns, 0);  // box 2's edge direction; box 1's is e_i
    const T b = at(isI, d2, 0), denom = T(1) - b * b, half1 = at(isI, size1, 0), half2 = at(isJ, size2, 0);
    const M parallel = denom < T(kSoftMinValue);
    // The edges' corners: box 1's supports +axis, box 2's -axis; a component too small to choose
    // a side (at most one per box) is tried both ways.
    Vec3<T> c1, cc, ei;
    M flip1[3], flip2[3];
    M ambiguous1 = no, ambiguous2 = no;
    for (int k = 0; k < 3; ++k) {
      c1[k] = selectT(isI[k], T(0), selectT(axis[k] >= T(0), size1[k], -size1[k]));
      cc[k] = selectT(isJ[k], T(0), selectT(a2[k] >= T(0), -size2[k], size2[k]));
      ei[k] = selectT(isI[k], T(1), T(0));
      flip1[k] = (!isI[k]) & (absT(axis[k]) < sgnEps);
      flip2[k] = (!isJ[k]) & (absT(a2[k]) < sgnEps);
      ambiguous1 = ambiguous1 | flip1[k];
      ambiguous2 = ambiguous2 | flip2[k];
    }
    Vec3<T> w1 = Vec3<T>::zero(), w2 = Vec3<T>::zero();
    T nearest = maxValue;
    for (int v = 0; v < 4; ++v) {
      const bool v1 = v & 2, v2 = v & 1;
      const M tried = (v1 ? ambiguous1 : !no) & (v2 ? ambiguous2 : !no);
      Vec3<T> s1 = c1, s2 = cc;
      for (int k = 0; k < 3; ++k) {
        if (v1) s1[k] = selectT(flip1[k], -s1[k], s1[k]);
        if (v2) s2[k] = selectT(flip2[k], -s2[k], s2[k]);
      }
      const Vec3<T> c2 = rot * s2 + p21, e = c2 - s1;
      const T d1e = at(isI, e, 0), d2e = dot(d2, e);
      T s = selectT(parallel, T(0), (d1e - b * d2e) / selectT(parallel, T(1), denom));
      s = clip(s, -half1, half1);
      const T t = clip(b * s - d2e, -half2, half2);
      s = clip(d1e + b * t, -half1, half1);
      const Vec3<T> q1 = s1 + s * ei, q2 = c2 + t * d2, gap = q2 - q1;
      const T gap2 = dot(gap, gap);
      const M nearer = tried & (gap2 < nearest);
      nearest = selectT(nearer, gap2, nearest);
      w1 = selectVec3(nearer, q1, w1);
      w2 = selectVec3(nearer, q2, w2);
    }
    edgePoint.dist = dot(w2 - w1, axis);
    edgePoint.exists = !(edgePoint.dist > septol);
    edgePoint.pos = X_G1.R * (T(0.5) * (w1 + w2)) + X_G1.p;
    edgePoint.normal = X_G1.R * axis;
    edgePoint.hint = Vec3<T>::zero();
    edgePoint.hinted = false;
  }

  // ---- a face: the reference box owns it; the incident face is clipped to its rectangle, in the
  // coordinates (x, y) along the reference axes a + 1, a + 2 and z, the height above the face.
  const M ref1 = code < T(2.5);
  const T a = selectT(ref1, code, code - T(3));
  const M isA[3] = {a == T(0), a == T(1), a == T(2)};
  const Vec3<T> sizeRef = selectVec3(ref1, size1, size2), sizeInc = selectVec3(ref1, size2, size1);
  const Vec3<T> po = selectVec3(ref1, p21, p12);  // the incident box's centre in the reference frame
  Mat33<T> rinc, Rref;  // rinc(r, c): component r of the incident box's axis c, in the reference frame
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      rinc.m[r][c] = selectT(ref1, rot.m[r][c], rot.m[c][r]);
      Rref.m[r][c] = selectT(ref1, X_G1.R(r, c), X_G2.R(r, c));
    }
  const Vec3<T> rows[3] = {row(rinc, 0), row(rinc, 1), row(rinc, 2)};
  const Vec3<T> alongA = atVec(isA, rows, 0);  // the incident axes' components along the normal
  const T sgn = selectT(at(isA, po, 0) >= T(0), T(1), T(-1));
  T binc = T(0), aligned = absT(alongA[0]);  // the incident axis most aligned with it (the first at a tie)
  for (int k = 1; k < 3; ++k) {
    const M more = absT(alongA[k]) > aligned;
    aligned = selectT(more, absT(alongA[k]), aligned);
    binc = selectT(more, T(k), binc);
  }
  const M isB[3] = {binc == T(0), binc == T(1), binc == T(2)};
  const T tinc = selectT(sgn * at(isB, alongA, 0) > T(0), T(-1), T(1));  // the side facing the reference
  T cx[3], du[3], dv[3];  // the incident face's centre and half-edges
  for (int r = 0; r < 3; ++r) {
    const int shift = (r + 1) % 3;  // x: a + 1, y: a + 2, z: a
    const Vec3<T> rw = atVec(isA, rows, shift);
    cx[r] = at(isA, po, shift) + tinc * at(isB, sizeInc, 0) * at(isB, rw, 0);
    du[r] = at(isB, sizeInc, 1) * at(isB, rw, 1);
    dv[r] = at(isB, sizeInc, 2) * at(isB, rw, 2);
  }
  cx[2] = sgn * cx[2] - at(isA, sizeRef, 0);
  du[2] = sgn * du[2];
  dv[2] = sgn * dv[2];
  const T X = at(isA, sizeRef, 1), Y = at(isA, sizeRef, 2);

  // Each vertex within the margin and not within a relative 1e-7 of one kept before goes into the
  // next free slot, its (x, y) in pos and its z in dist until the slots are turned into points.
  const M face = !edge, used = face & touching;
  const T dupe2 = dupEps * (X * X + Y * Y);
  T count = T(0);
  for (int s = 0; s < kSoftPairSlotsMax; ++s) {
    out[s].exists = no;
    out[s].dist = T(0);
    out[s].pos = Vec3<T>::zero();
    out[s].hint = Vec3<T>::zero();
    out[s].hinted = false;
  }
  auto vertex = [&](T x, T y, T z, M inside) {
    M keep = used & inside & !(z > margin);
    if (!anyLane(keep)) return;
    for (int s = 0; s < kSoftPairSlotsMax; ++s) {
      const T dx = out[s].pos[0] - x, dy = out[s].pos[1] - y;
      keep = keep & !(out[s].exists & (dx * dx + dy * dy < dupe2));
    }
    for (int s = 0; s < kSoftPairSlotsMax; ++s) {
      const M put = keep & (count == T(s));
      out[s].exists = out[s].exists | put;
      out[s].dist = selectT(put, z, out[s].dist);
      out[s].pos = selectVec3(put, Vec3<T>{{x, y, T(0)}}, out[s].pos);
    }
    count = count + selectT(keep, T(1), T(0));
  };
  const T su[4] = {T(1), T(-1), T(-1), T(1)}, sv[4] = {T(1), T(1), T(-1), T(-1)};
  T corner[4][3];
  for (int k = 0; k < 4; ++k) {  // the incident face's corners within the rectangle
    for (int r = 0; r < 3; ++r) corner[k][r] = cx[r] + su[k] * du[r] + sv[k] * dv[r];
    vertex(corner[k][0], corner[k][1], corner[k][2],
           (absT(corner[k][0]) <= X + onEdge * X) & (absT(corner[k][1]) <= Y + onEdge * Y));
  }
  // The rectangle's corners within the incident face, (x, y) = c + u du + v dv with |u|, |v| <= 1
  // (the face's projection is never degenerate: its normal is the incident axis most aligned with
  // the reference normal).
  const T det = du[0] * dv[1] - du[1] * dv[0];
  for (int k = 0; k < 4; ++k) {
    const T x = su[k] * X, y = sv[k] * Y, rx = x - cx[0], ry = y - cx[1];
    const T u = (rx * dv[1] - ry * dv[0]) / det, v = (du[0] * ry - du[1] * rx) / det;
    vertex(x, y, cx[2] + u * du[2] + v * dv[2], (absT(u) <= T(1) + onEdge) & (absT(v) <= T(1) + onEdge));
  }
  for (int k = 0; k < 4; ++k) {  // the incident face's edges crossing the rectangle's sides
    const T* p = corner[k];
    const T* q = corner[(k + 1) % 4];
    for (int side = 0; side < 4; ++side) {  // x <= X, -x <= X, y <= Y, -y <= Y
      const int c = side / 2, o = 1 - c;
      const T sg = side % 2 ? T(-1) : T(1), limit = c == 0 ? X : Y, across = c == 0 ? Y : X;
      const T dp = sg * p[c] - limit, dq = sg * q[c] - limit, band = onEdge * limit;
      const M crosses = ((dp < -band) & (dq > band)) | ((dp > band) & (dq < -band));
      const T t = dp / selectT(crosses, dp - dq, T(1));
      T r[3];
      for (int i = 0; i < 3; ++i) r[i] = p[i] + t * (q[i] - p[i]);
      vertex(r[0], r[1], r[2], crosses & (absT(r[o]) <= across + onEdge * across));
    }
  }
  // The slots' points: midway between the reference face and the incident surface, the normal from
  // box 1 to box 2.
  const Vec3<T> normal = selectT(ref1, sgn, -sgn) * Vec3<T>{{at(isA, row(Rref, 0), 0), at(isA, row(Rref, 1), 0),
                                                             at(isA, row(Rref, 2), 0)}};
  const Vec3<T> pref = selectVec3(ref1, X_G1.p, X_G2.p);
  const T heightRef = at(isA, sizeRef, 0);
  for (int s = 0; s < kSoftPairSlotsMax; ++s) {
    Vec3<T> local;
    for (int k = 0; k < 3; ++k)
      local[k] = selectT(isA[k], sgn * (heightRef + T(0.5) * out[s].dist),
                         selectT(isA[(k + 2) % 3], out[s].pos[0], out[s].pos[1]));
    out[s].pos = Rref * local + pref;
    out[s].normal = normal;
  }
  out[0] = selectPoint(edge & touching, edgePoint, out[0]);
}

// MuJoCo's contacts of a pair of geoms (shape1 <= shape2: sphere-sphere, sphere-capsule,
// sphere-ellipsoid, sphere-cylinder, sphere-box, capsule-capsule, capsule-ellipsoid, capsule-cylinder,
// capsule-box, ellipsoid-ellipsoid, ellipsoid-cylinder, ellipsoid-box, box-box) at X_G1, X_G2 with
// MuJoCo's sizes, within margin: the points of every slot. A capsule pair whose axes are not
// parallel touches at the segments' nearest points; parallel ones (|det| < mjMINVAL) at the first two
// of the four // end-to-segment candidates that touch.
template <class T>
LOCKSTEP_HD void softPairPoints(int shape1, const Transform<T>& X_G1, const Vec3<T>& size1, int shape2,
                                const Transform<T>& X_G2, const Vec3<T>& size2, T margin, SoftPoint<T>* out) {
  const Vec3<T> z1{{X_G1.R(0, 2), X_G1.R(1, 2), X_G1.R(2, 2)}}, z2{{X_G2.R(0, 2), X_G2.R(1, 2), X_G2.R(2, 2)}};
  const Vec3<T>&c1 = X_G1.p, &c2 = X_G2.p;
  const T r1 = size1[0], r2 = size2[0];
  auto clamp = [](T x) { return selectT(x > T(1), T(1), selectT(x < T(-1), T(-1), x)); };
  if (shape1 == kShapeSphere && shape2 == kShapeSphere) {
    out[0] = softSpherePair(c1, z1, r1, c2, z2, r2, margin);
    return;
  }
  if (shape1 == kShapeSphere && shape2 == kShapeBox) {
    out[0] = softSphereBox(c1, r1, X_G2, size2, margin);
    return;
  }
  if (shape1 == kShapeCapsule && shape2 == kShapeBox) {
    softCapsuleBox(c1, z1, size1, X_G2, size2, margin, out);
    return;
  }
  if (shape1 == kShapeBox) {
    softBoxPair(X_G1, size1, X_G2, size2, margin, out);
    return;
  }
  if (shape1 == kShapeEllipsoid) {
    out[0] = softEllipsoidConvex(X_G1, size1, shape2, X_G2, size2, margin);
    return;
  }
  if (shape2 == kShapeEllipsoid) {
    out[0] = shape1 == kShapeSphere ? softSphereEllipsoid(c1, r1, X_G2, size2, margin)
                                    : softCapsuleEllipsoid(c1, z1, size1, X_G2, size2, margin);
    return;
  }
  if (shape2 == kShapeCylinder) {
    out[0] = shape1 == kShapeSphere ? softSphereCylinder(c1, z1, r1, X_G2, size2, margin)
                                    : softCapsuleCylinder(c1, z1, size1, X_G2, size2, margin);
    return;
  }
  if (shape1 == kShapeSphere) {  // the capsule's nearest point to the sphere's centre
    const Vec3<T> axis = size2[1] * z2;
    const T x = clamp(dot(axis, c1 - c2) / dot(axis, axis));
    out[0] = softSpherePair(c1, z1, r1, c2 + x * axis, z2, r2, margin);
    return;
  }
  const Vec3<T> a1 = size1[1] * z1, a2 = size2[1] * z2, dif = c1 - c2;
  const T ma = dot(a1, a1), mb = -dot(a1, a2), mc = dot(a2, a2), u = -dot(a1, dif), v = dot(a2, dif);
  const T det = ma * mc - mb * mb;
  // Not parallel: the segments' nearest points (x1, x2 in [-1, 1] along a1, a2).
  const MaskOf<T> general = !(absT(det) < T(kSoftMinValue));
  const T safeDet = selectT(general, det, T(1));
  T x1 = (mc * u - mb * v) / safeDet, x2 = (ma * v - mb * u) / safeDet;
  const MaskOf<T> over1 = x1 > T(1), under1 = x1 < T(-1);
  x2 = selectT(over1, (v - mb) / mc, selectT(under1, (v + mb) / mc, x2));
  x1 = selectT(over1, T(1), selectT(under1, T(-1), x1));
  const MaskOf<T> over2 = x2 > T(1), under2 = x2 < T(-1);
  x1 = selectT(over2, clamp((u - mb) / ma), selectT(under2, clamp((u + mb) / ma), x1));
  x2 = selectT(over2, T(1), selectT(under2, T(-1), x2));
  out[0] = softSpherePair(c1 + x1 * a1, z1, r1, c2 + x2 * a2, z2, r2, margin);
  out[1] = out[0];
  out[1].exists = T(0) > T(1);
  if (allLanes(general)) return;
  // Parallel: each end of one against the other's segment (x1 = 1, x1 = -1, x2 = 1, x2 = -1), the first
  // two that touch.
  SoftPoint<T> first = out[0], second = out[1];
  first.exists = second.exists;
  T count = T(0);
  for (int c = 0; c < 4; ++c) {
    const T sign = (c & 1) ? T(-1) : T(1);
    const Vec3<T> s1 = c < 2 ? c1 + sign * a1 : c1 + clamp((u - sign * mb) / ma) * a1;
    const Vec3<T> s2 = c < 2 ? c2 + clamp((v - sign * mb) / mc) * a2 : c2 + sign * a2;
    const SoftPoint<T> candidate = softSpherePair(s1, z1, r1, s2, z2, r2, margin);
    first = selectPoint(candidate.exists & (count < T(0.5)), candidate, first);
    second = selectPoint(candidate.exists & (count > T(0.5)) & (count < T(1.5)), candidate, second);
    count += selectT(candidate.exists, T(1), T(0));
  }
  out[0] = selectPoint(general, out[0], first);
  out[1] = second;
  out[1].exists = second.exists & (!general);
}

// rows[e] += sign * (the velocity Jacobian of a point P fixed on body b) for the rows of a contact
// frame (frame: the normal, then the tangents t1, t2 where it has them): rows 0 .. linear - 1 the
// velocity of P along frame[e], then rows linear .. linear + angular - 1 the angular velocity about
// frame[e - linear] (MuJoCo's rotational rows of torsional and rolling friction), nu apart; for
// every speed j of b and of its ancestors (none for Ground), H_j's velocity of P once for all rows.
template <class T>
LOCKSTEP_HD_INLINE void softAddPointJacobian(const ModelView<T>& model, const Workspace<T>& ws, int b, const Vec3<T>& P,
                                             const Vec3<T>* frame, int linear, int angular, T sign, Strided<T> rows) {
  const int nu = model.sizes.nu;
  for (int a = b; a >= 0; a = model.body[a].parent) {
    const BodyTopology topo = model.body[a];
    const Vec3<T> r = P - bodyOrigin(ws, a);
    for (int k = 0; k < topo.nu; ++k) {
      const SpatialVec<T> H = loadSpatialVec<T>(ws.H(topo.uOffset + k));
      const Vec3<T> v = H.lin + cross(H.ang, r);
      for (int e = 0; e < linear + angular; ++e) {
        const Strided<T> row = rows + std::int64_t(e) * nu;
        const T x = e < linear ? dot(frame[e], v) : dot(frame[e - linear], H.ang);
        row[topo.uOffset + k] = T(row[topo.uOffset + k]) + sign * x;
      }
    }
  }
}

// The velocity in Ground of the point of body b (Ground for b < 0) at P, after computeKinematics.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> softPointVelocity(const Workspace<T>& ws, int b, const Vec3<T>& P) {
  if (b < 0) return Vec3<T>::zero();
  return shiftVelocityBy(bodyVelocity(ws, b), P - bodyOrigin(ws, b)).lin;
}
// The angular velocity in Ground of body b (Ground for b < 0), after computeKinematics.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> softBodyAngularVelocity(const Workspace<T>& ws, int b) {
  if (b < 0) return Vec3<T>::zero();
  return bodyVelocity(ws, b).ang;
}

// The Jacobian rows of a contact point P in its frame (softAddPointJacobian's rows, linear then
// angular): the velocity of P on body2 minus that on body1 (body1 -1 for a plane contact: Ground),
// and body2's angular velocity minus body1's (MuJoCo's mj_jacDifPair).
template <class T>
LOCKSTEP_HD_INLINE void softContactJacobian(const ModelView<T>& model, const Workspace<T>& ws, int body1, int body2,
                                            const Vec3<T>& P, const Vec3<T>* frame, int linear, int angular,
                                            Strided<T> rows) {
  for (int j = 0; j < (linear + angular) * model.sizes.nu; ++j) rows[j] = T(0);
  softAddPointJacobian(model, ws, body2, P, frame, linear, angular, T(1), rows);
  softAddPointJacobian(model, ws, body1, P, frame, linear, angular, T(-1), rows);
}

// The law of plane contact i and of soft limit i, from their per-world parameters.
// (Plane and pair contacts' laws have one layout: friction solref[2] solimp[5] margin gap impratio
// timestep invweight torsional rolling.)
template <class T>
LOCKSTEP_HD_INLINE SoftLaw<T> softContactLaw(Strided<const T> p) {
  return {{p[1], p[2]}, {p[3], p[4], p[5], p[6], p[7]}, T(p[8]) - T(p[9]), p[11]};
}
template <class T>
LOCKSTEP_HD_INLINE SoftLaw<T> planeContactLaw(const WorldParams<T>& params, int i) {
  return softContactLaw<T>(planeContactLawAt(params, i));
}
template <class T>
LOCKSTEP_HD_INLINE SoftLaw<T> softLimitLaw(const WorldParams<T>& params, int i) {
  const Strided<const T> p = softLimitLawAt(params, i);  // lower upper margin solref[2] solimp[5] timestep invweight
  return {{p[3], p[4]}, {p[5], p[6], p[7], p[8], p[9]}, p[2], p[10]};
}

// The law at one pos, shared by the rows there (a pyramid's four edges): the impedance d, the
// damping B, and K d (pos - margin); a row's aref = -B (J u) - K d (pos - margin) and R (diagApprox).
template <class T>
struct SoftPointLaw {
  T d, B, Kdp;
  LOCKSTEP_HD_INLINE T aref(T velocity) const { return -B * velocity - Kdp; }
  LOCKSTEP_HD_INLINE T R(T diagApprox) const {
    const T r = (T(1) - d) * diagApprox / d;
    return selectT(r < T(kSoftMinValue), T(kSoftMinValue), r);
  }
};
template <class T>
LOCKSTEP_HD_INLINE SoftPointLaw<T> softPointLaw(const SoftLaw<T>& law, T pos) {
  SoftPointLaw<T> l;
  l.d = softImpedance(law, pos);
  T K;
  softStiffnessDamping(law, &K, &l.B);
  l.Kdp = K * l.d * (pos - law.margin);
  return l;
}

// A contact's friction coefficients as MuJoCo's contact holds them (mj_assignFriction): the sliding
// friction along t1 and t2, the torsional, the rolling about t1 and t2, each at least MuJoCo's
// mjMINMU. (The law's friction, torsional and rolling: lawParams 0, 13 and 14.)
template <class T>
LOCKSTEP_HD_INLINE void softFriction(Strided<const T> lawParams, T (&mu)[5]) {
  const T given[5] = {lawParams[0], lawParams[0], lawParams[13], lawParams[14], lawParams[14]};
  for (int k = 0; k < 5; ++k) mu[k] = selectT(given[k] < T(kSoftMinFriction), T(kSoftMinFriction), given[k]);
}

// The rows of one contact point q between body1 and body2 (body1 -1: Ground) from row r0 on, from
// its frame's rows (softContactJacobian: the velocity along n, t1, t2, then the angular velocity
// about n, t1, t2, as condim asks): its normal's (condim 1); its pyramid's edges J_n + mu_k J_k,
// J_n - mu_k J_k for k = 1 .. condim - 1 (MuJoCo's order and arithmetic, row by row) with one R: R0
// from the first edge's diagApprox (tran (1 + mu1^2)), then Rpy = 2 mu1^2 / impratio R0; or its
// elliptic cone's condim rows, the frame's (R0 from diagApprox tran, the first tangent's R1 = R0 /
// impratio, row k's R1 mu1^2 / mu_k^2, the frictional rows' aref without the position term, and in
// the rows' first value the map to MuJoCo's regular cone: mu = mu1 sqrt(R1 / R0), then mu_k); and
// the point into its softContact entry (its force comes with the solve).
template <class T>
LOCKSTEP_HD void softPointRows(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws, int body1,
                               int body2, int condim, bool elliptic, const SoftPoint<T>& q, const SoftLaw<T>& law,
                               Strided<const T> lawParams, int r0, Strided<T> out) {
  const Sizes& s = model.sizes;
  const Strided<T> rows = ws.softRows(), J = ws.softJ();
  const T impratio = lawParams[10], tran = lawParams[12];
  out[0] = selectT(q.exists, T(1), T(0));
  out[1] = q.dist;
  storeVec3(out + 2, q.pos);
  storeVec3(out + 5, q.normal);
  const int perPoint = softRowsPerPoint(condim, elliptic);
  if (!anyLane(q.exists)) {  // no rows in any lane: the solve skips them
    for (int e = 0; e < perPoint; ++e) rows[4 * (r0 + e) + 3] = T(0);
    return;
  }
  const T exists = selectT(q.exists, T(1), T(0));
  const Strided<T> J0 = J + std::int64_t(r0) * s.nu;
  const SoftPointLaw<T> pl = softPointLaw(law, q.dist);
  // The frame's rows and their J u: the point's velocity on body2 minus that on body1 along n, t1,
  // t2; body2's angular velocity minus body1's about n, t1, t2.
  Vec3<T> frame[3] = {q.normal, Vec3<T>::zero(), Vec3<T>::zero()};
  if (condim > 1) softContactTangents(q.normal, q.hint, q.hinted, &frame[1], &frame[2]);
  const int linear = condim < 3 ? condim : 3;
  softContactJacobian<T>(model, ws, body1, body2, q.pos, frame, linear, condim - linear, J0);
  const Vec3<T> velocity = softPointVelocity(ws, body2, q.pos) - softPointVelocity(ws, body1, q.pos);
  T Ju[kSoftConeRowsMax];
  for (int k = 0; k < linear; ++k) Ju[k] = dot(frame[k], velocity);
  if (condim > 3) {  // the relative angular velocity, for the torsional and rolling rows
    const Vec3<T> spin = softBodyAngularVelocity(ws, body2) - softBodyAngularVelocity(ws, body1);
    for (int k = 3; k < condim; ++k) Ju[k] = dot(frame[k - 3], spin);
  }
  if (perPoint == 1) {
    rows[4 * r0] = q.dist - law.margin;
    rows[4 * r0 + 1] = pl.aref(Ju[0]);
    rows[4 * r0 + 2] = T(1) / pl.R(tran);
    rows[4 * r0 + 3] = exists;
    return;
  }
  T mu[5];
  softFriction(lawParams, mu);
  const T impr = selectT(impratio < T(kSoftMinValue), T(kSoftMinValue), impratio);
  if (elliptic) {
    const T R0 = pl.R(tran), R1 = R0 / impr;
    for (int e = 0; e < condim; ++e) {
      const Strided<T> row = rows + 4 * (r0 + e);
      row[0] = e == 0 ? mu[0] * sqrtT(R1 / R0) : mu[e - 1];
      row[1] = e == 0 ? pl.aref(Ju[0]) : -pl.B * Ju[e];
      row[2] = T(1) / (e == 0 ? R0 : e == 1 ? R1 : R1 * mu[0] * mu[0] / (mu[e - 1] * mu[e - 1]));
      row[3] = exists;
    }
    return;
  }
  // The pyramid's edges in place of the frame's rows, the last first: edge pair k lands on rows
  // 2k - 2 and 2k - 1, past the rows 0 .. k - 1 still to be read (k = 1: on rows 0 and 1, each
  // entry read before it is written).
  for (int k = condim - 1; k >= 1; --k) {
    const Strided<T> normal = J0, along = J0 + std::int64_t(k) * s.nu;
    const Strided<T> plus = J0 + std::int64_t(2 * k - 2) * s.nu, minus = J0 + std::int64_t(2 * k - 1) * s.nu;
    for (int j = 0; j < s.nu; ++j) {
      const T n = normal[j], a = along[j];
      plus[j] = n + mu[k - 1] * a;
      minus[j] = n - mu[k - 1] * a;
    }
    rows[4 * (r0 + 2 * k - 2) + 1] = pl.aref(Ju[0] + mu[k - 1] * Ju[k]);
    rows[4 * (r0 + 2 * k - 1) + 1] = pl.aref(Ju[0] - mu[k - 1] * Ju[k]);
  }
  const T R0 = pl.R(T(tran + mu[0] * mu[0] * tran));  // the first edge's
  const T Rpy = T(2) * mu[0] * mu[0] * (R0 / impr);
  for (int e = 0; e < perPoint; ++e) {
    rows[4 * (r0 + e)] = q.dist - law.margin;
    rows[4 * (r0 + e) + 2] = T(1) / Rpy;
    rows[4 * (r0 + e) + 3] = exists;
  }
}

// The rows of one contact point q under the compliant law, from row r0 on: the frame's three (n, t1,
// t2: softContactJacobian, the velocity of the point on body2 minus that on body1, body1 -1 for a
// plane contact's Ground), aref = -(J u) / h, and the block's parameters (softCompliantForceInto)
// into softCompliance, from its Hertz radius R (a sphere's or a capsule's against a plane; a pair's
// R1 R2 / (R1 + R2)), its material (E, c, vs, lagged: planeContactCompliance, pairContactCompliance),
// friction and step h (lawParams 0 and 11). A point is a block where it is within the margin or
// could reach the other surface within the step: at its relative speed (the normal speed less mu
// times the slip speed, as the similar approximation reads it) and twice the relative acceleration
// toward it without contact (ws.A_GB: the sweep's); the point into its softContact entry (its force
// comes with the solve).
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> softPointAcceleration(const Workspace<T>& ws, int b, const Vec3<T>& P) {
  if (b < 0) return Vec3<T>::zero();
  const SpatialVec<T> A = bodyAcceleration<T>(Strided<const T>(ws.A_GB()), b), V = bodyVelocity(ws, b);
  const Vec3<T> r = P - bodyOrigin(ws, b);
  return A.lin + cross(A.ang, r) + cross(V.ang, cross(V.ang, r));
}
template <class T>
LOCKSTEP_HD void softCompliantPointRows(const ModelView<T>& model, const Workspace<T>& ws, int body1, int body2,
                                        SoftPoint<T> q, Strided<const T> lawParams, Strided<const T> material, T R,
                                        int r0, Strided<T> out) {
  const Strided<T> rows = ws.softRows(), C = ws.softCompliance();
  const T h = lawParams[11], margin = T(lawParams[8]) - T(lawParams[9]);
  Vec3<T> frame[3] = {q.normal, Vec3<T>::zero(), Vec3<T>::zero()};
  softContactTangents(q.normal, q.hint, q.hinted, &frame[1], &frame[2]);
  // (The similar approximation shifts the normal velocity by -mu |v_t|: a sliding point's force
  // begins that much earlier.)
  const Vec3<T> velocity = softPointVelocity(ws, body2, q.pos) - softPointVelocity(ws, body1, q.pos);
  const T vn = dot(frame[0], velocity), mu = lawParams[0];
  const Vec3<T> vt = velocity - vn * frame[0];
  const T an = dot(frame[0], softPointAcceleration(ws, body2, q.pos) - softPointAcceleration(ws, body1, q.pos));
  const T reach = q.dist + h * (vn - mu * norm(vt)) + T(2) * h * h * selectT(an < T(0), an, T(0));
  q.exists = q.exists & ((q.dist < margin) | (reach < T(0)));
  out[0] = selectT(q.exists, T(1), T(0));
  out[1] = q.dist;
  storeVec3(out + 2, q.pos);
  storeVec3(out + 5, q.normal);
  if (!anyLane(q.exists)) {  // no rows in any lane: the solve skips them
    for (int e = 0; e < 3; ++e) rows[4 * (r0 + e) + 3] = T(0);
    return;
  }
  softContactJacobian<T>(model, ws, body1, body2, q.pos, frame, 3, 0, ws.softJ() + std::int64_t(r0) * model.sizes.nu);
  for (int e = 0; e < 3; ++e) {
    rows[4 * (r0 + e)] = T(0);
    rows[4 * (r0 + e) + 1] = -dot(frame[e], velocity) / h;
    rows[4 * (r0 + e) + 2] = T(0);
    rows[4 * (r0 + e) + 3] = selectT(q.exists, T(1), T(0));
  }
  const T k = T(0.5) * powT(T(material[0]), T(2.0 / 3.0)), K = T(4.0 / 3.0) * k * sqrtT(R * k);
  const T d = T(1.5) * T(material[1]), x0 = selectT(q.dist < T(0), -q.dist, T(0)), damping = T(1) - d * vn;
  C[4 * r0] = K * h * h * h;                          // A = K h^3
  C[4 * r0 + 1] = -q.dist / (h * h);                  // c = x0 / h^2
  C[4 * r0 + 2] = d * h;                              // delta = d h
  C[4 * r0 + 3] = material[3];                        // lagged
  C[4 * (r0 + 1)] = mu;                               // mu
  C[4 * (r0 + 1) + 1] = T(material[2]) / h;           // eps = vs / h
  C[4 * (r0 + 1) + 2] = K * x0 * sqrtT(x0) * selectT(damping > T(0), damping, T(0));  // F0
}

// MuJoCo's geom_rbound: the radius about the geom's centre of a sphere that holds it.
template <class T>
LOCKSTEP_HD_INLINE T softBoundingRadius(int shape, const Vec3<T>& size) {
  return shape == kShapeCapsule    ? size[0] + size[1]
         : shape == kShapeBox      ? sqrtT(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
         : shape == kShapeCylinder ? sqrtT(size[0] * size[0] + size[1] * size[1])
                                   : size[0];
}

// The compliant law's broad phase: whether a pair's point can make a block in no lane
// (softCompliantPointRows: a point within the margin, or one whose reach, dist + h (vn - mu |vt|) +
// 2 h^2 min(an, 0), is below 0). With D the distance between the geoms' centres and rb the sum of
// their bounding radii, dist >= D - rb; the point lies within L = D + rb of both centres, so that the
// relative speed and acceleration there are at most v1 + v2 and a1 + a2 (softMotionBound), and the
// reach at least D - rb - h (1 + mu) (v1 + v2) - 2 h^2 (a1 + a2). The bounds take each vector's
// components' magnitudes summed (at least its length).
template <class T>
LOCKSTEP_HD_INLINE void softMotionBound(const Workspace<T>& ws, int b, T r, T* speed, T* acceleration) {
  // Body b's points within r of its origin: |v + w x p| <= |v| + |w| r, and |a + alpha x p + w x (w
  // x p)| <= |a| + (|alpha| + |w|^2) r (Ground's: 0).
  if (b < 0) {
    *speed = *acceleration = T(0);
    return;
  }
  const SpatialVec<T> V = bodyVelocity(ws, b), A = bodyAcceleration<T>(Strided<const T>(ws.A_GB()), b);
  auto sum = [](const Vec3<T>& x) { return absT(x[0]) + absT(x[1]) + absT(x[2]); };
  const T w = sum(V.ang);
  *speed = sum(V.lin) + w * r;
  *acceleration = sum(A.lin) + (sum(A.ang) + w * w) * r;
}
template <class T>
LOCKSTEP_HD_INLINE bool softPairOutOfReach(const Workspace<T>& ws, const PairContactTopology& topo,
                                           Strided<const T> geom, const Vec3<T>& size1, const Vec3<T>& size2,
                                           Strided<const T> lawParams) {
  const Vec3<T> local1 = loadVec3<T>(geom + 9), local2 = loadVec3<T>(geom + 24);
  const Vec3<T> c1 = bodyPose(ws, topo.body1) * local1, c2 = bodyPose(ws, topo.body2) * local2;
  const T D = norm(c2 - c1), rb = softBoundingRadius(topo.shape1, size1) + softBoundingRadius(topo.shape2, size2);
  const T L = D + rb, h = lawParams[11], mu = lawParams[0], margin = T(lawParams[8]) - T(lawParams[9]);
  auto offset = [](const Vec3<T>& x) { return absT(x[0]) + absT(x[1]) + absT(x[2]); };  // |centre - origin|
  T v1, a1, v2, a2;
  softMotionBound(ws, topo.body1, L + offset(local1), &v1, &a1);
  softMotionBound(ws, topo.body2, L + offset(local2), &v2, &a2);
  // (Far above the rounding of the narrow phase's dist and reach, so that a lane this skips makes no
  // block there either: a world steps alike alone and in any pack.)
  const T slack = T(1024) * machineEpsilon<T>() * (offset(c1) + offset(c2) + L);
  const T gap = D - rb - slack, motion = h * (T(1) + mu) * (v1 + v2) + T(2) * h * h * (a1 + a2);
  return allLanes((gap > margin) & (gap - T(1 + 1.0 / 1024) * motion > T(0)));
}

// A pair contact's geoms in Ground (MuJoCo's geom_xpos, geom_xmat).
template <class T>
LOCKSTEP_HD_INLINE void pairGeomPoses(const Workspace<T>& ws, const PairContactTopology& topo, Strided<const T> geom,
                                      Transform<T>* X_G1, Transform<T>* X_G2) {
  *X_G1 = bodyPose(ws, topo.body1) * loadTransform<T>(geom);
  *X_G2 = bodyPose(ws, topo.body2) * loadTransform<T>(geom + 15);
}

// The rows of the world's plane contacts, pair contacts and soft limits at its q, u, after
// computeKinematics: softJ, and per row (softRows) pos - margin (a cone's rows: the map to its
// regular cone, softPointRows), aref, D and whether it exists; the
// points' frames and distances into the field softContact (their forces come with the solve). A
// pair whose bounding spheres (MuJoCo's rbound) are apart by more than its margin in every lane
// makes no rows, and its points read 0 (as the points of a pair that does not touch do in any lane).
template <class T>
LOCKSTEP_HD void softConstraintRows(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                   Strided<const T> qacc0) {
  const Sizes& s = model.sizes;
  const Strided<T> rows = ws.softRows(), J = ws.softJ();
  for (int r = 0; r < s.nSoftRows; ++r) rows[4 * r + 3] = T(0);
  Strided<const T> u = w.u;
  for (int i = 0; i < s.nPlaneContacts; ++i) {
    const PlaneContactTopology topo = model.planeContact[i];
    const Strided<const T> geom = planeContactGeomAt(w.params, i), lawParams = planeContactLawAt(w.params, i);
    const SoftLaw<T> law = planeContactLaw(w.params, i);
    const Transform<T> X_GG = bodyPose(ws, topo.body) * loadTransform<T>(geom);
    const Vec3<T> n = loadVec3<T>(geom + 15), p = loadVec3<T>(geom + 18);
    SoftPoint<T> points[8];
    if (topo.law == kLawCompliant) {  // a sphere's or a capsule's points, whatever their distance
      softPlanePoints<T>(topo.shape, X_GG, loadVec3<T>(geom + 12), n, p, T(INFINITY), points);
      for (int k = 0; k < topo.points; ++k) {
        points[k].normal = n;
        softCompliantPointRows(model, ws, -1, topo.body, points[k], lawParams, planeContactComplianceAt(w.params, i),
                               T(geom[12]), topo.row + 3 * k, softContactAt(w, topo.point + k));
      }
      continue;
    }
    // The collision finds the points within the margin; only those within margin - gap (MuJoCo's
    // includemargin) become rows.
    softPlanePoints<T>(topo.shape, X_GG, loadVec3<T>(geom + 12), n, p, T(lawParams[8]), points);
    const int perPoint = softRowsPerPoint(topo.condim, topo.elliptic);
    for (int k = 0; k < topo.points; ++k) {
      points[k].exists = points[k].exists & (points[k].dist < law.margin);
      points[k].normal = n;
      softPointRows(model, w, ws, -1, topo.body, topo.condim, topo.elliptic, points[k], law, lawParams,
                    topo.row + k * perPoint, softContactAt(w, topo.point + k));
    }
  }
  for (int i = 0; i < s.nPairContacts; ++i) {
    const PairContactTopology topo = model.pairContact[i];
    const Strided<const T> geom = pairContactGeomAt(w.params, i), lawParams = pairContactLawAt(w.params, i);
    const SoftLaw<T> law = softContactLaw<T>(lawParams);
    const Vec3<T> size1 = loadVec3<T>(geom + 12), size2 = loadVec3<T>(geom + 27);
    const T margin = lawParams[8];
    SoftPoint<T> points[kSoftPairSlotsMax];
    if (topo.law == kLawCompliant) {  // two spheres or capsules: their nearest points, whatever their distance
      if (softPairOutOfReach(ws, topo, geom, size1, size2, lawParams)) {
        // No block in any lane: its points read 0 (as below where a point makes none), written only
        // where some lane had one.
        for (int k = 0; k < topo.points; ++k) {
          const Strided<T> out = softContactAt(w, topo.point + k);
          if (anyLane(T(out[0]) > T(0.5)))
            for (int c = 0; c < 8; ++c) out[c] = T(0);
        }
        continue;
      }
      Transform<T> X_G1, X_G2;
      pairGeomPoses(ws, topo, geom, &X_G1, &X_G2);
      softPairPoints<T>(topo.shape1, X_G1, size1, topo.shape2, X_G2, size2, T(INFINITY), points);
      const T R = size1[0] * size2[0] / (size1[0] + size2[0]);  // Hertz's relative radius
      for (int k = 0; k < topo.points; ++k) {
        const Strided<T> out = softContactAt(w, topo.point + k);
        softCompliantPointRows(model, ws, topo.body1, topo.body2, points[k], lawParams,
                               pairContactComplianceAt(w.params, i), R, topo.row + 3 * k, out);
        // As every pair point: all values 0 in a lane where it makes no block (its force too, below).
        const MaskOf<T> block = T(out[0]) > T(0.5);
        for (int c = 1; c < 8; ++c) out[c] = selectT(block, T(out[c]), T(0));
      }
      continue;
    }
    // The broad phase from the geoms' centres alone; their frames only for pairs within reach.
    const Vec3<T> c1 = bodyPose(ws, topo.body1) * loadVec3<T>(geom + 9);
    const Vec3<T> c2 = bodyPose(ws, topo.body2) * loadVec3<T>(geom + 24);
    // MuJoCo's filterSphere: squared distance against the squared bound (no square root).
    const Vec3<T> dif = c1 - c2;
    const T bound = softBoundingRadius(topo.shape1, size1) + softBoundingRadius(topo.shape2, size2) + margin;
    const MaskOf<T> near = !(dot(dif, dif) > bound * bound);
    bool touching = false;
    if (anyLane(near)) {
      Transform<T> X_G1, X_G2;
      pairGeomPoses(ws, topo, geom, &X_G1, &X_G2);
      softPairPoints<T>(topo.shape1, X_G1, size1, topo.shape2, X_G2, size2, margin, points);
      for (int k = 0; k < topo.points; ++k) {
        points[k].exists = points[k].exists & near & (points[k].dist < law.margin);
        touching = touching || anyLane(points[k].exists);
      }
    }
    const int perPoint = softRowsPerPoint(topo.condim, topo.elliptic);
    for (int k = 0; k < topo.points; ++k) {
      const Strided<T> out = softContactAt(w, topo.point + k);
      if (!touching) {
        // A pair point reads 0 in every value of a lane where it does not touch (below, and its
        // force from the solve): one that touched nowhere last time is all zeros already, and is
        // left alone (most pairs, most of the time: no writes).
        if (anyLane(T(out[0]) > T(0.5)))
          for (int c = 0; c < kSoftContactValues; ++c) out[c] = T(0);
        continue;
      }
      SoftPoint<T>& q = points[k];
      // Every value of a point that does not touch reads 0 in its lane, whatever its neighbours do.
      q.dist = selectT(q.exists, q.dist, T(0));
      q.pos = selectVec3(q.exists, q.pos, Vec3<T>::zero());
      const Vec3<T> x{{T(1), T(0), T(0)}};
      q.normal = selectVec3(q.exists, q.normal, x);
      softPointRows(model, w, ws, topo.body1, topo.body2, topo.condim, topo.elliptic, q, law, lawParams,
                    topo.row + k * perPoint, out);
      out[5] = selectT(q.exists, T(out[5]), T(0));
    }
  }
  for (int i = 0; i < s.nSoftLimits; ++i) {
    const SoftLimitTopology topo = model.softLimit[i];
    const Strided<const T> p = softLimitLawAt(w.params, i);
    const SoftLaw<T> law = softLimitLaw(w.params, i);
    const T q = w.q[topo.q];
    for (int side = 0; side < 2; ++side) {  // lower (J = +1), upper (J = -1)
      const int r = topo.row + side;
      const T dist = side == 0 ? q - T(p[0]) : T(p[1]) - q;
      const T sign = side == 0 ? T(1) : T(-1);
      // Its Jacobian row, written where some lane has the row (the solve reads no other).
      auto jacobian = [&] {
        const Strided<T> row = J + std::int64_t(r) * s.nu;
        for (int j = 0; j < s.nu; ++j) row[j] = T(0);
        row[topo.u] = sign;
      };
      // A side whose bound is infinite never engages.
      if (topo.law == kLawCompliant) {  // the stop's side as a compliant block (softCompliantForceInto)
        const Strided<const T> stop = softLimitComplianceAt(w.params, i);
        const T h = law.timestep, v = sign * T(u[topo.u]), a = sign * T(qacc0[topo.u]);
        const Strided<T> C = ws.softCompliance();
        rows[4 * r] = T(0);
        rows[4 * r + 1] = -v / h;
        rows[4 * r + 2] = T(0);
        // (as a contact point's: within the margin, or could reach the bound within the step)
        const T reach = dist + h * v + T(2) * h * h * selectT(a < T(0), a, T(0));
        const MaskOf<T> exists = (dist < law.margin) | (reach < T(0));
        rows[4 * r + 3] = selectT(exists, T(1), T(0));
        if (anyLane(exists)) jacobian();
        C[4 * r] = T(stop[0]) * h * h;  // A = k h^2
        C[4 * r + 1] = -dist / (h * h);  // c = x0 / h^2
        C[4 * r + 2] = T(stop[1]) * h;   // delta = d h
        C[4 * r + 3] = T(0);
        continue;
      }
      const MaskOf<T> within = dist < law.margin;
      rows[4 * r + 3] = selectT(within, T(1), T(0));
      if (!anyLane(within)) continue;
      jacobian();
      const SoftPointLaw<T> pl = softPointLaw(law, dist);
      rows[4 * r] = dist - law.margin;
      rows[4 * r + 1] = pl.aref(T(sign * T(u[topo.u])));
      rows[4 * r + 2] = T(1) / pl.R(T(p[11]));
    }
  }
}

// Whether x is nonzero in some lane (a dual: its value or a tangent): a structural zero of H, L
// or J is zero in every lane and every tangent.
template <class T, int N>
struct Dual;
template <class T>
LOCKSTEP_HD_INLINE bool softNonzero(const T& x) {
  return anyLane(x != T(0));
}
template <class T, int N>
LOCKSTEP_HD_INLINE bool softNonzero(const Dual<T, N>& x) {
  bool nonzero = softNonzero(x.v);
  for (int k = 0; k < N; ++k) nonzero = nonzero || softNonzero(x.d[k]);
  return nonzero;
}

// H = L L' in place (the lower triangle of the row-major n x n H becomes L), lane by lane; the
// lanes where H is not positive definite are returned (their L is garbage). Row i's profile, its
// first entry nonzero in some lane (a free object's rows start at its own first speed, a robot's
// at its base's), bounds L's (no fill before it): the sums start there, and an entry before it is
// zero. The profile is kept in row 0's upper triangle (H(0, i) = first(i), i > 0), for
// softNegativeSolve; the rest of the upper triangle is not read. Where H has the mass matrix's
// blocks (trees given: M plus a diagonal, written within its blocks only, crba.h), a row's profile
// is looked for from its tree's first speed, and the entries before it are not read.
template <class T>
LOCKSTEP_HD_INLINE int softProfile(Strided<const T> L, int i) {
  return i == 0 ? 0 : storedIndex(T(L[i]));
}
template <class T>
LOCKSTEP_HD MaskOf<T> softCholesky(Strided<T> H, int n, const ModelView<T>* trees = nullptr) {
  auto profile = [&](int i, int from) {
    if (i == 0) return;
    int first = from;
    while (first < i && !softNonzero(T(H[i * n + first]))) ++first;
    H[i] = T(first);
  };
  if (trees)
    forEachSpeedInTree(*trees, [&](int i, int u0, int) { profile(i, u0); });
  else
    for (int i = 1; i < n; ++i) profile(i, 0);
  MaskOf<T> failedLanes = T(0) > T(1);
  for (int j = 0; j < n; ++j) {
    const int fj = softProfile(Strided<const T>(H), j);
    T diag = H[j * n + j];
    for (int k = fj; k < j; ++k) diag -= H[j * n + k] * H[j * n + k];
    const MaskOf<T> bad = !(diag > T(0));
    failedLanes = failedLanes | bad;
    const T l = sqrtT(selectT(bad, T(1), diag));
    H[j * n + j] = l;
    const T inverse = T(1) / l;
    for (int i = j + 1; i < n; ++i) {
      const int fi = softProfile(Strided<const T>(H), i);
      if (fi > j) continue;  // before row i's profile: zero
      T x = H[i * n + j];
      for (int k = fi > fj ? fi : fj; k < j; ++k) x -= H[i * n + k] * H[j * n + k];
      H[i * n + j] = x * inverse;
    }
  }
  return failedLanes;
}

// x = -(L L')^-1 b in place of x (x given as b), L from softCholesky (its profile too).
template <class T>
LOCKSTEP_HD void softNegativeSolve(Strided<const T> L, int n, Strided<T> x) {
  for (int i = 0; i < n; ++i) {
    T y = x[i];
    for (int k = softProfile(L, i); k < i; ++k) y -= L[i * n + k] * x[k];
    x[i] = y / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    T y = x[i];
    for (int k = i + 1; k < n; ++k)
      if (softProfile(L, k) <= i) y -= L[k * n + i] * x[k];
    x[i] = y / L[i * n + i];
  }
  for (int i = 0; i < n; ++i) x[i] = -x[i];
}

// The speeds a block's rows can be nonzero on: at most two runs [lo, hi), ascending and apart (a
// contact's two bodies' trees, BodyTopology::treeU0 and treeU1; one where they share a tree or one
// is Ground; a limit's speed). Outside them its Jacobian is zero in every lane.
struct SoftColumns {
  int lo[2], hi[2];
};
template <class T>
LOCKSTEP_HD_INLINE SoftColumns softBlockColumns(const ModelView<T>& model, int body1, int body2) {
  SoftColumns c{{0, 0}, {0, 0}};
  int runs = 0;
  const int bodies[2] = {body1, body2};
  for (const int b : bodies) {
    if (b < 0) continue;
    const int lo = model.body[b].treeU0, hi = model.body[b].treeU1;
    if (runs == 1 && lo < c.hi[0] && c.lo[0] < hi) {  // overlapping runs: one
      c.lo[0] = lo < c.lo[0] ? lo : c.lo[0];
      c.hi[0] = hi > c.hi[0] ? hi : c.hi[0];
      continue;
    }
    c.lo[runs] = lo;
    c.hi[runs] = hi;
    ++runs;
  }
  if (runs == 2 && c.lo[1] < c.lo[0]) {
    const SoftColumns swapped{{c.lo[1], c.lo[0]}, {c.hi[1], c.hi[0]}};
    return swapped;
  }
  return c;
}

// The rows in blocks, in row order: f(r0, n, compliant, columns) for each, n its rows, compliant
// whether the block is under the compliant law, columns the speeds its rows can be nonzero on. A
// contact point's condim rows under an elliptic cone, and a compliant contact point's three, are one
// block (n = condim: 3, 4 or 6); every other row (a pyramid's edge, a frictionless point's normal, a
// limit's side) is a block of its own (n = 1).
template <class T, class F>
LOCKSTEP_HD_INLINE void forEachSoftBlock(const ModelView<T>& model, F&& f) {
  auto contact = [&](int row, int points, int condim, int elliptic, bool compliant, const SoftColumns& columns) {
    const int perPoint = softRowsPerPoint(condim, elliptic);
    const bool cone = elliptic && condim >= 3;
    for (int k = 0; k < points; ++k) {
      if (cone) {
        f(row + condim * k, condim, compliant, columns);
        continue;
      }
      for (int e = 0; e < perPoint; ++e) f(row + k * perPoint + e, 1, false, columns);
    }
  };
  for (int i = 0; i < model.sizes.nPlaneContacts; ++i) {
    const PlaneContactTopology& t = model.planeContact[i];
    contact(t.row, t.points, t.condim, t.elliptic, t.law == kLawCompliant, softBlockColumns(model, t.body, -1));
  }
  for (int i = 0; i < model.sizes.nPairContacts; ++i) {
    const PairContactTopology& t = model.pairContact[i];
    contact(t.row, t.points, t.condim, t.elliptic, t.law == kLawCompliant, softBlockColumns(model, t.body1, t.body2));
  }
  for (int i = 0; i < model.sizes.nSoftLimits; ++i) {
    const SoftLimitTopology& t = model.softLimit[i];
    const SoftColumns speed{{t.u, 0}, {t.u + 1, 0}};
    for (int side = 0; side < 2; ++side) f(t.row + side, 1, t.law == kLawCompliant, speed);
  }
}

// An elliptic cone's forces (its n rows', n = condim: 3, 4 or 6) at x = J qacc - aref, and the
// Hessian of its cost in x (row-major n x n), in MuJoCo's zones (mj_constraintUpdate) of the regular
// cone U = (mu x0, mu_1 x1, .., mu_{n-1} x_{n-1}), N = U0, Tn = |(U1 .. U_{n-1})|: above it (N >= mu
// Tn) no force; below it (mu N + Tn <= 0) each row's D x^2 / 2; between, Dm (N - mu Tn)^2 / 2 with Dm
// = D0 / (mu^2 (1 + mu^2)). The cost is convex and its slope continuous across the zones. engaged:
// the lanes with a force. scale: (mu, mu_1, .., mu_{n-1}), as softPointRows stores them.
template <class T>
struct SoftConeZone {
  T U[kSoftConeRowsMax], N, Tn;
  MaskOf<T> above, below, between;
};
template <class T>
LOCKSTEP_HD_INLINE SoftConeZone<T> softConeZone(const T* x, const T* scale, int n, MaskOf<T> exists) {
  SoftConeZone<T> z;
  const T mu = scale[0];
  T tangential = T(0);
  for (int k = 0; k < n; ++k) {
    z.U[k] = scale[k] * x[k];
    if (k > 0) tangential += z.U[k] * z.U[k];
  }
  z.N = z.U[0];
  z.Tn = sqrtT(tangential);
  const MaskOf<T> flat = !(z.Tn > T(0));
  z.above = (flat & !(z.N < T(0))) | !(z.N < mu * z.Tn) | !exists;
  z.below = (flat | !(mu * z.N + z.Tn > T(0))) & !z.above;
  z.between = !(z.above | z.below);
  return z;
}
// The weight Dm of the cost on the cone, from the normal row's D and the cone's mu (MuJoCo's).
template <class T>
LOCKSTEP_HD_INLINE T softConeWeight(T D0, T mu) {
  return D0 / (mu * mu * (T(1) + mu * mu));
}
template <class T>
struct SoftConeForce {
  T force[kSoftConeRowsMax], H[kSoftConeRowsMax * kSoftConeRowsMax];  // H: n x n, row-major
  MaskOf<T> engaged;
};
// (Into *out, which the solve keeps one of: its arrays are the largest of its frame.)
template <class T>
LOCKSTEP_HD_INLINE void softConeForceInto(const T* x, const T* scale, const T* D, int n, MaskOf<T> exists,
                                          SoftConeForce<T>* out) {
  SoftConeForce<T>& c = *out;
  const T mu = scale[0];
  const SoftConeZone<T> z = softConeZone(x, scale, n, exists);
  const T(&U)[kSoftConeRowsMax] = z.U;
  const T N = z.N;
  const MaskOf<T> above = z.above, below = z.below, between = z.between;
  const T Ts = selectT(between, z.Tn, T(1));  // (Tn > 0 where it is read)
  const T Dm = softConeWeight(D[0], mu);
  const T f0 = -Dm * (N - mu * Ts) * mu;
  c.engaged = !above;
  for (int k = 0; k < n; ++k) {
    const T cone = k == 0 ? f0 : -f0 / Ts * U[k] * scale[k];
    c.force[k] = selectT(between, cone, selectT(below, -D[k] * x[k], T(0)));
  }
  // Between: Dm diag(scale) h diag(scale), h = [1, -mu U_t' / Tn; -mu U_t / Tn, mu N / Tn^3 U_t U_t' +
  // (mu^2 - mu N / Tn) I] (MuJoCo's cone Hessian, exact).
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      T h;
      if (a == 0 && b == 0) h = T(1);
      else if (a == 0 || b == 0) h = -mu / Ts * U[a + b];
      else h = mu * N / (Ts * Ts * Ts) * U[a] * U[b] + (a == b ? mu * mu - mu * N / Ts : T(0));
      c.H[n * a + b] = selectT(between, Dm * scale[a] * scale[b] * h, selectT(below & MaskOf<T>(a == b), D[a], T(0)));
    }
}
template <class T>
LOCKSTEP_HD_INLINE SoftConeForce<T> softConeForce(const T* x, const T* scale, const T* D, int n, MaskOf<T> exists) {
  SoftConeForce<T> c;
  softConeForceInto(x, scale, D, n, exists, &c);
  return c;
}

// The same cost along a line, x + t dx at t = 0 (the line search's): its slope and curvature in t,
// without the Hessian: between the zones, with h = N - mu Tn and V = scale dx,
//   slope = Dm h g, g = V0 - mu U_t.V_t / Tn;  curvature = Dm (g^2 - mu h (|V_t|^2 - (U_t.V_t / Tn)^2) / Tn).
template <class T>
LOCKSTEP_HD_INLINE void softConeLine(const T* x, const T* dx, const T* scale, const T* D, int n, MaskOf<T> exists,
                                     T* slope, T* curvature) {
  const T mu = scale[0];
  const SoftConeZone<T> z = softConeZone(x, scale, n, exists);
  const T(&U)[kSoftConeRowsMax] = z.U;
  const T N = z.N, Tn = z.Tn;
  const MaskOf<T> below = z.below, between = z.between;
  T V[kSoftConeRowsMax];
  for (int k = 0; k < n; ++k) V[k] = scale[k] * dx[k];
  const T inverse = T(1) / selectT(between, Tn, T(1));
  const T Dm = softConeWeight(D[0], mu);
  T UV = T(0), VV = T(0);
  for (int k = 1; k < n; ++k) {
    UV += U[k] * V[k];
    VV += V[k] * V[k];
  }
  const T h = N - mu * Tn, along = UV * inverse;
  const T g = V[0] - mu * along;
  const T coneSlope = Dm * h * g;
  const T coneCurvature = Dm * (g * g - mu * h * (VV - along * along) * inverse);
  T rowSlope = T(0), rowCurvature = T(0);
  for (int k = 0; k < n; ++k) {
    rowSlope += D[k] * x[k] * dx[k];
    rowCurvature += D[k] * dx[k] * dx[k];
  }
  *slope = selectT(between, coneSlope, selectT(below, rowSlope, T(0)));
  *curvature = selectT(between, coneCurvature, selectT(below, rowCurvature, T(0)));
}

// THE COMPLIANT LAW: Lockstep's contact and stop for scenes and URDF robots (docs/contact-laws.md),
// Hunt and Crossley's force as one convex implicit constraint per block, solved by the Newton
// iterations below with MuJoCo's law's rows (Castro et al.'s convex approximations of Hunt and
// Crossley's contact, as Drake's SAP solver makes them: SapHuntCrossleyConstraint). With h the step
// and x = J qacc - aref, aref = -(J u) / h, a block's velocity at the step's end is v = h x (the
// semi-implicit Euler step's u + h qacc). Its force is that of the penetration predicted at the
// step's end, x0 - h vn (x0 at its start), and of the approach speed -vn there:
//   F = K (x0 - h vn)_+^p (1 - d vn)_+
// (a contact: Hertz's p = 3/2 and K = (4/3) k sqrt(R k), k = E^(2/3) / 2, d = 3c/2, as Simbody's
// SmoothSphereHalfSpaceForce without its smoothing; between two bodies' spheres or capsules, R =
// R1 R2 / (R1 + R2) and E, c the pair's, as Simbody's HuntCrossleyForce combines them; a stop: p = 1,
// K its stiffness, d its dissipation). A contact's friction is Coulomb's, regularized below the stiction velocity vs:
// f_t = -mu N v_t / sqrt(|v_t|^2 + vs^2), with one of the two convex approximations of Castro et
// al. (Drake's kLagged and kSimilar):
//   lagged   N = F0, the force at the step's start (K x0^p (1 - d vn0)_+ with its normal speed vn0),
//            and F at vn: the friction lags the normal force by a step (Drake's choice for robotics);
//   similar  N = F, taken at vn - mu (sqrt(|v_t|^2 + vs^2) - vs) in place of vn: exact at rest and
//            while sticking, but a sliding point glides h mu |v_t| above the surface.
// In x, with zeta = x_n (lagged) or x_n - mu (sqrt(|x_t|^2 + eps^2) - eps) (similar), eps = vs / h:
//   F(zeta) = A (c - zeta)_+^p (1 - delta zeta)_+,   A = K h^(2p), c = x0 / h^2, delta = d h,
// the block's forces f = (F, -mu N x_t / r), r = sqrt(|x_t|^2 + eps^2), are minus the gradient of a
// convex cost (F decreases with zeta), and its Hessian in x is exactly
//   lagged   H_nn = -F',  H_nt = 0,  H_tt = mu F0 (I - x_t x_t' / r^2) / r;
//   similar  H_nn = -F',  H_nt = mu F' x_t / r,  H_tt = -mu^2 F' x_t x_t' / r^2 + mu F (I - x_t x_t' / r^2) / r.
// The block's parameters (softCompliance, from its first row on): A, c, delta, lagged (1 or 0),
// then (a contact's) mu, eps, F0. n = 3: a contact (n, t1, t2; p = 3/2); n = 1: a stop's side (p = 1).
template <class T>
LOCKSTEP_HD_INLINE void softCompliantForceInto(const T* x, const T* C, int n, MaskOf<T> exists, SoftConeForce<T>* out) {
  SoftConeForce<T>& b = *out;
  const T A = C[0], c = C[1], delta = C[2];
  const MaskOf<T> lagged = C[3] > T(0.5);
  T zeta = x[0], mu = T(0), r = T(1), t[2] = {T(0), T(0)};
  if (n == 3) {
    mu = C[4];
    const T eps = C[5];
    r = sqrtT(x[1] * x[1] + x[2] * x[2] + eps * eps);
    zeta = x[0] - selectT(lagged, T(0), mu * (r - eps));
    t[0] = x[1] / r;
    t[1] = x[2] / r;
  }
  const T y = c - zeta, damping = T(1) - delta * zeta;
  const MaskOf<T> on = exists & (y > T(0)) & (damping > T(0));
  const T ys = selectT(on, y, T(1)), ds = selectT(on, damping, T(1));
  T F, dF;  // F(zeta) and dF / dzeta (<= 0)
  if (n == 3) {
    const T root = sqrtT(ys);
    F = A * ys * root * ds;
    dF = -A * (T(1.5) * root * ds + delta * ys * root);
  } else {
    F = A * ys * ds;
    dF = -A * (ds + delta * ys);
  }
  F = selectT(on, F, T(0));
  dF = selectT(on, dF, T(0));
  b.force[0] = F;
  b.H[0] = -dF;
  if (n == 1) {
    b.engaged = on;
    return;
  }
  const T F0 = C[6], N = selectT(lagged, F0, F), coupling = selectT(lagged, T(0), dF);
  b.engaged = on | (exists & lagged & (F0 > T(0)));
  for (int j = 1; j < n; ++j) {
    b.force[j] = -mu * N * t[j - 1];
    b.H[j] = b.H[n * j] = mu * coupling * t[j - 1];
    for (int k = 1; k < n; ++k) {
      const T tt = t[j - 1] * t[k - 1];  // the same product for (j, k) and (k, j): H exactly symmetric
      b.H[n * j + k] = -mu * mu * coupling * tt + mu * N * ((j == k ? T(1) : T(0)) - tt) / r;
    }
  }
}

// The soft-constraint solve of one world at its state, after computeKinematics and the sweep (udot:
// qacc0 in, qacc out); the contact points' and limits' forces and the solve's statistics into the
// fields softContact, softLimitForce and softSolver. Returns the StatusFlag bits (per lane).
// The compliant law's implicit step takes the joints' damping B and the PD actuators' gains in the
// solve's metric (SAP's A and free motion v*), linearized at the step's start: where an actuator's
// effort is within its limit, its damping kd joins B and its stiffness kp adds h kp (q + h u' is the
// position the step ends at). With D = B + kd + h kp, the metric is A = M + h D and the free motion
// a0 = A^-1 (M udot0 - h kp u), udot0 the explicit one: (M + h D) qacc = M udot0 - h kp u + J' f.
// (A clamped effort depends on neither u nor q.) h is the law's step (every compliant element's:
// Batch::step refuses another).
template <class T>
LOCKSTEP_HD_INLINE void implicitActuatorGains(const WorldView<T>& w, int i, T q, T* kd, T* kp) {
  const Strided<const T> target = targetAt(w, i), gains = actuatorGainsAt(w.params, i);
  const Strided<const T> control = actuatorControlAt(w.params, i);
  const T effort = actuatorEffort(T(w.tau[i]), q, T(w.u[i]), T(target[0]), T(target[1]), gains[0], gains[1], gains[2],
                                  control[0], control[1], control[2], T(INFINITY));
  const MaskOf<T> within = absT(effort) < T(w.params.effortLimit[i]);
  *kp = selectT(within & (gains[0] == T(1)), T(gains[1]), T(0));
  *kd = selectT(within & !(gains[0] == T(0)), T(gains[2]), T(0));
}
template <class T>
LOCKSTEP_HD_INLINE T compliantStep(const ModelView<T>& model, const WorldView<T>& w) {
  for (int i = 0; i < model.sizes.nPlaneContacts; ++i)
    if (model.planeContact[i].law == kLawCompliant) return planeContactLawAt(w.params, i)[11];
  for (int i = 0; i < model.sizes.nPairContacts; ++i)
    if (model.pairContact[i].law == kLawCompliant) return pairContactLawAt(w.params, i)[11];
  for (int i = 0; i < model.sizes.nSoftLimits; ++i)
    if (model.softLimit[i].law == kLawCompliant) return softLimitLawAt(w.params, i)[10];
  return T(0);
}
// A^-1 b for a 3 x 3 A (its adjugate: the columns are the cross products of its rows), and A's
// determinant.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> solve33(const Mat33<T>& A, const Vec3<T>& b, T* det) {
  const Vec3<T> r0 = A.row(0), r1 = A.row(1), r2 = A.row(2);
  const Vec3<T> c0 = cross(r1, r2), c1 = cross(r2, r0), c2 = cross(r0, r1);
  *det = dot(r0, c0);
  const T inverse = T(1) / selectT(*det == T(0), T(1), *det);
  return inverse * (b[0] * c0 + b[1] * c1 + b[2] * c2);
}
// The gyroscopic torque of a free body, or a ball body, on Ground with no children, taken linearly
// implicitly over the step, as Kahan's midpoint takes Euler's equation I wdot = -w x I w (I the
// body's inertia in Ground about its centre of mass, for a ball about its pivot):
//   (I + h/2 ([w]x I - [I w]x)) dw = -h w x I w.
// Without torques the body keeps its kinetic energy and the magnitude of its angular momentum to
// rounding at any step, where the explicit term (semi-implicit Euler's) gains h^2 |w x I w|_I^-1^2 / 2
// in every step: a light rod spinning about its axis tumbles up at 10 ms. udot (udot0: the sweep's,
// with the explicit term) changes in place: its angular acceleration by the difference, and a free
// body's M origin with it, its centre of mass's acceleration unchanged.
template <class T>
LOCKSTEP_HD void compliantGyroscopicStep(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws, T h,
                                         Strided<T> udot) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    const bool free = topo.mobilizer == MobilizerType::Free;
    if (topo.parent >= 0 || (!free && topo.mobilizer != MobilizerType::Ball) || (topo.flags & kHasChildren)) continue;
    const Strided<const T> mp = massPropsAt(w.params, b);
    const Transform<T> X_GB = bodyPose(ws, b);
    const Vec3<T> com = X_GB * Vec3<T>{{mp[1], mp[2], mp[3]}}, Mo = (X_GB * model.X_MB[b].inverse()).p;
    Mat33<T> I = reexpressSym(X_GB.R.R, loadSymMat33<T>(mp + 4)).toMat33();
    if (!free) {  // about the pivot: I_c + m (|r|^2 1 - r r')
      const Vec3<T> r = com - Mo;
      const T r2 = dot(r, r);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) I(i, j) = I(i, j) + T(mp[0]) * ((i == j ? r2 : T(0)) - r[i] * r[j]);
    }
    const Vec3<T> omega = bodyVelocity(ws, b).ang, L = I * omega, g = cross(omega, L);
    const T halfStep = T(0.5) * h;
    const Mat33<T> J = I + halfStep * (crossMat(omega) * I - crossMat(L));
    T detI, detJ;
    const Vec3<T> explicitPart = solve33(I, g, &detI), implicitPart = solve33(J, g, &detJ);
    // (A J near singular, at a spin no step could follow: the explicit term stays.)
    const MaskOf<T> solvable = absT(detJ) > T(1e-9) * absT(detI);
    const Vec3<T> delta = selectVec3(solvable, explicitPart - implicitPart, Vec3<T>::zero());
    const Rotation<T>& R_GF = model.X_PF[b].R;
    const Vec3<T> angular = transposeTimes(R_GF.R, delta);
    for (int k = 0; k < 3; ++k) udot[topo.uOffset + k] = T(udot[topo.uOffset + k]) + angular[k];
    if (!free) continue;
    const Vec3<T> linear = transposeTimes(R_GF.R, cross(delta, Mo - com));
    for (int k = 0; k < 3; ++k) udot[topo.uOffset + 3 + k] = T(udot[topo.uOffset + 3 + k]) + linear[k];
  }
}
// M += h D in place; udot (udot0 in) becomes the free motion a0 (scratch: rhs, H), with the
// gyroscopic torques of free and ball bodies on Ground implicit (compliantGyroscopicStep). The lanes
// whose A is not positive definite are returned.
template <class T>
LOCKSTEP_HD MaskOf<T> compliantFreeMotion(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                          Strided<T> M, Strided<T> H, Strided<T> rhs, Strided<T> udot) {
  const int nu = model.sizes.nu;
  const T h = compliantStep(model, w);
  compliantGyroscopicStep(model, w, ws, h, udot);
  forEachSpeedInTree(model, [&](int i, int u0, int u1) {  // M udot (M within its trees' blocks)
    T x = T(0);
    for (int j = u0; j < u1; ++j) x += M[i * nu + j] * udot[j];
    rhs[i] = x;
  });
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    for (int k = 0; k < topo.nu; ++k) {
      const int i = topo.uOffset + k;
      T kd = T(0), kp = T(0);
      if (model.sizes.nActuators > 0)
        implicitActuatorGains(w, i, coordinateOfSpeed<T>(topo, Strided<const T>(w.q), k), &kd, &kp);
      M[i * nu + i] = T(M[i * nu + i]) + h * (T(w.params.damping[i]) + kd + h * kp);
      rhs[i] = T(rhs[i]) - h * kp * T(w.u[i]);
    }
  }
  forEachSpeedInTree(model, [&](int i, int u0, int) {
    for (int j = u0; j <= i; ++j) H[i * nu + j] = M[i * nu + j];
  });
  const MaskOf<T> failedLanes = softCholesky<T>(H, nu, &model);
  softNegativeSolve<T>(Strided<const T>(H), nu, rhs);  // -a0
  for (int i = 0; i < nu; ++i) udot[i] = selectT(failedLanes, T(udot[i]), -T(rhs[i]));
  return failedLanes;
}

template <class T>
LOCKSTEP_HD StatusOf<T> solveSoftConstraints(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                             Strided<T> udot) {
  const Sizes& s = model.sizes;
  const int nu = s.nu, nr = s.nSoftRows;
  softConstraintRows(model, w, ws, Strided<const T>(udot));
  const Strided<T> M = ws.softM(), H = ws.softH(), v = ws.softVec(), rows = ws.softRows(), J = ws.softJ();
  const Strided<T> jar = ws.softJar(), Jd = ws.softJd();
  computeMassMatrix<T>(model, w.params, ws, M, ws.softIc());
  const Strided<T> a0 = v, a = v + nu, g = v + 2 * nu, d = v + 3 * nu, Md = v + 4 * nu, Mda = v + 5 * nu;
  const Strided<T> chain = v + 6 * nu;
  // The compliant law's implicit step: the metric M + h D and its free motion (compliantFreeMotion).
  MaskOf<T> failedLanes = T(0) > T(1);
  if (s.softCompliant) failedLanes = compliantFreeMotion<T>(model, w, ws, M, H, g, udot);
  for (int j = 0; j < nu; ++j) a0[j] = a[j] = udot[j];
  // Rows that exist in some lane: the others are skipped. The blocks with such a row are listed
  // once (first row, then rows, negative under the compliant law), and every pass below visits only
  // them: a humanoid's 700 rows have a few in use.
  auto rowUsed = [&](int r) { return anyLane(T(rows[4 * r + 3]) > T(0.5)); };
  const Strided<T> blocks = ws.softBlocks();
  int used = 0;
  forEachSoftBlock(model, [&](int r0, int n, bool compliant, const SoftColumns& c) {
    if (!rowUsed(r0)) return;
    const int entries[6] = {r0, compliant ? -n : n, c.lo[0], c.hi[0], c.lo[1], c.hi[1]};
    for (int e = 0; e < 6; ++e) blocks[6 * used + e] = T(entries[e]);
    ++used;
  });
  // f(r0, n, compliant) for each listed block, with columns set to its columns: the passes over its
  // rows visit those speeds alone (in order), the zeros elsewhere left out (a heap of objects: a
  // pair's rows are nonzero on its two objects' speeds).
  SoftColumns columns;
  auto forEachUsedBlock = [&](auto&& f) {
    for (int k = 0; k < used; ++k) {
      const int r0 = storedIndex(T(blocks[6 * k])), n = storedIndex(T(blocks[6 * k + 1]));
      for (int e = 0; e < 2; ++e) {
        columns.lo[e] = storedIndex(T(blocks[6 * k + 2 + 2 * e]));
        columns.hi[e] = storedIndex(T(blocks[6 * k + 3 + 2 * e]));
      }
      if (n == 1)
        f(r0, 1, false);  // a row of MuJoCo's law (a pyramid's edge, a limit's side): as a constant
      else
        f(r0, n < 0 ? -n : n, n < 0);
    }
  };
  auto forEachColumn = [&](auto&& f) {
    for (int e = 0; e < 2; ++e)
      for (int j = columns.lo[e]; j < columns.hi[e]; ++j) f(j);
  };
  auto rowDot = [&](int r, Strided<const T> x) {
    T y = T(0);
    const Strided<const T> row = Strided<const T>(J) + std::int64_t(r) * nu;
    forEachColumn([&](int j) { y += row[j] * x[j]; });
    return y;
  };
  // A block's forces c.force at its n rows' x = J qacc - aref (x(r)) and the Hessian c.H of its cost
  // in x (a row: D where active; a cone: softConeForce's, n x n); false where no lane has a force.
  // One SoftConeForce serves every block in turn (block).
  SoftConeForce<T> block;
  const Strided<T> compliance = ws.softCompliance();
  auto blockForce = [&](int r0, int n, bool compliant, auto x, SoftConeForce<T>& c) {
    const MaskOf<T> exists = T(rows[4 * r0 + 3]) > T(0.5);
    if (compliant) {
      T xs[3], C[7];
      for (int e = 0; e < n; ++e) xs[e] = x(r0 + e);
      for (int k = 0; k < (n == 3 ? 7 : 4); ++k) C[k] = compliance[4 * r0 + k];
      softCompliantForceInto<T>(xs, C, n, exists, &c);
      return anyLane(c.engaged);
    }
    if (n < 2) {  // a row (n = 1)
      const T xr = x(r0);
      const MaskOf<T> active = exists & (xr < T(0));
      if (!anyLane(active)) return false;
      const T D = selectT(active, T(rows[4 * r0 + 2]), T(0));
      c.force[0] = -(D * xr);
      c.H[0] = D;
      return true;
    }
    T xs[kSoftConeRowsMax], scale[kSoftConeRowsMax], D[kSoftConeRowsMax];
    for (int e = 0; e < n; ++e) {
      xs[e] = x(r0 + e);
      scale[e] = rows[4 * (r0 + e)];
      D[e] = rows[4 * (r0 + e) + 2];
    }
    softConeForceInto<T>(xs, scale, D, n, exists, &c);
    return anyLane(c.engaged);
  };
  // out = M x(j), each entry summed in j's order (M is exactly symmetric: its row j is its column j),
  // the entries' sums side by side rather than one after another, each column within its tree's
  // block (the zeros outside it left out: forEachSpeedInTree).
  auto timesM = [&](auto x, Strided<T> out) {
    for (int i = 0; i < nu; ++i) out[i] = T(0);
    forEachSpeedInTree(model, [&](int j, int u0, int u1) {
      const T xj = x(j);
      const Strided<const T> column = Strided<const T>(M) + std::int64_t(j) * nu;
      for (int i = u0; i < u1; ++i) out[i] = T(out[i]) + column[i] * xj;
    });
  };
  // The tolerance on the gradient: a fraction of the forces' scale, the largest of 1 and M qacc0's
  // entries, or at the iterate the largest of M (qacc - qacc0)'s entries plus the sum of the rows'
  // forces' sizes (what the gradient's sums add up, whose rounding it must allow: a box pressed 4 cm
  // into the floor, 100 N on 0.4 kg, leaves a float gradient at about 3e-5).
  T scale = T(1);
  timesM([&](int j) { return T(a0[j]); }, Md);  // (Md: scratch until the first step)
  for (int i = 0; i < nu; ++i) scale = selectT(absT(T(Md[i])) > scale, absT(T(Md[i])), scale);
  const T fraction = byPrecision<T>(1e-5, 1e-11);
  MaskOf<T> done = T(0) > T(1);
  T iterations = T(0), gmax = T(0);
  // H = M + J' D_active J + each cone's J' H J at the iterate (jar: its rows' J qacc - aref), lower
  // triangle.
  auto newtonHessian = [&] {
    forEachSpeedInTree(model, [&](int i, int u0, int) {
      for (int j = 0; j < u0; ++j) H[i * nu + j] = T(0);
      for (int j = u0; j <= i; ++j) H[i * nu + j] = M[i * nu + j];
    });
    forEachUsedBlock([&](int r0, int n, bool compliant) {
      if (!blockForce(r0, n, compliant, [&](int r) { return T(jar[r]); }, block)) return;
      const T* Hb = block.H;
      const Strided<const T> row = Strided<const T>(J) + std::int64_t(r0) * nu;
      // The block's rows are zero off its bodies' chains to Ground (a foot's row: the free joint
      // and its leg; a ball pair's: the two balls' speeds): only the lines and columns of H on
      // those chains change, the rest left as they are (most of them, in a legged robot or a heap
      // of objects). Its nonzero columns, in order, are listed in chain.
      int width = 0;
      forEachColumn([&](int i) {
        bool zero = true;
        for (int e = 0; e < n; ++e) zero = zero && !softNonzero(T(row[e * nu + i]));
        if (!zero) chain[width++] = T(i);
      });
      for (int ci = 0; ci < width; ++ci) {
        const int i = storedIndex(T(chain[ci]));
        if (n == 1) {
          const T Di = Hb[0] * row[i];
          for (int cj = 0; cj <= ci; ++cj) {
            const int j = storedIndex(T(chain[cj]));
            H[i * nu + j] = T(H[i * nu + j]) + Di * row[j];
          }
          continue;
        }
        // H += J_b' Hb J_b, the block's rows J_b: (J_b' Hb)_i = c, then c J_b.
        T c[kSoftConeRowsMax];
        for (int b = 0; b < n; ++b) {
          c[b] = row[i] * Hb[b];
          for (int e = 1; e < n; ++e) c[b] += row[std::int64_t(e) * nu + i] * Hb[n * e + b];
        }
        for (int cj = 0; cj <= ci; ++cj) {
          const int j = storedIndex(T(chain[cj]));
          T y = c[0] * row[j];
          for (int e = 1; e < n; ++e) y += c[e] * row[std::int64_t(e) * nu + j];
          H[i * nu + j] = T(H[i * nu + j]) + y;
        }
      }
    });
  };
  for (int it = 0; it <= kSoftNewtonIterations; ++it) {
    if (it == 0) {  // qacc = qacc0
      for (int i = 0; i < nu; ++i) Mda[i] = T(0);
    } else {
      timesM([&](int j) { return T(a[j]) - T(a0[j]); }, Mda);
    }
    T forces = T(0);
    for (int i = 0; i < nu; ++i) {
      g[i] = Mda[i];
      forces = selectT(absT(T(Mda[i])) > forces, absT(T(Mda[i])), forces);
    }
    forEachUsedBlock([&](int r0, int n, bool compliant) {
      for (int e = 0; e < n; ++e) jar[r0 + e] = rowDot(r0 + e, a) - T(rows[4 * (r0 + e) + 1]);
      if (!blockForce(r0, n, compliant, [&](int r) { return T(jar[r]); }, block)) return;  // 0 in every lane
      const T* f = block.force;
      // A compliant contact's friction can reach mu times its normal force (lagged: the start's):
      // its rounding, stiff below the stiction velocity, scales with that.
      if (compliant && n == 3) forces += T(compliance[4 * (r0 + 1)]) * (T(compliance[4 * (r0 + 1) + 2]) + absT(f[0]));
      // And its elastic force at the step's start, A c^p: its force's rounding, steep in x, scales
      // with that (a stop pressed 0.5 rad in, 5e3 N m, left a float gradient above the tolerance of
      // the few N m of force it gave).
      if (compliant) {
        const T c = T(compliance[4 * r0 + 1]), pressed = selectT(c > T(0), c, T(0));
        forces += T(compliance[4 * r0]) * pressed * (n == 3 ? sqrtT(pressed) : T(1));
      }
      for (int e = 0; e < n; ++e) {
        forces += absT(f[e]);
        const Strided<const T> row = Strided<const T>(J) + std::int64_t(r0 + e) * nu;
        forEachColumn([&](int j) { g[j] = T(g[j]) - f[e] * row[j]; });
      }
    });
    // Forces that are not finite (a compliant block's stiffness beyond the precision's range: a ball
    // of radius 1e308) would pass the tolerance at once, the free motion accepted: the lane fails.
    failedLanes = failedLanes | !(forces < T(INFINITY));
    gmax = T(0);
    for (int j = 0; j < nu; ++j) gmax = selectT(absT(T(g[j])) > gmax, absT(T(g[j])), gmax);
    done = done | !(gmax > fraction * selectT(forces > scale, forces, scale));
    if (allLanes(done) || it == kSoftNewtonIterations) break;
    iterations += selectT(done, T(0), T(1));
    // The Newton step: d = -(M + J' D_active J)^-1 g.
    newtonHessian();
    failedLanes = failedLanes | (softCholesky<T>(H, nu) & !done);
    for (int j = 0; j < nu; ++j) d[j] = g[j];
    softNegativeSolve<T>(Strided<const T>(H), nu, d);
    // Exact line search along d: phi'(t) = t d'Md + d'M(a - a0) + sum_active(t) D (jar + t Jd) Jd.
    T dMd = T(0), dMa = T(0);
    timesM([&](int j) { return T(d[j]); }, Md);
    for (int i = 0; i < nu; ++i) {
      dMd += T(d[i]) * T(Md[i]);
      dMa += T(d[i]) * T(Mda[i]);
    }
    forEachUsedBlock([&](int r0, int n, bool) {
      for (int e = 0; e < n; ++e) Jd[r0 + e] = rowDot(r0 + e, d);
    });
    auto slope = [&](T t, T* curvature) {
      T first = t * dMd + dMa, second = dMd;
      forEachUsedBlock([&](int r0, int n, bool compliant) {
        if (n > 1 && !compliant) {
          T x[kSoftConeRowsMax], dx[kSoftConeRowsMax], scale[kSoftConeRowsMax], D[kSoftConeRowsMax];
          for (int e = 0; e < n; ++e) {
            dx[e] = Jd[r0 + e];
            x[e] = T(jar[r0 + e]) + t * dx[e];
            scale[e] = rows[4 * (r0 + e)];
            D[e] = rows[4 * (r0 + e) + 2];
          }
          T coneSlope, coneCurvature;
          softConeLine<T>(x, dx, scale, D, n, T(rows[4 * r0 + 3]) > T(0.5), &coneSlope, &coneCurvature);
          first += coneSlope;
          second += coneCurvature;
          return;
        }
        // A row, or a compliant block: its forces' work along the step and its Hessian's curvature.
        if (!blockForce(r0, n, compliant, [&](int r) { return T(jar[r]) + t * T(Jd[r]); }, block)) return;
        const T *f = block.force, *Hb = block.H;
        for (int e = 0; e < n; ++e) {
          first -= f[e] * T(Jd[r0 + e]);
          for (int k = 0; k < n; ++k) second += T(Jd[r0 + e]) * Hb[n * e + k] * T(Jd[r0 + k]);
        }
      });
      *curvature = second;
      return first;
    };
    T curvature;
    const T slope0 = slope(T(0), &curvature);  // < 0 along a descent direction
    T t = T(1), lo = T(0), hi = T(-1);          // hi < 0: no upper bracket yet
    MaskOf<T> searched = done | !(slope0 < T(0));
    // Searched where the slope is within the precision's reach of 0 (in float, 1e-13 of slope0 is
    // below its rounding: every search ran its 50 steps, most of a float step's time).
    const T flat = byPrecision<T>(1e-5, 1e-13) * absT(slope0);
    for (int ls = 0; ls < kSoftLineSearchSteps && !allLanes(searched); ++ls) {
      const T phi = slope(t, &curvature);
      searched = searched | !(absT(phi) > flat);
      const MaskOf<T> above = phi > T(0);
      lo = selectT(searched | above, lo, t);
      hi = selectT(searched | !above, hi, t);
      T next = t - phi / curvature;
      const MaskOf<T> belowLo = !(next > lo), aboveHi = (hi >= T(0)) & !(next < hi);
      const MaskOf<T> outside = belowLo | aboveHi;
      next = selectT(outside, selectT(hi >= T(0), T(0.5) * (lo + hi), T(2) * t), next);
      t = selectT(searched, t, next);
    }
    const T step = selectT(done | !(slope0 < T(0)), T(0), t);
    for (int j = 0; j < nu; ++j) a[j] = T(a[j]) + step * T(d[j]);
  }
  failedLanes = failedLanes | !done;
  // Derivatives (T a dual number: physics/derivatives.h). At the solution the gradient g(qacc, p) is
  // zero, so dqacc = -H^-1 dg/dp (the implicit function theorem), whatever tangents the iterations
  // gave qacc. The gradient's tangents at the last iterate are H dqacc + dg/dp: the tangents of one
  // more Newton step, -H^-1 g, added to qacc's own (its value stays the solve's, as in the T code)
  // leave -H^-1 dg/dp, up to the tangents of H^-1 times the gradient left (below the tolerance).
  // Then the rows' J qacc - aref follow qacc.
  if constexpr (CarriesTangents<T>::value) {
    newtonHessian();
    softCholesky<T>(H, nu);  // a lane whose H is not positive definite was flagged by the iterations
    for (int j = 0; j < nu; ++j) d[j] = g[j];
    softNegativeSolve<T>(Strided<const T>(H), nu, d);
    for (int j = 0; j < nu; ++j) a[j] = plusTangents(T(a[j]), T(d[j]));
    forEachUsedBlock([&](int r0, int n, bool) {
      for (int e = 0; e < n; ++e) jar[r0 + e] = rowDot(r0 + e, a) - T(rows[4 * (r0 + e) + 1]);
    });
  }
  for (int j = 0; j < nu; ++j) udot[j] = a[j];
  // The rows' forces (jar now holds them): -D jar on the active rows, the cones' from their zones;
  // 0 on the others.
  forEachUsedBlock([&](int r0, int n, bool compliant) {
    const bool engaged = blockForce(r0, n, compliant, [&](int r) { return T(jar[r]); }, block);
    for (int e = 0; e < n; ++e) Jd[r0 + e] = engaged ? T(block.force[e]) : T(0);
  });
  for (int r = 0; r < nr; ++r) jar[r] = T(0);
  forEachUsedBlock([&](int r0, int n, bool) {
    for (int e = 0; e < n; ++e) jar[r0 + e] = Jd[r0 + e];
  });
  // Each point's force in its contact frame, and each body's total (bodyContact: about Bo, in G,
  // as the ground contacts give it): a pair's force acts on its second geom's body, and its opposite
  // on the first's. The same per MuJoCo body of the geoms (ws.mujocoContact, about Ground's origin:
  // MuJoCo's cfrc_ext, which leaves out the world body).
  if (hasSoftContacts(s)) {
    for (int b = 0; b < s.nb; ++b) storeSpatialVec(bodyContactAt(w, b), SpatialVec<T>::zero());
    for (int i = 0; i < s.nMujocoBodies; ++i) storeSpatialVec(ws.mujocoContact(i), SpatialVec<T>::zero());
  }
  // A point's force and torque in its contact frame (MuJoCo's mj_contactForce: a cone's rows are the
  // frame's; a pyramid's normal is the sum of its edges' forces, its component k mu_k (f+ - f-)).
  auto pointForce = [&](int body1, int body2, int mujocoBody1, int mujocoBody2, int condim, int elliptic,
                        Strided<const T> lawParams, int r0, const Vec3<T>& hint, bool hinted,
                        Strided<T> point) {  // point: active dist pos normal force
    // force: normal, t1, t2, then x, y, z in Ground; torque: about n, t1, t2, then in Ground
    const Strided<T> out = point + 8;
    if (!anyLane(T(point[0]) > T(0.5))) {  // in no lane: no rows, no force (written only if it had one)
      if (anyLane(T(out[0]) != T(0)))      // (a pyramid's frictional force needs a normal one)
        for (int c = 0; c < 12; ++c) out[c] = T(0);
      return;
    }
    T wrench[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};  // force (n, t1, t2), torque (n, t1, t2)
    if (softRowsPerPoint(condim, elliptic) == 1) {
      wrench[0] = jar[r0];
    } else if (elliptic) {  // the rows are the frame's
      for (int k = 0; k < condim; ++k) wrench[k] = jar[r0 + k];
    } else {
      T mu[5];
      softFriction(lawParams, mu);
      for (int e = 0; e < 2 * (condim - 1); ++e) wrench[0] += T(jar[r0 + e]);
      for (int k = 1; k < condim; ++k) wrench[k] = mu[k - 1] * (T(jar[r0 + 2 * (k - 1)]) - T(jar[r0 + 2 * k - 1]));
    }
    for (int k = 0; k < 3; ++k) {
      out[k] = wrench[k];
      out[6 + k] = wrench[3 + k];
    }
    const Vec3<T> n = loadVec3<T>(Strided<const T>(point) + 5), P = loadVec3<T>(Strided<const T>(point) + 2);
    Vec3<T> t1, t2;
    softContactTangents(n, hint, hinted, &t1, &t2);
    const Vec3<T> f = wrench[0] * n + wrench[1] * t1 + wrench[2] * t2;
    const Vec3<T> tau = wrench[3] * n + wrench[4] * t1 + wrench[5] * t2;
    storeVec3(out + 3, f);
    storeVec3(out + 9, tau);
    // The wrench on body2 at P, its opposite on body1: about each body's origin, and about Ground's
    // origin for the MuJoCo bodies.
    auto add = [&](Strided<T> F, const Vec3<T>& about, T sign) {
      const Vec3<T> m = cross(P - about, f) + tau;
      for (int c = 0; c < 3; ++c) {
        F[c] = T(F[c]) + sign * m[c];
        F[3 + c] = T(F[3 + c]) + sign * f[c];
      }
    };
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? body2 : body1;
      if (b >= 0) add(bodyContactAt(w, b), bodyOrigin(ws, b), side == 0 ? T(1) : T(-1));
    }
    for (int side = 0; side < 2; ++side) {
      const int i = side == 0 ? mujocoBody2 : mujocoBody1;
      if (i > 0) add(ws.mujocoContact(i), Vec3<T>::zero(), side == 0 ? T(1) : T(-1));
    }
  };
  for (int i = 0; i < s.nPlaneContacts; ++i) {
    const PlaneContactTopology topo = model.planeContact[i];
    Vec3<T> axis = Vec3<T>::zero();  // the frame of the rows: a capsule's axis as the hint
    if (topo.shape == kShapeCapsule) {
      const Transform<T> X_GG = bodyPose(ws, topo.body) * loadTransform<T>(planeContactGeomAt(w.params, i));
      axis = {{X_GG.R(0, 2), X_GG.R(1, 2), X_GG.R(2, 2)}};
    }
    const int perPoint = softRowsPerPoint(topo.condim, topo.elliptic);
    for (int k = 0; k < topo.points; ++k)
      pointForce(-1, topo.body, -1, topo.mujocoBody, topo.condim, topo.elliptic, planeContactLawAt(w.params, i),
                 topo.row + k * perPoint, axis, topo.shape == kShapeCapsule, softContactAt(w, topo.point + k));
  }
  for (int i = 0; i < s.nPairContacts; ++i) {
    const PairContactTopology topo = model.pairContact[i];
    const int perPoint = softRowsPerPoint(topo.condim, topo.elliptic);
    for (int k = 0; k < topo.points; ++k)
      pointForce(topo.body1, topo.body2, topo.mujocoBody1, topo.mujocoBody2, topo.condim, topo.elliptic,
                 pairContactLawAt(w.params, i), topo.row + k * perPoint, Vec3<T>::zero(), false,
                 softContactAt(w, topo.point + k));
  }
  for (int i = 0; i < s.nSoftLimits; ++i) {
    const SoftLimitTopology topo = model.softLimit[i];
    w.softLimitForce[i] = T(jar[topo.row]) - T(jar[topo.row + 1]);
  }
  w.softSolver[0] = iterations;
  w.softSolver[1] = gmax;
  return flagIf(failedLanes, kStatusSoftSolveFailed);
}

}  // namespace lockstep
