// Lockstep inertias: the rigid-body SpatialInertia and the ArticulatedInertia of the
// articulated-body algorithm, both about a stated origin and expressed in a stated frame
// (in the sweep: about each body origin Bo, expressed in Ground).
#pragma once

#include "lockstep/physics/spatial.h"

namespace lockstep {

// Rigid-body spatial inertia about an origin O: mass m, center of mass p_OC, inertia J about O.
//   I = [ J        m [c]x ]
//       [ -m [c]x  m 1    ]
template <class T>
struct SpatialInertia {
  T m;
  Vec3<T> c;    // p_OC, center of mass from the origin
  SymMat33<T> J;  // inertia about the origin O

  // From mass, center of mass and the central inertia (about the center of mass).
  LOCKSTEP_HD_INLINE static SpatialInertia fromCentral(T mass, const Vec3<T>& com, const SymMat33<T>& Ic) {
    return {mass, com, Ic + mass * pointInertia(com)};
  }
  // The inertia of a unit point mass at r about the origin: |r|^2 1 - r ~r.
  LOCKSTEP_HD_INLINE static SymMat33<T> pointInertia(const Vec3<T>& r) {
    return {r[1] * r[1] + r[2] * r[2], r[0] * r[0] + r[2] * r[2], r[0] * r[0] + r[1] * r[1],
            -r[0] * r[1], -r[0] * r[2], -r[1] * r[2]};
  }
  LOCKSTEP_HD_INLINE SymMat33<T> centralInertia() const { return J - m * pointInertia(c); }
  // The same body's inertia about the new origin O' = O + s.
  LOCKSTEP_HD_INLINE SpatialInertia shift(const Vec3<T>& s) const {
    const Vec3<T> c2 = c - s;
    return {m, c2, J + m * (pointInertia(c2) - pointInertia(c))};
  }
  // Re-express in A, given R_AB when this inertia is expressed in B.
  LOCKSTEP_HD_INLINE SpatialInertia reexpress(const Rotation<T>& R_AB) const {
    return {m, R_AB * c, reexpressSym(R_AB.R, J)};
  }
  // Spatial momentum I*V for V = [w; v] at the origin.
  LOCKSTEP_HD_INLINE SpatialVec<T> operator*(const SpatialVec<T>& V) const {
    return {J * V.ang + m * cross(c, V.lin), m * (V.lin + cross(V.ang, c))};
  }
  // Velocity-dependent inertial force about the origin: [w x (J w); m w x (w x c)]. With it, the
  // Newton-Euler equations at the origin read F = I*A + gyroscopicForce(w).
  LOCKSTEP_HD_INLINE SpatialVec<T> gyroscopicForce(const Vec3<T>& w) const {
    return {cross(w, J * w), m * cross(w, cross(w, c))};
  }
  LOCKSTEP_HD_INLINE T kineticEnergy(const SpatialVec<T>& V) const { return T(0.5) * dot(V, (*this) * V); }
  LOCKSTEP_HD_INLINE SpatialMat<T> toSpatialMat() const {
    const Mat33<T> mc = crossMat(m * c);
    return {J.toMat33(), mc, transpose(mc), m * Mat33<T>::identity()};
  }
};

// Articulated-body inertia P = [J F; ~F M] about an origin, stored as its 21 numbers
// (M and J symmetric, F full). Simbody works with these only in Ground, so they are never rotated.
template <class T>
struct ArticulatedInertia {
  SymMat33<T> M;  // mass distribution
  Mat33<T> F;     // first mass moment distribution
  SymMat33<T> J;  // inertia

  LOCKSTEP_HD_INLINE static ArticulatedInertia zero() { return {SymMat33<T>::zero(), Mat33<T>::zero(), SymMat33<T>::zero()}; }
  // Every rigid-body inertia is the articulated inertia of the unarticulated body. 12 flops.
  LOCKSTEP_HD_INLINE static ArticulatedInertia fromRigid(const SpatialInertia<T>& I) {
    return {SymMat33<T>::diagonal(I.m, I.m, I.m), crossMat(I.m * I.c), I.J};
  }
  // 21 flops each.
  LOCKSTEP_HD_INLINE ArticulatedInertia& operator+=(const ArticulatedInertia& b) {
    M += b.M; F = F + b.F; J += b.J;
    return *this;
  }
  LOCKSTEP_HD_INLINE ArticulatedInertia& operator-=(const ArticulatedInertia& b) {
    M -= b.M; F = F - b.F; J -= b.J;
    return *this;
  }
  // P*V = [J b + F a; ~F b + M a]. 66 flops.
  LOCKSTEP_HD_INLINE SpatialVec<T> operator*(const SpatialVec<T>& v) const {
    return {J * v.ang + F * v.lin, transposeTimes(F, v.ang) + M * v.lin};
  }
  // P times a row of n spatial vectors: out[j] = P*in[j]. 66*n flops.
  LOCKSTEP_HD_INLINE void timesColumns(const SpatialVec<T>* in, SpatialVec<T>* out, int n) const {
    for (int j = 0; j < n; ++j) out[j] = (*this) * in[j];
  }
  // Rigid shift of the origin by -s (Simbody's historical convention, opposite to
  // SpatialInertia::shift):  P' = [1 sx; 0 1] P [1 0; -sx 1], so that with l = p_PB_G,
  // Phi * P * ~Phi == P.shift(l).  F' = F + sx M;  J' = J + sx ~F - F' sx;  M' = M.
  // 84 flops: 36 for F', 8 for each of the 6 independent entries of J'.
  LOCKSTEP_HD_INLINE ArticulatedInertia shift(const Vec3<T>& s) const {
    ArticulatedInertia r;
    r.M = M;
    const Mat33<T> Mm = M.toMat33();
    // Column j of sx*M is s x M.col(j).
    for (int j = 0; j < 3; ++j) {
      const Vec3<T> c = cross(s, Mm.col(j));
      for (int i = 0; i < 3; ++i) r.F.m[i][j] = F.m[i][j] + c[i];
    }
    // (sx ~F)_ij = (s x F.row(j))_i and (F' sx)_ij = -(s x F'.row(i))_j, so
    // J'_ij = J_ij + (s x F.row(j))_i + (s x F'.row(i))_j, evaluated on the lower triangle.
    Vec3<T> sF[3], sFp[3];
    for (int k = 0; k < 3; ++k) {
      sF[k] = cross(s, F.row(k));
      sFp[k] = cross(s, r.F.row(k));
    }
    r.J.xx = J.xx + sF[0][0] + sFp[0][0];
    r.J.yy = J.yy + sF[1][1] + sFp[1][1];
    r.J.zz = J.zz + sF[2][2] + sFp[2][2];
    r.J.xy = J.xy + sF[0][1] + sFp[1][0];
    r.J.xz = J.xz + sF[0][2] + sFp[2][0];
    r.J.yz = J.yz + sF[1][2] + sFp[2][1];
    return r;
  }
  LOCKSTEP_HD_INLINE ArticulatedInertia& shiftInPlace(const Vec3<T>& s) { return *this = shift(s); }
  LOCKSTEP_HD_INLINE SpatialMat<T> toSpatialMat() const { return {J.toMat33(), F, transpose(F), M.toMat33()}; }
};

template <class T>
LOCKSTEP_HD_INLINE ArticulatedInertia<T> operator+(ArticulatedInertia<T> l, const ArticulatedInertia<T>& r) {
  return l += r;
}
template <class T>
LOCKSTEP_HD_INLINE ArticulatedInertia<T> operator-(ArticulatedInertia<T> l, const ArticulatedInertia<T>& r) {
  return l -= r;
}

}  // namespace lockstep
