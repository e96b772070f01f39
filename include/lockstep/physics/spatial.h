// Lockstep spatial algebra (Simbody's SpatialAlgebra, in Jain's pair-of-vectors form).
//
// Every spatial 6-vector in Lockstep is ordered [angular; linear]:
//   spatial velocity     V = [w; v]   (v is the velocity of a stated point, usually the frame origin)
//   spatial acceleration A = [b; a]   (classical accelerations, not Featherstone's spatial ones)
//   spatial force        F = [m; f]   (moment about a stated point; force)
// The flop counts quoted are those of the Simbody reference implementation, which these meet.
#pragma once

#include "lockstep/physics/math.h"

namespace lockstep {

template <class T>
struct SpatialVec {
  Vec3<T> ang;  // angular part: w, b or moment m
  Vec3<T> lin;  // linear part: v, a or force f

  LOCKSTEP_HD_INLINE static SpatialVec zero() { return {Vec3<T>::zero(), Vec3<T>::zero()}; }
  LOCKSTEP_HD_INLINE T& operator[](int i) { return i < 3 ? ang[i] : lin[i - 3]; }
  LOCKSTEP_HD_INLINE const T& operator[](int i) const { return i < 3 ? ang[i] : lin[i - 3]; }
  LOCKSTEP_HD_INLINE SpatialVec& operator+=(const SpatialVec& b) {
    ang += b.ang; lin += b.lin;
    return *this;
  }
  LOCKSTEP_HD_INLINE SpatialVec& operator-=(const SpatialVec& b) {
    ang -= b.ang; lin -= b.lin;
    return *this;
  }
};

template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator+(const SpatialVec<T>& a, const SpatialVec<T>& b) {
  return {a.ang + b.ang, a.lin + b.lin};
}
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator-(const SpatialVec<T>& a, const SpatialVec<T>& b) {
  return {a.ang - b.ang, a.lin - b.lin};
}
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator-(const SpatialVec<T>& a) { return {-a.ang, -a.lin}; }
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator*(T s, const SpatialVec<T>& a) { return {s * a.ang, s * a.lin}; }
// ~a*b, the 6-vector dot product (e.g. power ~F*V).
template <class T>
LOCKSTEP_HD_INLINE T dot(const SpatialVec<T>& a, const SpatialVec<T>& b) {
  return dot(a.ang, b.ang) + dot(a.lin, b.lin);
}
// Re-express both halves: R_AB * V_B.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator*(const Rotation<T>& R, const SpatialVec<T>& v) {
  return {R * v.ang, R * v.lin};
}
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> invTimes(const Rotation<T>& R, const SpatialVec<T>& v) {
  return {R.invTimes(v.ang), R.invTimes(v.lin)};
}
template <class T>
LOCKSTEP_HD_INLINE bool isFinite(const SpatialVec<T>& a) { return isFinite(a.ang) && isFinite(a.lin); }

// SpatialMat: a 6x6 matrix viewed as 2x2 blocks of 3x3 matrices [[b00, b01], [b10, b11]].
template <class T>
struct SpatialMat {
  Mat33<T> b00, b01, b10, b11;

  LOCKSTEP_HD_INLINE T operator()(int i, int j) const {
    const Mat33<T>& blk = i < 3 ? (j < 3 ? b00 : b01) : (j < 3 ? b10 : b11);
    return blk(i % 3, j % 3);
  }
};
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> operator*(const SpatialMat<T>& M, const SpatialVec<T>& v) {
  return {M.b00 * v.ang + M.b01 * v.lin, M.b10 * v.ang + M.b11 * v.lin};
}
template <class T>
LOCKSTEP_HD_INLINE SpatialMat<T> operator*(const SpatialMat<T>& A, const SpatialMat<T>& B) {
  return {A.b00 * B.b00 + A.b01 * B.b10, A.b00 * B.b01 + A.b01 * B.b11, A.b10 * B.b00 + A.b11 * B.b10,
          A.b10 * B.b01 + A.b11 * B.b11};
}
template <class T>
LOCKSTEP_HD_INLINE SpatialMat<T> transpose(const SpatialMat<T>& A) {
  return {transpose(A.b00), transpose(A.b10), transpose(A.b01), transpose(A.b11)};
}

// PhiMatrix for the vector l = p_PB_G from a parent origin P to a child origin B:
//   Phi  * F_B = F_P  (moves a force from B to P):    (m + l x f, f)
//   ~Phi * V_P = V_B  (moves a velocity from P to B): (w, v + w x l)
template <class T>
struct PhiMatrix {
  Vec3<T> l;

  LOCKSTEP_HD_INLINE SpatialVec<T> operator*(const SpatialVec<T>& F) const { return {F.ang + cross(l, F.lin), F.lin}; }
  LOCKSTEP_HD_INLINE SpatialVec<T> transposeTimes(const SpatialVec<T>& V) const {
    return {V.ang, V.lin + cross(V.ang, l)};
  }
  LOCKSTEP_HD_INLINE SpatialMat<T> toSpatialMat() const {
    return {Mat33<T>::identity(), crossMat(l), Mat33<T>::zero(), Mat33<T>::identity()};
  }
};

// ---- Velocity ---------------------------------------------------------------------------------

// V_A_BQ: the velocity V_AB of frame B in A, measured at Bo, re-measured at Q = Bo + r_A. 12 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftVelocityBy(const SpatialVec<T>& V_AB, const Vec3<T>& r_A) {
  return {V_AB.ang, V_AB.lin + cross(V_AB.ang, r_A)};
}
// Shift a velocity measured at point P to point Q (both measured from Ao, in A). 15 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftVelocityFromTo(const SpatialVec<T>& V_A_BP, const Vec3<T>& fromP_A,
                                                    const Vec3<T>& toQ_A) {
  return shiftVelocityBy(V_A_BP, toQ_A - fromP_A);
}

// V_AB_F: velocity of B in A, measured at Bo, expressed in F, from the velocities of A and B in F. 18 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> findRelativeVelocityInF(const Vec3<T>& p_AB_F, const SpatialVec<T>& V_FA,
                                                        const SpatialVec<T>& V_FB) {
  // d/dt in A of p_AB = (d/dt in F of p_AB) - w_FA x p_AB.
  return {V_FB.ang - V_FA.ang, V_FB.lin - V_FA.lin - cross(V_FA.ang, p_AB_F)};
}
// V_AB: velocity of B in A, measured at Bo, expressed in A. 51 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> findRelativeVelocity(const Transform<T>& X_FA, const SpatialVec<T>& V_FA,
                                                     const Transform<T>& X_FB, const SpatialVec<T>& V_FB) {
  return invTimes(X_FA.R, findRelativeVelocityInF(X_FB.p - X_FA.p, V_FA, V_FB));
}
// V_BA_A: velocity of A in B, measured at Ao, still expressed in A. 21 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> reverseRelativeVelocityInA(const Transform<T>& X_AB, const SpatialVec<T>& V_AB) {
  // d/dt in B of p_BoAo = -(v_AB - w_AB x p_AB).
  return {-V_AB.ang, cross(V_AB.ang, X_AB.p) - V_AB.lin};
}
// V_BA: velocity of A in B, measured at Ao, expressed in B. 51 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> reverseRelativeVelocity(const Transform<T>& X_AB, const SpatialVec<T>& V_AB) {
  return invTimes(X_AB.R, reverseRelativeVelocityInA(X_AB, V_AB));
}

// ---- Acceleration -----------------------------------------------------------------------------

// A_A_BQ: the acceleration A_AB of B in A measured at Bo, re-measured at Q = Bo + r_A. 33 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftAccelerationBy(const SpatialVec<T>& A_AB, const Vec3<T>& w_AB,
                                                    const Vec3<T>& r_A) {
  return {A_AB.ang, A_AB.lin + cross(A_AB.ang, r_A) + cross(w_AB, cross(w_AB, r_A))};
}
// Shift an acceleration measured at point P to point Q (both measured from Ao, in A). 36 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftAccelerationFromTo(const SpatialVec<T>& A_A_BP, const Vec3<T>& w_AB,
                                                        const Vec3<T>& fromP_A, const Vec3<T>& toQ_A) {
  return shiftAccelerationBy(A_A_BP, w_AB, toQ_A - fromP_A);
}
// A_AB_F: acceleration of B in A, measured at Bo, expressed in F. 72 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> findRelativeAccelerationInF(const Vec3<T>& p_AB_F, const SpatialVec<T>& V_FA,
                                                            const SpatialVec<T>& A_FA, const SpatialVec<T>& V_FB,
                                                            const SpatialVec<T>& A_FB) {
  const Vec3<T>& w_FA = V_FA.ang;
  const Vec3<T> v_AB_F = V_FB.lin - V_FA.lin - cross(w_FA, p_AB_F);  // relative linear velocity
  // b_AB = d/dt in A of (w_FB - w_FA) = (b_FB - b_FA) - w_FA x w_FB.
  const Vec3<T> b_AB_F = A_FB.ang - A_FA.ang - cross(w_FA, V_FB.ang);
  // a_AB = a_FB - a_FA - b_FA x p - w_FA x (w_FA x p) - 2 w_FA x v_AB.
  const Vec3<T> a_AB_F = A_FB.lin - A_FA.lin - cross(A_FA.ang, p_AB_F) -
                         cross(w_FA, cross(w_FA, p_AB_F) + T(2) * v_AB_F);
  return {b_AB_F, a_AB_F};
}
// A_AB: acceleration of B in A, measured at Bo, expressed in A. 105 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> findRelativeAcceleration(const Transform<T>& X_FA, const SpatialVec<T>& V_FA,
                                                         const SpatialVec<T>& A_FA, const Transform<T>& X_FB,
                                                         const SpatialVec<T>& V_FB, const SpatialVec<T>& A_FB) {
  return invTimes(X_FA.R, findRelativeAccelerationInF(X_FB.p - X_FA.p, V_FA, A_FA, V_FB, A_FB));
}

// ---- Force ------------------------------------------------------------------------------------

// F_AQ: the force F_AP applied at P, moved to Q = P + r_A (moment changes by -(r x f)). 12 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftForceBy(const SpatialVec<T>& F_AP, const Vec3<T>& r_A) {
  return {F_AP.ang - cross(r_A, F_AP.lin), F_AP.lin};
}
// Move a force applied at point P to point Q (both measured from Ao, in A). 15 flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> shiftForceFromTo(const SpatialVec<T>& F_AP, const Vec3<T>& fromP_A,
                                                 const Vec3<T>& toQ_A) {
  return shiftForceBy(F_AP, toQ_A - fromP_A);
}

}  // namespace lockstep
