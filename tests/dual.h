// Forward-mode dual numbers a + b*eps (eps^2 = 0): exact first derivatives through the engine's
// templated math, for reference computations in the tests.
#pragma once

#include <cmath>

namespace lockstep::test {

struct Dual {
  double v = 0, d = 0;
  Dual() = default;
  Dual(double value) : v(value) {}  // NOLINT: implicit, like a scalar literal
  Dual(double value, double deriv) : v(value), d(deriv) {}
  Dual& operator+=(const Dual& b) { v += b.v; d += b.d; return *this; }
  Dual& operator-=(const Dual& b) { v -= b.v; d -= b.d; return *this; }
  Dual& operator*=(const Dual& b) { d = d * b.v + v * b.d; v *= b.v; return *this; }
};
inline Dual operator+(Dual a, const Dual& b) { return a += b; }
inline Dual operator-(Dual a, const Dual& b) { return a -= b; }
inline Dual operator-(const Dual& a) { return {-a.v, -a.d}; }
inline Dual operator*(const Dual& a, const Dual& b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline Dual operator/(const Dual& a, const Dual& b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
inline Dual sinT(const Dual& a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
inline Dual cosT(const Dual& a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }
inline Dual sqrtT(const Dual& a) {
  const double s = std::sqrt(a.v);
  return {s, a.d / (2 * s)};
}

}  // namespace lockstep::test
