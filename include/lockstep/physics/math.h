// Lockstep small fixed-size linear algebra: Vec3, Mat33, SymMat33, Rotation, Transform.
//
// Plain value types templated on the scalar (float or double), usable in CUDA kernels and on the
// CPU alike. They carry no dynamic memory and no virtual functions. Frames follow the monogram
// notation of Simbody and Drake: R_AB rotates vectors expressed in B into A, X_AB = (R_AB, p_AB).
#pragma once

#include <cmath>
#include <type_traits>

#include "lockstep/physics/config.h"

namespace lockstep {

// Scalar functions spelled once for float and double, so that the same call compiles in device code.
LOCKSTEP_HD_INLINE float sqrtT(float x) { return sqrtf(x); }
LOCKSTEP_HD_INLINE double sqrtT(double x) { return sqrt(x); }
LOCKSTEP_HD_INLINE float sinT(float x) { return sinf(x); }
LOCKSTEP_HD_INLINE double sinT(double x) { return sin(x); }
LOCKSTEP_HD_INLINE float cosT(float x) { return cosf(x); }
LOCKSTEP_HD_INLINE double cosT(double x) { return cos(x); }
LOCKSTEP_HD_INLINE float atan2T(float y, float x) { return atan2f(y, x); }
LOCKSTEP_HD_INLINE double atan2T(double y, double x) { return atan2(y, x); }
LOCKSTEP_HD_INLINE float absT(float x) { return fabsf(x); }
LOCKSTEP_HD_INLINE double absT(double x) { return fabs(x); }
LOCKSTEP_HD_INLINE float tanhT(float x) { return tanhf(x); }
LOCKSTEP_HD_INLINE double tanhT(double x) { return tanh(x); }
LOCKSTEP_HD_INLINE float powT(float x, float y) { return powf(x, y); }
LOCKSTEP_HD_INLINE double powT(double x, double y) { return pow(x, y); }
LOCKSTEP_HD_INLINE float logT(float x) { return logf(x); }
LOCKSTEP_HD_INLINE double logT(double x) { return log(x); }
#if defined(__CUDA_ARCH__)
LOCKSTEP_HD_INLINE bool isFiniteT(float x) { return isfinite(x); }
LOCKSTEP_HD_INLINE bool isFiniteT(double x) { return isfinite(x); }
#else
LOCKSTEP_HD_INLINE bool isFiniteT(float x) { return std::isfinite(x); }
LOCKSTEP_HD_INLINE bool isFiniteT(double x) { return std::isfinite(x); }
#endif
template <class T>
LOCKSTEP_HD_INLINE T square(T x) { return x * x; }

// ---- lanes --------------------------------------------------------------------------------------
// The per-world code is also instantiated on packs of worlds (the CPU backend's SIMD lanes,
// lockstep/backends/lanes.h). A comparison of packs gives a mask, one truth value per lane, and a status
// holds one set of StatusFlag bits per lane. For a plain scalar the mask is a bool and the status an
// int, and the helpers below are the ordinary branches: the scalar code is unchanged by them.
template <class T>
struct LaneTraits {
  using Scalar = T;
  using Mask = bool;
  using Status = int;
};
template <class T>
using ScalarOf = typename LaneTraits<T>::Scalar;
template <class T>
using MaskOf = typename LaneTraits<T>::Mask;
template <class T>
using StatusOf = typename LaneTraits<T>::Status;

// Whether T carries derivatives along with its value (dual.h's Dual): code that must set them
// otherwise than by differentiating its own operations (the soft solve's implicit function theorem)
// asks.
template <class T>
struct CarriesTangents : std::false_type {};

// m ? a : b, lane by lane.
template <class T>
LOCKSTEP_HD_INLINE T selectT(bool m, const T& a, const T& b) { return m ? a : b; }
LOCKSTEP_HD_INLINE bool anyLane(bool m) { return m; }
LOCKSTEP_HD_INLINE bool allLanes(bool m) { return m; }
// A small integer a stage keeps in a workspace scalar, the same in every lane (soft_constraints.h's
// list of the blocks in use): lanes.h and dual.h read a pack's and a dual's.
LOCKSTEP_HD_INLINE int storedIndex(double x) { return static_cast<int>(x); }
LOCKSTEP_HD_INLINE int storedIndex(float x) { return static_cast<int>(x); }
// Status bits where m holds, 0 elsewhere.
LOCKSTEP_HD_INLINE int flagIf(bool m, int bits) { return m ? bits : 0; }
// The lanes whose status has some bit set.
LOCKSTEP_HD_INLINE bool failed(int status) { return status != 0; }
// A constant that depends on the precision: f in float (and packs of floats), d in double.
template <class T>
LOCKSTEP_HD_INLINE T byPrecision(double f, double d) {
  return T(sizeof(ScalarOf<T>) == 4 ? f : d);
}
// The machine epsilon of the precision.
template <class T>
LOCKSTEP_HD_INLINE T machineEpsilon() {
  return byPrecision<T>(1.1920929e-07, 2.220446049250313e-16);
}
// A lane keeps the status of its first failure: a where a is set, else b.
LOCKSTEP_HD_INLINE int firstFailure(int a, int b) { return a ? a : b; }
// The status where m holds, 0 elsewhere.
LOCKSTEP_HD_INLINE int statusIf(bool m, int status) { return m ? status : 0; }

// ------------------------------------------------------------------------------------------------
// Vec3
template <class T>
struct Vec3 {
  T v[3];

  LOCKSTEP_HD_INLINE T& operator[](int i) { return v[i]; }
  LOCKSTEP_HD_INLINE const T& operator[](int i) const { return v[i]; }
  LOCKSTEP_HD_INLINE static Vec3 zero() { return {{T(0), T(0), T(0)}}; }
  LOCKSTEP_HD_INLINE static Vec3 unit(int axis) {
    Vec3 r = zero();
    r.v[axis] = T(1);
    return r;
  }
  LOCKSTEP_HD_INLINE Vec3& operator+=(const Vec3& b) {
    v[0] += b.v[0]; v[1] += b.v[1]; v[2] += b.v[2];
    return *this;
  }
  LOCKSTEP_HD_INLINE Vec3& operator-=(const Vec3& b) {
    v[0] -= b.v[0]; v[1] -= b.v[1]; v[2] -= b.v[2];
    return *this;
  }
  LOCKSTEP_HD_INLINE Vec3& operator*=(T s) {
    v[0] *= s; v[1] *= s; v[2] *= s;
    return *this;
  }
};

template <class T>
LOCKSTEP_HD_INLINE Vec3<T> makeVec3(T x, T y, T z) { return {{x, y, z}}; }
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator+(const Vec3<T>& a, const Vec3<T>& b) {
  return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}};
}
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator-(const Vec3<T>& a, const Vec3<T>& b) {
  return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
}
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator-(const Vec3<T>& a) { return {{-a[0], -a[1], -a[2]}}; }
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator*(T s, const Vec3<T>& a) { return {{s * a[0], s * a[1], s * a[2]}}; }
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator*(const Vec3<T>& a, T s) { return s * a; }
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator/(const Vec3<T>& a, T s) { return {{a[0] / s, a[1] / s, a[2] / s}}; }
template <class T>
LOCKSTEP_HD_INLINE T dot(const Vec3<T>& a, const Vec3<T>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
// a x b, 9 flops.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
template <class T>
LOCKSTEP_HD_INLINE T normSqr(const Vec3<T>& a) { return dot(a, a); }
template <class T>
LOCKSTEP_HD_INLINE T norm(const Vec3<T>& a) { return sqrtT(dot(a, a)); }
template <class T>
LOCKSTEP_HD_INLINE bool isFinite(const Vec3<T>& a) {
  return isFiniteT(a[0]) && isFiniteT(a[1]) && isFiniteT(a[2]);
}
// m ? a : b, lane by lane (M: bool, or a mask of lanes).
template <class M, class T>
LOCKSTEP_HD_INLINE Vec3<T> selectVec3(const M& m, const Vec3<T>& a, const Vec3<T>& b) {
  return {{selectT(m, a[0], b[0]), selectT(m, a[1], b[1]), selectT(m, a[2], b[2])}};
}
template <class To, class From>
LOCKSTEP_HD_INLINE Vec3<To> castVec3(const Vec3<From>& a) {
  return {{To(a[0]), To(a[1]), To(a[2])}};
}

// ------------------------------------------------------------------------------------------------
// Mat33, row-major.
template <class T>
struct Mat33 {
  T m[3][3];

  LOCKSTEP_HD_INLINE T& operator()(int i, int j) { return m[i][j]; }
  LOCKSTEP_HD_INLINE const T& operator()(int i, int j) const { return m[i][j]; }
  LOCKSTEP_HD_INLINE static Mat33 zero() {
    Mat33 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = T(0);
    return r;
  }
  LOCKSTEP_HD_INLINE static Mat33 identity() {
    Mat33 r = zero();
    r.m[0][0] = r.m[1][1] = r.m[2][2] = T(1);
    return r;
  }
  LOCKSTEP_HD_INLINE Vec3<T> row(int i) const { return {{m[i][0], m[i][1], m[i][2]}}; }
  LOCKSTEP_HD_INLINE Vec3<T> col(int j) const { return {{m[0][j], m[1][j], m[2][j]}}; }
};

template <class T>
LOCKSTEP_HD_INLINE Mat33<T> transpose(const Mat33<T>& a) {
  Mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
  return r;
}
// A*v, 15 flops.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator*(const Mat33<T>& a, const Vec3<T>& v) {
  return {{a.m[0][0] * v[0] + a.m[0][1] * v[1] + a.m[0][2] * v[2],
           a.m[1][0] * v[0] + a.m[1][1] * v[1] + a.m[1][2] * v[2],
           a.m[2][0] * v[0] + a.m[2][1] * v[1] + a.m[2][2] * v[2]}};
}
// ~A*v without forming the transpose, 15 flops.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> transposeTimes(const Mat33<T>& a, const Vec3<T>& v) {
  return {{a.m[0][0] * v[0] + a.m[1][0] * v[1] + a.m[2][0] * v[2],
           a.m[0][1] * v[0] + a.m[1][1] * v[1] + a.m[2][1] * v[2],
           a.m[0][2] * v[0] + a.m[1][2] * v[1] + a.m[2][2] * v[2]}};
}
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> operator*(const Mat33<T>& a, const Mat33<T>& b) {
  Mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
  return r;
}
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> operator+(const Mat33<T>& a, const Mat33<T>& b) {
  Mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] + b.m[i][j];
  return r;
}
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> operator-(const Mat33<T>& a, const Mat33<T>& b) {
  Mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] - b.m[i][j];
  return r;
}
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> operator*(T s, const Mat33<T>& a) {
  Mat33<T> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = s * a.m[i][j];
  return r;
}
// The cross-product matrix [v]x, so that crossMat(v)*w == v x w.
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> crossMat(const Vec3<T>& v) {
  Mat33<T> r;
  r.m[0][0] = T(0);  r.m[0][1] = -v[2]; r.m[0][2] = v[1];
  r.m[1][0] = v[2];  r.m[1][1] = T(0);  r.m[1][2] = -v[0];
  r.m[2][0] = -v[1]; r.m[2][1] = v[0];  r.m[2][2] = T(0);
  return r;
}

// ------------------------------------------------------------------------------------------------
// SymMat33: a symmetric 3x3 matrix stored as its 6 independent numbers (xx, yy, zz, xy, xz, yz).
template <class T>
struct SymMat33 {
  T xx, yy, zz, xy, xz, yz;

  LOCKSTEP_HD_INLINE static SymMat33 zero() { return {T(0), T(0), T(0), T(0), T(0), T(0)}; }
  LOCKSTEP_HD_INLINE static SymMat33 diagonal(T x, T y, T z) { return {x, y, z, T(0), T(0), T(0)}; }
  LOCKSTEP_HD_INLINE T operator()(int i, int j) const {
    if (i == j) return i == 0 ? xx : (i == 1 ? yy : zz);
    const int k = i + j;  // 1: xy, 2: xz, 3: yz
    return k == 1 ? xy : (k == 2 ? xz : yz);
  }
  LOCKSTEP_HD_INLINE Mat33<T> toMat33() const {
    Mat33<T> r;
    r.m[0][0] = xx; r.m[0][1] = xy; r.m[0][2] = xz;
    r.m[1][0] = xy; r.m[1][1] = yy; r.m[1][2] = yz;
    r.m[2][0] = xz; r.m[2][1] = yz; r.m[2][2] = zz;
    return r;
  }
  // The symmetric part (A + ~A)/2 of a full matrix.
  LOCKSTEP_HD_INLINE static SymMat33 symmetricPart(const Mat33<T>& a) {
    const T h = T(0.5);
    return {a.m[0][0], a.m[1][1], a.m[2][2], h * (a.m[0][1] + a.m[1][0]), h * (a.m[0][2] + a.m[2][0]),
            h * (a.m[1][2] + a.m[2][1])};
  }
  // The lower triangle of a matrix known to be symmetric.
  LOCKSTEP_HD_INLINE static SymMat33 fromLower(const Mat33<T>& a) {
    return {a.m[0][0], a.m[1][1], a.m[2][2], a.m[1][0], a.m[2][0], a.m[2][1]};
  }
  LOCKSTEP_HD_INLINE SymMat33& operator+=(const SymMat33& b) {
    xx += b.xx; yy += b.yy; zz += b.zz; xy += b.xy; xz += b.xz; yz += b.yz;
    return *this;
  }
  LOCKSTEP_HD_INLINE SymMat33& operator-=(const SymMat33& b) {
    xx -= b.xx; yy -= b.yy; zz -= b.zz; xy -= b.xy; xz -= b.xz; yz -= b.yz;
    return *this;
  }
};

template <class T>
LOCKSTEP_HD_INLINE SymMat33<T> operator+(SymMat33<T> a, const SymMat33<T>& b) { return a += b; }
template <class T>
LOCKSTEP_HD_INLINE SymMat33<T> operator-(SymMat33<T> a, const SymMat33<T>& b) { return a -= b; }
template <class T>
LOCKSTEP_HD_INLINE SymMat33<T> operator*(T s, const SymMat33<T>& a) {
  return {s * a.xx, s * a.yy, s * a.zz, s * a.xy, s * a.xz, s * a.yz};
}
// S*v, 15 flops.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> operator*(const SymMat33<T>& s, const Vec3<T>& v) {
  return {{s.xx * v[0] + s.xy * v[1] + s.xz * v[2], s.xy * v[0] + s.yy * v[1] + s.yz * v[2],
           s.xz * v[0] + s.yz * v[1] + s.zz * v[2]}};
}
// R*S*~R, re-expressing a symmetric tensor given in B into A when R = R_AB: A = R*S, then only
// the six independent entries of A*~R (75 flops instead of 90 for the full product).
template <class T>
LOCKSTEP_HD_INLINE SymMat33<T> reexpressSym(const Mat33<T>& R, const SymMat33<T>& s) {
  const Mat33<T> A = R * s.toMat33();
  auto entry = [&](int i, int j) { return A.m[i][0] * R.m[j][0] + A.m[i][1] * R.m[j][1] + A.m[i][2] * R.m[j][2]; };
  return {entry(0, 0), entry(1, 1), entry(2, 2), entry(1, 0), entry(2, 0), entry(2, 1)};
}

// ------------------------------------------------------------------------------------------------
// Rotation: an orthonormal Mat33 R_AB with the angle and quaternion conversions Lockstep uses.
template <class T>
struct Rotation {
  Mat33<T> R;

  LOCKSTEP_HD_INLINE static Rotation identity() { return {Mat33<T>::identity()}; }
  LOCKSTEP_HD_INLINE const T& operator()(int i, int j) const { return R.m[i][j]; }
  LOCKSTEP_HD_INLINE Vec3<T> operator*(const Vec3<T>& v) const { return R * v; }
  LOCKSTEP_HD_INLINE Rotation operator*(const Rotation& b) const { return {R * b.R}; }
  LOCKSTEP_HD_INLINE Rotation inverse() const { return {transpose(R)}; }
  // ~R*v: re-express a vector given in A into B when this is R_AB.
  LOCKSTEP_HD_INLINE Vec3<T> invTimes(const Vec3<T>& v) const { return transposeTimes(R, v); }

  // Rotation by angle a about coordinate axis 0 (x), 1 (y) or 2 (z).
  LOCKSTEP_HD_INLINE static Rotation aboutAxis(int axis, T a) {
    const T c = cosT(a), s = sinT(a);
    Rotation r = identity();
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    r.R.m[i][i] = c;  r.R.m[i][j] = -s;
    r.R.m[j][i] = s;  r.R.m[j][j] = c;
    return r;
  }
  // Rotation by angle a about a unit axis n (Rodrigues).
  LOCKSTEP_HD static Rotation aboutUnitVector(const Vec3<T>& n, T a) {
    const T c = cosT(a), s = sinT(a), t = T(1) - c;
    Rotation r;
    r.R.m[0][0] = t * n[0] * n[0] + c;        r.R.m[0][1] = t * n[0] * n[1] - s * n[2];
    r.R.m[0][2] = t * n[0] * n[2] + s * n[1];  r.R.m[1][0] = t * n[0] * n[1] + s * n[2];
    r.R.m[1][1] = t * n[1] * n[1] + c;        r.R.m[1][2] = t * n[1] * n[2] - s * n[0];
    r.R.m[2][0] = t * n[0] * n[2] - s * n[1];  r.R.m[2][1] = t * n[1] * n[2] + s * n[0];
    r.R.m[2][2] = t * n[2] * n[2] + c;
    return r;
  }
  // Body-fixed X-Y-Z (1-2-3) angles: R = Rx(a0) * Ry(a1) * Rz(a2).
  LOCKSTEP_HD static Rotation bodyFixedXYZ(const Vec3<T>& a) {
    const T c0 = cosT(a[0]), s0 = sinT(a[0]), c1 = cosT(a[1]), s1 = sinT(a[1]);
    const T c2 = cosT(a[2]), s2 = sinT(a[2]);
    Rotation r;
    r.R.m[0][0] = c1 * c2;                 r.R.m[0][1] = -c1 * s2;                r.R.m[0][2] = s1;
    r.R.m[1][0] = s0 * s1 * c2 + c0 * s2;  r.R.m[1][1] = -s0 * s1 * s2 + c0 * c2; r.R.m[1][2] = -s0 * c1;
    r.R.m[2][0] = -c0 * s1 * c2 + s0 * s2; r.R.m[2][1] = c0 * s1 * s2 + s0 * c2;  r.R.m[2][2] = c0 * c1;
    return r;
  }
  // The body-fixed X-Y-Z angles of this rotation (docs/conventions.md). Near gimbal lock (|a1| = pi/2)
  // the split between a0 and a2 is arbitrary; a2 is set to 0 there.
  LOCKSTEP_HD Vec3<T> toBodyFixedXYZ() const {
    const Mat33<T>& m = R;
    const T rsum = sqrtT((square(m.m[0][0]) + square(m.m[0][1]) + square(m.m[1][2]) + square(m.m[2][2])) / T(2));
    const T a1 = atan2T(m.m[0][2], rsum);
    const MaskOf<T> regular = rsum > T(16) * machineEpsilon<T>();
    if (allLanes(regular)) return {{atan2T(-m.m[1][2], m.m[2][2]), a1, atan2T(-m.m[0][1], m.m[0][0])}};
    // Gimbal lock: only a0 + a2 (a1 = pi/2) or a0 - a2 (a1 = -pi/2) is defined; with a2 = 0 both
    // are atan2(R21, R11).
    const Vec3<T> locked = {{atan2T(m.m[2][1], m.m[1][1]), a1, T(0)}};
    if (!anyLane(regular)) return locked;
    return {{selectT(regular, atan2T(-m.m[1][2], m.m[2][2]), locked[0]), a1,
             selectT(regular, atan2T(-m.m[0][1], m.m[0][0]), locked[2])}};
  }
  // Unit quaternion (w, x, y, z), scalar first, to rotation.
  LOCKSTEP_HD static Rotation fromQuaternion(T w, T x, T y, T z) {
    Rotation r;
    r.R.m[0][0] = w * w + x * x - y * y - z * z;
    r.R.m[0][1] = T(2) * (x * y - w * z);
    r.R.m[0][2] = T(2) * (x * z + w * y);
    r.R.m[1][0] = T(2) * (x * y + w * z);
    r.R.m[1][1] = w * w - x * x + y * y - z * z;
    r.R.m[1][2] = T(2) * (y * z - w * x);
    r.R.m[2][0] = T(2) * (x * z - w * y);
    r.R.m[2][1] = T(2) * (y * z + w * x);
    r.R.m[2][2] = w * w - x * x - y * y + z * z;
    return r;
  }
  // The unit quaternion (w, x, y, z) of this rotation, with w >= 0 (Shepperd's method).
  LOCKSTEP_HD void toQuaternion(T q[4]) const {
    // The largest of w, x, y, z is found from the diagonal and computed from its square root; the
    // others are divided by it. Written with selects so that a pack of rotations takes each lane's
    // own case.
    const Mat33<T>& a = R;
    const T a00 = a.m[0][0], a11 = a.m[1][1], a22 = a.m[2][2];
    const T tr = a00 + a11 + a22;
    const MaskOf<T> cw = (tr >= a00) & (tr >= a11) & (tr >= a22);
    const MaskOf<T> cx = (!cw) & (a00 >= a11) & (a00 >= a22);
    const MaskOf<T> cy = (!cw) & (!cx) & (a11 >= a22);
    const T radicand = selectT(cw, T(1) + tr,
                               selectT(cx, T(1) + a00 - a11 - a22,
                                       selectT(cy, T(1) + a11 - a00 - a22, T(1) + a22 - a00 - a11)));
    const T s = sqrtT(radicand) * T(2);
    const T quarter = s / T(4);
    const T d21 = a.m[2][1] - a.m[1][2], d02 = a.m[0][2] - a.m[2][0], d10 = a.m[1][0] - a.m[0][1];
    const T s01 = a.m[0][1] + a.m[1][0], s02 = a.m[0][2] + a.m[2][0], s12 = a.m[1][2] + a.m[2][1];
    q[0] = selectT(cw, quarter, selectT(cx, d21, selectT(cy, d02, d10)) / s);
    q[1] = selectT(cx, quarter, selectT(cw, d21, selectT(cy, s01, s02)) / s);
    q[2] = selectT(cy, quarter, selectT(cw, d02, selectT(cx, s01, s12)) / s);
    const MaskOf<T> cz = !(cw | cx | cy);
    q[3] = selectT(cz, quarter, selectT(cw, d10, selectT(cx, s02, s12)) / s);
    const MaskOf<T> negative = q[0] < T(0);
    for (int i = 0; i < 4; ++i) q[i] = selectT(negative, -q[i], q[i]);
  }
};

// N_B for body-fixed XYZ angles q: qdot = N_B(q) * w_FM_M, with w_FM_M the angular velocity of M
// in F expressed in M (docs/conventions.md). Singular where cos(q1) = 0.
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> bodyFixedXYZ_N_B(const Vec3<T>& q) {
  const T s1 = sinT(q[1]), c1 = cosT(q[1]), s2 = sinT(q[2]), c2 = cosT(q[2]);
  const T oc1 = T(1) / c1;
  Mat33<T> n;
  n.m[0][0] = c2 * oc1;       n.m[0][1] = -s2 * oc1;      n.m[0][2] = T(0);
  n.m[1][0] = s2;             n.m[1][1] = c2;             n.m[1][2] = T(0);
  n.m[2][0] = -s1 * c2 * oc1; n.m[2][1] = s1 * s2 * oc1;  n.m[2][2] = T(1);
  return n;
}
// The inverse of N_B: w_FM_M = NInv_B(q) * qdot. Defined everywhere.
template <class T>
LOCKSTEP_HD_INLINE Mat33<T> bodyFixedXYZ_NInv_B(const Vec3<T>& q) {
  const T s1 = sinT(q[1]), c1 = cosT(q[1]), s2 = sinT(q[2]), c2 = cosT(q[2]);
  Mat33<T> n;
  n.m[0][0] = c1 * c2;  n.m[0][1] = s2;  n.m[0][2] = T(0);
  n.m[1][0] = -c1 * s2; n.m[1][1] = c2;  n.m[1][2] = T(0);
  n.m[2][0] = s1;       n.m[2][1] = T(0); n.m[2][2] = T(1);
  return n;
}
// Quaternion rate qdot = 1/2 * E(q) * w_F for a quaternion q = (w, x, y, z) of R_FM and the angular
// velocity w_F of M in F, expressed in F (docs/conventions.md).
template <class T>
LOCKSTEP_HD_INLINE void quaternionRate(const T q[4], const Vec3<T>& w, T qdot[4]) {
  const T h = T(0.5);
  qdot[0] = h * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]);
  qdot[1] = h * (q[0] * w[0] + q[3] * w[1] - q[2] * w[2]);
  qdot[2] = h * (-q[3] * w[0] + q[0] * w[1] + q[1] * w[2]);
  qdot[3] = h * (q[2] * w[0] - q[1] * w[1] + q[0] * w[2]);
}

// ------------------------------------------------------------------------------------------------
// Transform X_AB = (R_AB, p_AB): the pose of frame B in frame A.
template <class T>
struct Transform {
  Rotation<T> R;
  Vec3<T> p;

  LOCKSTEP_HD_INLINE static Transform identity() { return {Rotation<T>::identity(), Vec3<T>::zero()}; }
  LOCKSTEP_HD_INLINE static Transform translation(const Vec3<T>& p) { return {Rotation<T>::identity(), p}; }
  // X_AB * p_BQ = p_AQ, 18 flops.
  LOCKSTEP_HD_INLINE Vec3<T> operator*(const Vec3<T>& p_BQ) const { return p + R * p_BQ; }
  // X_AB * X_BC = X_AC.
  LOCKSTEP_HD_INLINE Transform operator*(const Transform& X_BC) const { return {R * X_BC.R, p + R * X_BC.p}; }
  // ~X_AB = X_BA.
  LOCKSTEP_HD_INLINE Transform inverse() const {
    const Rotation<T> Rt = R.inverse();
    return {Rt, -(Rt * p)};
  }
  // ~X_AB * X_AC = X_BC without forming the inverse.
  LOCKSTEP_HD_INLINE Transform invTimes(const Transform& X_AC) const {
    return {Rotation<T>{transpose(R.R) * X_AC.R.R}, R.invTimes(X_AC.p - p)};
  }
};

template <class To, class From>
LOCKSTEP_HD_INLINE Transform<To> castTransform(const Transform<From>& X) {
  Transform<To> r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r.R.R.m[i][j] = To(X.R.R.m[i][j]);
    r.p[i] = To(X.p[i]);
  }
  return r;
}

}  // namespace lockstep
