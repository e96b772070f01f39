// Lockstep force elements, evaluated per world from the poses and velocities of the two bodies
// they connect. Pure functions: the forces stage applies their results, and the Batch getters
// report them, so what users read is exactly what the dynamics used.
#pragma once

#include "lockstep/physics/spatial.h"

namespace lockstep {

// Every quantity of simbody-LinearBushing.txt for one bushing in one world.
template <class T>
struct BushingQuantities {
  T q[6];     // body-fixed XYZ angles of R_FM, then p_FM (in F)
  T qdot[6];  // their time derivatives
  T f[6];     // generalized forces f_i = -(k_i q_i + c_i qdot_i)
  Transform<T> X_GF, X_GM, X_FM;
  SpatialVec<T> V_GF, V_GM;  // at the frame origins, in G
  SpatialVec<T> V_FM;        // of M in F, at OM, expressed in F
  SpatialVec<T> F_GF;        // force on body 1 at OF, in G
  SpatialVec<T> F_GM;        // force on body 2 at OM, in G
  T potentialEnergy;         // sum k_i q_i^2 / 2
  T powerDissipation;        // sum c_i qdot_i^2
  MaskOf<T> singular;            // |cos q1| too small: the angle rates are undefined
};

// |cos(q1)| below which a bushing is singular: 16 sqrt(eps) of the precision (2.4e-7 rad from
// +/-90 degrees in double, 5.5e-3 in float), where the angle rates lose half their digits.
template <class T>
LOCKSTEP_HD_INLINE T bushingSingularCos() {
  return byPrecision<T>(5.5e-3, 2.4e-7);
}

// X_GB1, V_GB1 (at Bo1, in G) and the same for body 2; X_B1F, X_B2M the bushing frames.
template <class T>
LOCKSTEP_HD BushingQuantities<T> evaluateBushing(const Transform<T>& X_GB1, const SpatialVec<T>& V_GB1,
                                                 const Transform<T>& X_GB2, const SpatialVec<T>& V_GB2,
                                                 const Transform<T>& X_B1F, const Transform<T>& X_B2M,
                                                 const T* k, const T* c) {
  BushingQuantities<T> r;
  r.X_GF = X_GB1 * X_B1F;
  r.X_GM = X_GB2 * X_B2M;
  r.X_FM = r.X_GF.invTimes(r.X_GM);
  r.V_GF = shiftVelocityBy(V_GB1, r.X_GF.p - X_GB1.p);
  r.V_GM = shiftVelocityBy(V_GB2, r.X_GM.p - X_GB2.p);
  r.V_FM = findRelativeVelocity(r.X_GF, r.V_GF, r.X_GM, r.V_GM);

  const Vec3<T> angles = r.X_FM.R.toBodyFixedXYZ();
  const T c1 = cosT(angles[1]);
  r.singular = absT(c1) < bushingSingularCos<T>();
  // Angle rates from the angular velocity in M: qdot = N_B(q) * (~R_FM w_FM).
  const Vec3<T> w_FM_M = r.X_FM.R.invTimes(r.V_FM.ang);
  const Mat33<T> N_B = bodyFixedXYZ_N_B(angles);
  const Vec3<T> angleRates = N_B * w_FM_M;
  for (int i = 0; i < 3; ++i) {
    r.q[i] = angles[i];
    r.q[3 + i] = r.X_FM.p[i];
    r.qdot[i] = angleRates[i];
    r.qdot[3 + i] = r.V_FM.lin[i];
  }
  r.potentialEnergy = T(0);
  r.powerDissipation = T(0);
  for (int i = 0; i < 6; ++i) {
    r.f[i] = -(k[i] * r.q[i] + c[i] * r.qdot[i]);
    r.potentialEnergy += T(0.5) * k[i] * r.q[i] * r.q[i];
    r.powerDissipation += c[i] * r.qdot[i] * r.qdot[i];
  }
  // The rotational f_i act about non-orthogonal axes: the moment on body 2, in M, is ~N_B f_rot,
  // so that f_rot . qdot_rot equals moment . w_FM_M. The translational ones form a vector in F.
  const Vec3<T> moment_M = transposeTimes(N_B, Vec3<T>{{r.f[0], r.f[1], r.f[2]}});
  const Vec3<T> m_G = r.X_GM.R * moment_M;
  const Vec3<T> f_G = r.X_GF.R * Vec3<T>{{r.f[3], r.f[4], r.f[5]}};
  const Vec3<T> p_FM_G = r.X_GM.p - r.X_GF.p;
  r.F_GM = {m_G, f_G};
  r.F_GF = {-(m_G + cross(p_FM_G, f_G)), -f_G};
  return r;
}

// The quantities of drake-LinearSpringDamper.txt for one spring-damper in one world.
template <class T>
struct SpringDamperQuantities {
  Vec3<T> p_WP, p_WQ;  // attachment points in G
  T length, lengthDot;
  Vec3<T> f_AP;        // force on body A at P, in G; body B gets -f_AP at Q
  T potentialEnergy;   // k (l - l0)^2 / 2
  T conservativePower;     // -k (l - l0) ldot
  T nonConservativePower;  // -c ldot^2
  MaskOf<T> lengthNearlyZero;  // l^2 < (eps l0)^2: no direction exists
};

template <class T>
LOCKSTEP_HD SpringDamperQuantities<T> evaluateSpringDamper(const Transform<T>& X_GA, const SpatialVec<T>& V_GA,
                                                           const Transform<T>& X_GB, const SpatialVec<T>& V_GB,
                                                           const Vec3<T>& p_AP, const Vec3<T>& p_BQ, T freeLength,
                                                           T stiffness, T damping) {
  SpringDamperQuantities<T> r;
  r.p_WP = X_GA * p_AP;
  r.p_WQ = X_GB * p_BQ;
  const Vec3<T> p_PQ = r.p_WQ - r.p_WP;
  const T l2 = normSqr(p_PQ);
  const T eps = machineEpsilon<T>();
  r.lengthNearlyZero = l2 < square(eps * freeLength);
  r.length = sqrtT(l2);
  if (allLanes(r.lengthNearlyZero)) {
    r.lengthDot = T(0);
    r.f_AP = Vec3<T>::zero();
    r.potentialEnergy = T(0.5) * stiffness * square(r.length - freeLength);
    r.conservativePower = r.nonConservativePower = T(0);
    return r;
  }
  const Vec3<T> rhat = p_PQ / r.length;
  const Vec3<T> v_WP = V_GA.lin + cross(V_GA.ang, r.p_WP - X_GA.p);
  const Vec3<T> v_WQ = V_GB.lin + cross(V_GB.ang, r.p_WQ - X_GB.p);
  r.lengthDot = dot(v_WQ - v_WP, rhat);
  const T stretch = r.length - freeLength;
  r.f_AP = (stiffness * stretch + damping * r.lengthDot) * rhat;
  r.potentialEnergy = T(0.5) * stiffness * stretch * stretch;
  r.conservativePower = -stiffness * stretch * r.lengthDot;
  r.nonConservativePower = -damping * r.lengthDot * r.lengthDot;
  if (anyLane(r.lengthNearlyZero)) {  // some lanes of a pack of worlds: as above, lane by lane
    const MaskOf<T> z = r.lengthNearlyZero;
    r.lengthDot = selectT(z, T(0), r.lengthDot);
    for (int i = 0; i < 3; ++i) r.f_AP[i] = selectT(z, T(0), r.f_AP[i]);
    r.potentialEnergy = selectT(z, T(0.5) * stiffness * square(r.length - freeLength), r.potentialEnergy);
    r.conservativePower = selectT(z, T(0), r.conservativePower);
    r.nonConservativePower = selectT(z, T(0), r.nonConservativePower);
  }
  return r;
}

// Simbody's Force::ConstantForce on one body: the force f_G (fixed in Ground) applied at the station
// p_BS of the body, at the point p_GS = X_GB p_BS. Its work is that of a uniform field, so its
// potential energy is -f_G . p_GS (Simbody counts none, and then does not conserve energy).
template <class T>
struct ConstantForceQuantities {
  Vec3<T> p_GS;       // the station, in G
  T potentialEnergy;  // -f_G . p_GS
};
template <class T>
LOCKSTEP_HD_INLINE ConstantForceQuantities<T> evaluateConstantForce(const Transform<T>& X_GB, const Vec3<T>& p_BS,
                                                                    const Vec3<T>& f_G) {
  const Vec3<T> p_GS = X_GB * p_BS;
  return {p_GS, -dot(f_G, p_GS)};
}

// Simbody 3.7's SmoothSphereHalfSpaceForce, one sphere on a body against a half-space on Ground.
// With n the unit contact normal (into the half-space, against the plane's outward normal), c_G the
// sphere's center, x = R - (c_G - p_plane) . n_out the indentation, the force on the half-space
//   fh  = (4/3) k sqrt(R k) (x^2 + cf)^(3/4) (1/2 + tanh(bd x)/2),  k = E^(2/3) / 2
//   fhc = fh (1 + (3/2) c vn) (1/2 + tanh(bv (vn + 2/(3 c)))/2)
//   vs  = sqrt(|vt|^2 + cf),  ff = fhc (min(vs/vtr, 1) (ud + 2 (us - ud)/(1 + (vs/vtr)^2)) + uv vs)
//   force = fhc n + ff vt / vs
// where v = vn n + vt is the velocity of the sphere's body point at the contact point
// P = c_G + R n - x n / 2 (midway into the overlap). The sphere gets -force at P. (c = 0 makes
// 2/(3c) infinite and the second tanh 1, as in Simbody.)
template <class T>
struct GroundContactQuantities {
  Vec3<T> p_GP;           // contact point, in G
  Vec3<T> forceOnSphere;  // at P, in G
  T penetration;          // x (negative: apart)
  T normalVelocity;       // vn, positive while approaching
  T slipSpeed;            // |vt| (without cf)
  T normalForce;          // fhc: the force on the sphere along the plane's outward normal
  T frictionForce;        // |ff vt / vs|
  T power;                // forceOnSphere . v: the power the contact delivers to the body
};

template <class T>
struct GroundContactParams {
  Vec3<T> center;  // on the body, in B
  T radius;
  Vec3<T> normal;  // outward, any length
  Vec3<T> point;   // on the plane, in G
  T stiffness, dissipation, staticFriction, dynamicFriction, viscousFriction, transitionVelocity, cf, bd, bv;
};

// v / |v| for any finite nonzero v: scaled by its largest component first, so that |v|^2 neither
// overflows (components near 1e155 in double) nor underflows (near 1e-170) on the way.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> unitVector(const Vec3<T>& v) {
  const T a = absT(v[0]), b = absT(v[1]), c = absT(v[2]);
  const T ab = selectT(a > b, a, b);
  const Vec3<T> s = v / selectT(ab > c, ab, c);
  return s / norm(s);
}

template <class T>
LOCKSTEP_HD GroundContactQuantities<T> evaluateGroundContact(const Transform<T>& X_GB, const SpatialVec<T>& V_GB,
                                                             const GroundContactParams<T>& p) {
  GroundContactQuantities<T> r;
  const Vec3<T> n = -unitVector(p.normal);  // into the half-space
  const Vec3<T> c_G = X_GB * p.center;
  const T x = p.radius + dot(c_G - p.point, n);
  r.penetration = x;
  r.p_GP = c_G + (p.radius - T(0.5) * x) * n;
  const Vec3<T> v = V_GB.lin + cross(V_GB.ang, r.p_GP - X_GB.p);
  const T vn = dot(v, n);
  const Vec3<T> vt = v - vn * n;
  r.normalVelocity = vn;

  const T k = T(0.5) * powT(p.stiffness, T(2.0 / 3.0));
  const T s = sqrtT(x * x + p.cf);
  const T fhPos = T(4.0 / 3.0) * k * sqrtT(p.radius * k) * (s * sqrtT(s));
  const T fh = fhPos * (T(0.5) + T(0.5) * tanhT(p.bd * x));
  const T fhcPos = fh * (T(1) + T(1.5) * p.dissipation * vn);
  const T fhc = fhcPos * (T(0.5) + T(0.5) * tanhT(p.bv * (vn + T(2) / (T(3) * p.dissipation))));

  const T vt2 = normSqr(vt);
  const T vs = sqrtT(vt2 + p.cf);
  const T vrel = vs / p.transitionVelocity;
  const T ramp = selectT(vrel < T(1), vrel, T(1));
  const T ff = fhc * (ramp * (p.dynamicFriction + T(2) * (p.staticFriction - p.dynamicFriction) / (T(1) + vrel * vrel)) +
                      p.viscousFriction * vs);
  const Vec3<T> force = fhc * n + (ff / vs) * vt;
  r.forceOnSphere = -force;
  r.slipSpeed = sqrtT(vt2);
  r.normalForce = fhc;
  r.frictionForce = absT(ff) * r.slipSpeed / vs;
  r.power = dot(r.forceOnSphere, v);
  return r;
}

// A joint stop (Simbody's Force::MobilityLinearStop) on a coordinate q whose rate is its speed
// u: no force within [lower, upper]; beyond a bound, with x = q - bound,
//   f = min(0, -k x (1 + d u)) above the upper bound, f = max(0, -k x (1 - d u)) below the lower one
// (Hunt-Crossley-like dissipation, never a sticking force). Bounds of -/+infinity: no stop there.
template <class T>
struct JointStopQuantities {
  T force;             // generalized force f on the speed
  T potentialEnergy;   // k x^2 / 2
  T powerDissipation;  // -(f + k x) u >= 0: the power f loses against the elastic -k x
};

template <class T>
LOCKSTEP_HD_INLINE JointStopQuantities<T> evaluateJointStop(T q, T u, T lower, T upper, T k, T d) {
  const MaskOf<T> above = q > upper, below = q < lower;
  const T x = selectT(above, q - upper, selectT(below, q - lower, T(0)));
  const T fAbove = -k * x * (T(1) + d * u), fBelow = -k * x * (T(1) - d * u);
  JointStopQuantities<T> r;
  r.force = selectT(above, selectT(fAbove < T(0), fAbove, T(0)), selectT(fBelow > T(0), fBelow, T(0)));
  r.potentialEnergy = T(0.5) * k * x * x;
  r.powerDissipation = -(r.force + k * x) * u;
  return r;
}

// The mobility force an actuator applies on speed i: the user's action tau taken as a control
// (clamped to [controlLower, controlUpper], times the gear: MJCF's motor), plus, by mode (0 torque,
// 1 position, 2 velocity), kp (target position - q) + kd (target velocity - u) (Simbody's
// MobilityLinearSpring with q0 at the target, plus a MobilityLinearDamper about the target
// velocity), clamped to [-limit, limit]. A gear of 1 and an unbounded control range leave tau as it
// is, bit for bit. q is the speed's coordinate (0 where it has none; only torque mode is allowed there).
template <class T>
LOCKSTEP_HD_INLINE T actuatorEffort(T tau, T q, T u, T targetPosition, T targetVelocity, T mode, T kp, T kd,
                                    T gear, T controlLower, T controlUpper, T limit) {
  const T control = selectT(tau > controlUpper, controlUpper, selectT(tau < controlLower, controlLower, tau));
  const T kpOn = selectT(mode == T(1), kp, T(0));
  const T kdOn = selectT(mode == T(0), T(0), kd);
  const T effort = gear * control + kpOn * (targetPosition - q) + kdOn * (targetVelocity - u);
  return selectT(effort > limit, limit, selectT(effort < -limit, -limit, effort));
}

// A linear spring on a coordinate whose rate is its speed (MJCF's joint stiffness about springref):
// f = -k (q - reference), potential energy k (q - reference)^2 / 2.
template <class T>
struct JointSpringQuantities {
  T force;
  T potentialEnergy;
};
template <class T>
LOCKSTEP_HD_INLINE JointSpringQuantities<T> evaluateJointSpring(T q, T stiffness, T reference) {
  const T x = q - reference;
  return {-stiffness * x, T(0.5) * stiffness * x * x};
}

}  // namespace lockstep
