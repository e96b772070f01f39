// Lockstep memory layout: the one accessor through which every per-world array is read.
//
// All worlds of a batch live in structure-of-arrays storage with the world index innermost:
// component c of world w of a field is at  base[c * nWorlds + w],  so that consecutive GPU
// threads (consecutive worlds) touch consecutive addresses. A world sees each field as a
// Strided view (pointer to its component 0, stride between components). The same per-world code
// runs on the CPU with stride 1 over a per-thread workspace; changing the layout means changing
// only how Strided views are made (BatchView::world and the CPU backend).
#pragma once

#include <cstdint>
#include <type_traits>

#include "lockstep/physics/inertia.h"

namespace lockstep {

// Whether every view of T has unit stride, known at compile time: the CPU backend's packs (lanes.h),
// whose worlds' components lie one after another in a thread's own storage. Their views then hold
// no stride, and every index is a constant offset from the pointer.
template <class T>
struct UnitStrideViews : std::false_type {};

template <class T, bool kUnit = UnitStrideViews<std::remove_const_t<T>>::value>
struct Strided {
  T* p;
  std::int64_t stride;

  LOCKSTEP_HD_INLINE T& operator[](std::int64_t i) const { return p[i * stride]; }
  // The view starting k components further on.
  LOCKSTEP_HD_INLINE Strided operator+(std::int64_t k) const { return {p + k * stride, stride}; }
  // A view of mutable data converts to a read-only view.
  template <class U = T, class = std::enable_if_t<!std::is_const<U>::value>>
  LOCKSTEP_HD_INLINE operator Strided<const U>() const {
    return {p, stride};
  }
};

// The unit-stride form: the same interface, stride 1 a constant.
template <class T>
struct Strided<T, true> {
  T* p;
  static constexpr std::int64_t stride = 1;

  Strided() = default;
  LOCKSTEP_HD_INLINE Strided(T* data, std::int64_t /* always 1 for these views */) : p(data) {}

  LOCKSTEP_HD_INLINE T& operator[](std::int64_t i) const { return p[i]; }
  LOCKSTEP_HD_INLINE Strided operator+(std::int64_t k) const { return {p + k, 1}; }
  template <class U = T, class = std::enable_if_t<!std::is_const<U>::value>>
  LOCKSTEP_HD_INLINE operator Strided<const U>() const {
    return {p, 1};
  }
};

// ---- packing small types into strided storage -------------------------------------------------
// Sizes in scalars: Vec3 3, SpatialVec 6, Transform 12 (R row-major, then p), ArticulatedInertia 21
// (M: xx yy zz xy xz yz, F row-major, J: xx yy zz xy xz yz), SymMat33 6.

template <class T, class S>
LOCKSTEP_HD_INLINE Vec3<T> loadVec3(Strided<S> d) {
  return {{d[0], d[1], d[2]}};
}
template <class T>
LOCKSTEP_HD_INLINE void storeVec3(Strided<T> d, const Vec3<T>& v) {
  d[0] = v[0]; d[1] = v[1]; d[2] = v[2];
}
template <class T, class S>
LOCKSTEP_HD_INLINE SpatialVec<T> loadSpatialVec(Strided<S> d) {
  return {{{d[0], d[1], d[2]}}, {{d[3], d[4], d[5]}}};
}
template <class T>
LOCKSTEP_HD_INLINE void storeSpatialVec(Strided<T> d, const SpatialVec<T>& v) {
  for (int i = 0; i < 6; ++i) d[i] = v[i];
}
template <class T>
LOCKSTEP_HD_INLINE void addSpatialVec(Strided<T> d, const SpatialVec<T>& v) {
  for (int i = 0; i < 6; ++i) d[i] += v[i];
}
template <class T, class S>
LOCKSTEP_HD_INLINE SymMat33<T> loadSymMat33(Strided<S> d) {
  return {d[0], d[1], d[2], d[3], d[4], d[5]};
}
template <class T>
LOCKSTEP_HD_INLINE void storeSymMat33(Strided<T> d, const SymMat33<T>& s) {
  d[0] = s.xx; d[1] = s.yy; d[2] = s.zz; d[3] = s.xy; d[4] = s.xz; d[5] = s.yz;
}
template <class T, class S>
LOCKSTEP_HD_INLINE Transform<T> loadTransform(Strided<S> d) {
  Transform<T> X;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) X.R.R.m[i][j] = d[3 * i + j];
  X.p = {{d[9], d[10], d[11]}};
  return X;
}
// The origin p of a stored Transform alone.
template <class T, class S>
LOCKSTEP_HD_INLINE Vec3<T> loadTransformOrigin(Strided<S> d) {
  return {{d[9], d[10], d[11]}};
}
template <class T>
LOCKSTEP_HD_INLINE void storeTransform(Strided<T> d, const Transform<T>& X) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d[3 * i + j] = X.R.R.m[i][j];
  d[9] = X.p[0]; d[10] = X.p[1]; d[11] = X.p[2];
}
template <class T, class S>
LOCKSTEP_HD_INLINE ArticulatedInertia<T> loadArticulatedInertia(Strided<S> d) {
  ArticulatedInertia<T> P;
  P.M = loadSymMat33<T>(d);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) P.F.m[i][j] = d[6 + 3 * i + j];
  P.J = loadSymMat33<T>(d + 15);
  return P;
}
template <class T>
LOCKSTEP_HD_INLINE void storeArticulatedInertia(Strided<T> d, const ArticulatedInertia<T>& P) {
  storeSymMat33(d, P.M);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d[6 + 3 * i + j] = P.F.m[i][j];
  storeSymMat33(d + 15, P.J);
}

}  // namespace lockstep
