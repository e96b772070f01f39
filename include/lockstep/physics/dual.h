// Lockstep dual numbers: forward-mode derivatives of the per-world code.
//
// Dual<T, N> is a value with N tangents: x = v + sum_k d[k] e_k, with e_k e_l = 0. Every operation
// of the per-world templates (+ - * /, sqrt, sin, cos, atan2, tanh, pow, |x|, comparisons, selects)
// carries the tangents by the chain rule, so that instantiating the forward pipeline, the force
// elements, the constraint solve and the integrators on Dual<T, N> gives, next to the very value
// the T code computes, the exact derivatives of every result along N chosen directions of the
// inputs (physics/derivatives.h seeds them). There is no second copy of the physics.
//
// Branches: a comparison compares values only, so where the physics branches (a clamp, a joint
// stop engaging, the Stribeck curve of a ground contact, a select between lanes) the tangent is
// that of the branch taken. |x| at x = 0 takes the tangent of +x; sqrt at 0 gives infinite
// tangents (no derivative exists there).
//
// T is float or double (the CPU scalar path and the CUDA kernels) or a pack of worlds (lanes.h: the
// CPU backend's packs, W worlds per instruction, each lane its own world); comparisons then give a
// mask of lanes and selects choose lane by lane, as for the packs themselves. The value part is
// computed by the same operations in the same order as the T code, so a dual step's values are a
// plain step's where the compiler (or the pack's fused products) rounds the same way.
#pragma once

#include <type_traits>

#include "lockstep/physics/math.h"

namespace lockstep {

template <class T, int N>
struct Dual {
  static constexpr int kTangents = N;
  T v;     // the value
  T d[N];  // the tangents: d/d(direction k) of the value

  Dual() = default;
  // A constant: every tangent zero (T(0), T(0.5) * dt, T(someInt), ...).
  template <class U, class = std::enable_if_t<std::is_arithmetic<U>::value>>
  LOCKSTEP_HD_INLINE Dual(U s) : v(T(s)) {
    for (int k = 0; k < N; ++k) d[k] = T(0);
  }
  // A constant of the value type (a pack of worlds' values).
  template <class U = T, class = std::enable_if_t<!std::is_arithmetic<U>::value>>
  LOCKSTEP_HD_INLINE Dual(const T& s) : v(s) {
    for (int k = 0; k < N; ++k) d[k] = T(0);
  }

  LOCKSTEP_HD_INLINE Dual& operator+=(const Dual& b) {
    v += b.v;
    for (int k = 0; k < N; ++k) d[k] += b.d[k];
    return *this;
  }
  LOCKSTEP_HD_INLINE Dual& operator-=(const Dual& b) {
    v -= b.v;
    for (int k = 0; k < N; ++k) d[k] -= b.d[k];
    return *this;
  }
  LOCKSTEP_HD_INLINE Dual& operator*=(const Dual& b) { return *this = *this * b; }
  LOCKSTEP_HD_INLINE Dual& operator/=(const Dual& b) { return *this = *this / b; }

  // a + b, a * b, ...: 1 + N (sum) to 3N + 1 (product) flops.
  LOCKSTEP_HD_INLINE friend Dual operator+(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v + b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] + b.d[k];
    return r;
  }
  LOCKSTEP_HD_INLINE friend Dual operator-(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v - b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] - b.d[k];
    return r;
  }
  LOCKSTEP_HD_INLINE friend Dual operator-(const Dual& a) {
    Dual r;
    r.v = -a.v;
    for (int k = 0; k < N; ++k) r.d[k] = -a.d[k];
    return r;
  }
  LOCKSTEP_HD_INLINE friend Dual operator*(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v * b.v;
    for (int k = 0; k < N; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    return r;
  }
  // (a / b)' = (a' - (a / b) b') / b.
  LOCKSTEP_HD_INLINE friend Dual operator/(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v / b.v;
    const T inv = T(1) / b.v;
    for (int k = 0; k < N; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) * inv;
    return r;
  }
  LOCKSTEP_HD_INLINE friend auto operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  LOCKSTEP_HD_INLINE friend auto operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  LOCKSTEP_HD_INLINE friend auto operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  LOCKSTEP_HD_INLINE friend auto operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  LOCKSTEP_HD_INLINE friend auto operator==(const Dual& a, const Dual& b) { return a.v == b.v; }
  LOCKSTEP_HD_INLINE friend auto operator!=(const Dual& a, const Dual& b) { return a.v != b.v; }
};

template <class T, int N>
struct LaneTraits<Dual<T, N>> {
  using Scalar = ScalarOf<T>;
  using Mask = MaskOf<T>;
  using Status = StatusOf<T>;
};

// f(a) with f(a.v) = value and f'(a.v) = slope: the chain rule, N flops.
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> chain(const Dual<T, N>& a, T value, T slope) {
  Dual<T, N> r;
  r.v = value;
  for (int k = 0; k < N; ++k) r.d[k] = slope * a.d[k];
  return r;
}

template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> sqrtT(const Dual<T, N>& a) {
  const T s = sqrtT(a.v);
  return chain(a, s, T(0.5) / s);
}
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> sinT(const Dual<T, N>& a) {
  return chain(a, sinT(a.v), cosT(a.v));
}
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> cosT(const Dual<T, N>& a) {
  return chain(a, cosT(a.v), -sinT(a.v));
}
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> tanhT(const Dual<T, N>& a) {
  const T t = tanhT(a.v);
  return chain(a, t, T(1) - t * t);
}
template <class T, int N>
LOCKSTEP_HD_INLINE int storedIndex(const Dual<T, N>& x) {
  return storedIndex(x.v);
}
// m ? a : b, lane by lane for a mask of lanes (for a bool, math.h's selectT).
template <class M, class T, int N, class = std::enable_if_t<!std::is_same<M, bool>::value>>
LOCKSTEP_HD_INLINE Dual<T, N> selectT(const M& m, const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.v = selectT(m, a.v, b.v);
  for (int k = 0; k < N; ++k) r.d[k] = selectT(m, a.d[k], b.d[k]);
  return r;
}
// |a|: the tangent of +a where a >= 0 (of the branch taken at 0).
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> absT(const Dual<T, N>& a) {
  return selectT(a.v < T(0), -a, a);
}
// atan2(y, x)' = (x y' - y x') / (x^2 + y^2).
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> atan2T(const Dual<T, N>& y, const Dual<T, N>& x) {
  Dual<T, N> r;
  r.v = atan2T(y.v, x.v);
  const T inv = T(1) / (x.v * x.v + y.v * y.v);
  for (int k = 0; k < N; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) * inv;
  return r;
}
// x^y' = y x^(y-1) x' + x^y ln(x) y' (the second term where x > 0; elsewhere x^y has no
// derivative by y, and the exponents of the physics are constants).
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> powT(const Dual<T, N>& x, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.v = powT(x.v, y.v);
  const T dx = y.v * powT(x.v, y.v - T(1));
  const auto positive = x.v > T(0);
  const T dy = selectT(positive, r.v * logT(selectT(positive, x.v, T(1))), T(0));
  for (int k = 0; k < N; ++k) r.d[k] = dx * x.d[k] + dy * y.d[k];
  return r;
}
template <class T, int N>
struct CarriesTangents<Dual<T, N>> : std::true_type {};
// a's value with a's and b's tangents summed: b's tangents alone added to a.
template <class T, int N>
LOCKSTEP_HD_INLINE Dual<T, N> plusTangents(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r = a;
  for (int k = 0; k < N; ++k) r.d[k] += b.d[k];
  return r;
}
// Finite: the value (the tangents are checked where the derivatives are read out).
template <class T, int N>
LOCKSTEP_HD_INLINE auto isFiniteT(const Dual<T, N>& a) {
  return isFiniteT(a.v);
}

}  // namespace lockstep
