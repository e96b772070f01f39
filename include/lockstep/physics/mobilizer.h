// Lockstep mobilizers (joints), in Simbody's conventions (docs/conventions.md).
//
// A mobilizer connects a frame F fixed on the parent P to a frame M fixed on the child B:
//   X_PB = X_PF * X_FM(q) * ~X_BM.
// Its relative spatial velocity, measured at Mo and expressed in F, is V_FM = H_FM(q) * u, and its
// relative acceleration is A_FM = H_FM * udot + HdotU_FM (the "bias" at udot = 0).
//
// | type        | q                                | u                                 |
// | Weld        | none                             | none                              |
// | Pin         | angle about Fz = Mz              | qdot                              |
// | Slider      | translation along Fx             | qdot                              |
// | Universal   | body-fixed X then Y angles       | qdot                              |
// | Cylinder    | (angle about z, translation z)   | qdot                              |
// | Planar      | (angle about z, x, y)            | qdot                              |
// | Gimbal      | body-fixed X, Y, Z angles        | qdot                              |
// | Ball        | quaternion (w, x, y, z) of R_FM  | w_FM expressed in F               |
// | Translation | p_FM                             | v_FM (in F)                       |
// | Free        | quaternion, then p_FM (7 q)      | [w_FM in F; v_FM in F] (6 u)      |
#pragma once

#include <cstdint>

#include "lockstep/physics/layout.h"

namespace lockstep {

enum class MobilizerType : std::int8_t {
  Weld = 0,
  Pin,
  Slider,
  Universal,
  Cylinder,
  Planar,
  Gimbal,
  Ball,
  Translation,
  Free,
};
constexpr int kMobilizerTypeCount = 10;
constexpr int kMaxMobilizerU = 6;  // the most generalized speeds any mobilizer has
constexpr int kMaxMobilizerQ = 7;

LOCKSTEP_HD_INLINE int mobilizerNq(MobilizerType t) {
  switch (t) {
    case MobilizerType::Weld: return 0;
    case MobilizerType::Pin: case MobilizerType::Slider: return 1;
    case MobilizerType::Universal: case MobilizerType::Cylinder: return 2;
    case MobilizerType::Planar: case MobilizerType::Gimbal: case MobilizerType::Translation: return 3;
    case MobilizerType::Ball: return 4;
    case MobilizerType::Free: return 7;
  }
  return 0;
}
LOCKSTEP_HD_INLINE int mobilizerNu(MobilizerType t) {
  switch (t) {
    case MobilizerType::Ball: return 3;
    case MobilizerType::Free: return 6;
    default: return mobilizerNq(t);
  }
}
// Index of the first quaternion coordinate, or -1 when the mobilizer has no quaternion.
LOCKSTEP_HD_INLINE int mobilizerQuaternionIndex(MobilizerType t) {
  return (t == MobilizerType::Ball || t == MobilizerType::Free) ? 0 : -1;
}

// Whether each coordinate's qdot is its speed u (all but Ball and Free): the mobilizers that take
// joint stops and PD actuators; coordinate k of such a mobilizer goes with its speed k.
LOCKSTEP_HD_INLINE bool mobilizerQdotIsU(MobilizerType t) {
  return t != MobilizerType::Ball && t != MobilizerType::Free;
}

// R_FM of the quaternion q[0..3], normalized on the fly (q need not be unit length).
template <class T, class Q>
LOCKSTEP_HD_INLINE Rotation<T> quaternionRotation(const Q& q) {
  const T n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const T s = T(1) / sqrtT(n2);
  return Rotation<T>::fromQuaternion(q[0] * s, q[1] * s, q[2] * s, q[3] * s);
}

// X_FM(q). Q is anything indexable (a Strided view or a pointer).
template <class T, class Q>
LOCKSTEP_HD Transform<T> mobilizerX_FM(MobilizerType t, const Q& q) {
  Transform<T> X = Transform<T>::identity();
  switch (t) {
    case MobilizerType::Weld: break;
    case MobilizerType::Pin: X.R = Rotation<T>::aboutAxis(2, q[0]); break;
    case MobilizerType::Slider: X.p[0] = q[0]; break;
    case MobilizerType::Universal:
      X.R = Rotation<T>::aboutAxis(0, q[0]) * Rotation<T>::aboutAxis(1, q[1]);
      break;
    case MobilizerType::Cylinder:
      X.R = Rotation<T>::aboutAxis(2, q[0]);
      X.p[2] = q[1];
      break;
    case MobilizerType::Planar:
      X.R = Rotation<T>::aboutAxis(2, q[0]);
      X.p[0] = q[1];
      X.p[1] = q[2];
      break;
    case MobilizerType::Gimbal: X.R = Rotation<T>::bodyFixedXYZ({{q[0], q[1], q[2]}}); break;
    case MobilizerType::Ball: X.R = quaternionRotation<T>(q); break;
    case MobilizerType::Translation: X.p = {{q[0], q[1], q[2]}}; break;
    case MobilizerType::Free:
      X.R = quaternionRotation<T>(q);
      X.p = {{q[4], q[5], q[6]}};
      break;
  }
  return X;
}

// X_GF * X_FM(q), without forming X_FM where its structure allows (Weld, Pin, Slider: the most
// common mobilizers of chains and robot arms).
template <class T, class Q>
LOCKSTEP_HD_INLINE Transform<T> composeMobilizer(const Transform<T>& X_GF, MobilizerType t, const Q& q) {
  switch (t) {
    case MobilizerType::Weld: return X_GF;
    case MobilizerType::Pin: {  // R_GF * Rz(q): columns c*x + s*y, -s*x + c*y, z
      const T c = cosT(q[0]), s = sinT(q[0]);
      Transform<T> X = X_GF;
      for (int i = 0; i < 3; ++i) {
        const T x = X_GF.R.R.m[i][0], y = X_GF.R.R.m[i][1];
        X.R.R.m[i][0] = c * x + s * y;
        X.R.R.m[i][1] = c * y - s * x;
      }
      return X;
    }
    case MobilizerType::Slider: return {X_GF.R, X_GF.p + q[0] * X_GF.R.R.col(0)};
    default: return X_GF * mobilizerX_FM<T>(t, q);
  }
}

// The columns of H_FM(q): H[j] is the spatial velocity (at Mo, in F) per unit u_j.
template <class T, class Q>
LOCKSTEP_HD void mobilizerH_FM(MobilizerType t, const Q& q, SpatialVec<T>* H) {
  const Vec3<T> ex = Vec3<T>::unit(0), ey = Vec3<T>::unit(1), ez = Vec3<T>::unit(2), o = Vec3<T>::zero();
  switch (t) {
    case MobilizerType::Weld: break;
    case MobilizerType::Pin: H[0] = {ez, o}; break;
    case MobilizerType::Slider: H[0] = {o, ex}; break;
    case MobilizerType::Universal: {
      const T c0 = cosT(q[0]), s0 = sinT(q[0]);
      H[0] = {ex, o};
      H[1] = {{{T(0), c0, s0}}, o};  // Rx(q0) * ey
      break;
    }
    case MobilizerType::Cylinder:
      H[0] = {ez, o};
      H[1] = {o, ez};
      break;
    case MobilizerType::Planar:
      H[0] = {ez, o};
      H[1] = {o, ex};
      H[2] = {o, ey};
      break;
    case MobilizerType::Gimbal: {
      const T c0 = cosT(q[0]), s0 = sinT(q[0]), c1 = cosT(q[1]), s1 = sinT(q[1]);
      H[0] = {ex, o};
      H[1] = {{{T(0), c0, s0}}, o};               // Rx(q0) * ey
      H[2] = {{{s1, -s0 * c1, c0 * c1}}, o};       // Rx(q0) * Ry(q1) * ez
      break;
    }
    case MobilizerType::Ball:
      H[0] = {ex, o};
      H[1] = {ey, o};
      H[2] = {ez, o};
      break;
    case MobilizerType::Translation:
      H[0] = {o, ex};
      H[1] = {o, ey};
      H[2] = {o, ez};
      break;
    case MobilizerType::Free:
      H[0] = {ex, o};
      H[1] = {ey, o};
      H[2] = {ez, o};
      H[3] = {o, ex};
      H[4] = {o, ey};
      H[5] = {o, ez};
      break;
  }
}

// Whether H_FM depends on q, so that HdotU_FM can be nonzero.
LOCKSTEP_HD_INLINE bool mobilizerHasHdot(MobilizerType t) {
  return t == MobilizerType::Universal || t == MobilizerType::Gimbal;
}

// HdotU_FM = (d/dt H_FM) * u, at Mo in F: nonzero only where H depends on q (Universal, Gimbal).
template <class T, class Q, class U>
LOCKSTEP_HD SpatialVec<T> mobilizerHdotU_FM(MobilizerType t, const Q& q, const U& u) {
  SpatialVec<T> A = SpatialVec<T>::zero();
  if (t == MobilizerType::Universal) {
    // d/dt (Rx(q0) ey) = (u0 ex) x (Rx(q0) ey).
    const T c0 = cosT(q[0]), s0 = sinT(q[0]);
    A.ang = {{T(0), -u[0] * u[1] * s0, u[0] * u[1] * c0}};
  } else if (t == MobilizerType::Gimbal) {
    const T c0 = cosT(q[0]), s0 = sinT(q[0]), c1 = cosT(q[1]), s1 = sinT(q[1]);
    const Vec3<T> ey1 = {{T(0), c0, s0}};                 // Rx(q0) ey
    const Vec3<T> ez2 = {{s1, -s0 * c1, c0 * c1}};        // Rx(q0) Ry(q1) ez
    const Vec3<T> w01 = {{u[0], u[1] * c0, u[1] * s0}};   // angular velocity of Rx(q0) Ry(q1)
    A.ang = u[1] * cross(Vec3<T>{{u[0], T(0), T(0)}}, ey1) + u[2] * cross(w01, ez2);
  }
  return A;
}

// qdot from u. Quaternion rates use q as given (docs/conventions.md).
template <class T, class Q, class U, class QD>
LOCKSTEP_HD void mobilizerQdot(MobilizerType t, const Q& q, const U& u, QD& qdot) {
  switch (t) {
    case MobilizerType::Ball:
    case MobilizerType::Free: {
      const T qq[4] = {q[0], q[1], q[2], q[3]};
      T qd[4];
      quaternionRate(qq, Vec3<T>{{u[0], u[1], u[2]}}, qd);
      for (int i = 0; i < 4; ++i) qdot[i] = qd[i];
      if (t == MobilizerType::Free) {
        qdot[4] = u[3];
        qdot[5] = u[4];
        qdot[6] = u[5];
      }
      break;
    }
    default: {
      const int n = mobilizerNq(t);
      for (int i = 0; i < n; ++i) qdot[i] = u[i];
    }
  }
}

// q = q0 advanced by h u along the mobilizer's manifold (MuJoCo's mj_integratePos): q0 + h u where
// qdot is u; a Ball's or Free's quaternion, made unit length, times the rotation by h w on the right,
// w being the angular velocity in M (mobilizerSpeedsInM, as MuJoCo's qvel holds it), and a Free's
// translation plus h v.
template <class T, class Q0, class U, class Q>
LOCKSTEP_HD void mobilizerIntegrateQ(MobilizerType t, const Q0& q0, const U& u, T h, Q& q) {
  if (mobilizerQdotIsU(t)) {
    for (int i = 0; i < mobilizerNq(t); ++i) q[i] = q0[i] + h * u[i];
    return;
  }
  const T n0 = sqrtT(q0[0] * q0[0] + q0[1] * q0[1] + q0[2] * q0[2] + q0[3] * q0[3]);
  const T s0 = selectT(n0 > T(0), T(1) / n0, T(1));
  const T a[4] = {q0[0] * s0, q0[1] * s0, q0[2] * s0, q0[3] * s0};
  const T speed = sqrtT(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  const MaskOf<T> turning = speed > T(0);
  const T half = T(0.5) * h * speed;
  const T k = selectT(turning, sinT(half) / selectT(turning, speed, T(1)), T(0));
  const T b[4] = {selectT(turning, cosT(half), T(1)), k * u[0], k * u[1], k * u[2]};
  q[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  q[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  q[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  q[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  if (t == MobilizerType::Free)
    for (int i = 0; i < 3; ++i) q[4 + i] = q0[4 + i] + h * u[3 + i];
}

// A Runge-Kutta stage's speeds on the rotation group (Munthe-Kaas's method, as MuJoCo 4's RK4): the
// stage's rotation from q0 is exp(theta), and a Ball's or Free's angular velocity w (in M) there moves
// theta at dexp^-1_theta(w), taken to second order: w + theta x w / 2 + theta x (theta x w) / 12. The
// others' speeds, and a Free's translation, are the rates of their coordinates as they are.
template <class T>
LOCKSTEP_HD void mobilizerStageRates(MobilizerType t, const T theta[3], T speeds[kMaxMobilizerU]) {
  if (mobilizerQdotIsU(t)) return;
  const Vec3<T> th = makeVec3(theta[0], theta[1], theta[2]), w = makeVec3(speeds[0], speeds[1], speeds[2]);
  const Vec3<T> tw = cross(th, w);
  const Vec3<T> rate = w + T(0.5) * tw + (T(1) / T(12)) * cross(th, tw);
  for (int i = 0; i < 3; ++i) speeds[i] = rate[i];
}

// The mobilizer's speeds u with a Ball's or Free's angular velocity expressed in M instead of F
// (w_M = R_FM' w_F), as MuJoCo's qvel holds it; the others' as they are.
template <class T, class Q, class U>
LOCKSTEP_HD void mobilizerSpeedsInM(MobilizerType t, const Q& q, const U& u, T out[kMaxMobilizerU]) {
  const int n = mobilizerNu(t);
  for (int i = 0; i < n; ++i) out[i] = u[i];
  if (mobilizerQdotIsU(t)) return;
  const T qq[4] = {q[0], q[1], q[2], q[3]};
  const Rotation<T> R = quaternionRotation<T>(qq);
  for (int i = 0; i < 3; ++i) out[i] = R(0, i) * u[0] + R(1, i) * u[1] + R(2, i) * u[2];
}

// The inverse of mobilizerSpeedsInM: speeds whose Ball or Free angular velocity is in M, in F
// (w_F = R_FM w_M).
template <class T, class Q>
LOCKSTEP_HD void mobilizerSpeedsInF(MobilizerType t, const Q& q, const T in[kMaxMobilizerU], T out[kMaxMobilizerU]) {
  const int n = mobilizerNu(t);
  for (int i = 0; i < n; ++i) out[i] = in[i];
  if (mobilizerQdotIsU(t)) return;
  const T qq[4] = {q[0], q[1], q[2], q[3]};
  const Rotation<T> R = quaternionRotation<T>(qq);
  for (int i = 0; i < 3; ++i) out[i] = R(i, 0) * in[0] + R(i, 1) * in[1] + R(i, 2) * in[2];
}

// Makes the quaternion of a Ball or Free mobilizer unit length; no-op for the others.
template <class T, class Q>
LOCKSTEP_HD_INLINE void mobilizerNormalizeQ(MobilizerType t, Q& q) {
  if (mobilizerQuaternionIndex(t) < 0) return;
  const T n = sqrtT(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const MaskOf<T> positive = n > T(0);
  if (!anyLane(positive)) return;
  const T s = T(1) / n;
  for (int i = 0; i < 4; ++i) q[i] = selectT(positive, q[i] * s, q[i]);
}

}  // namespace lockstep
