// Central differences of the engine's own step and evaluation, the yardstick of the exact derivatives
// (Batch::linearize, physics/derivatives.h): a case (model, state, actions, parameters), its Jacobian
// by differences along each direction of the tangent space and by linearize, and their comparison.
// Used by tests/test_derivatives.cpp and tests/frontend/test_soft_derivatives.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"

namespace lockstep::test {

using Quat = std::array<double, 4>;  // w, x, y, z

inline Quat multiply(const Quat& a, const Quat& b) {
  return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}
inline Quat conjugate(const Quat& a) { return {a[0], -a[1], -a[2], -a[3]}; }
inline Quat expMap(const std::array<double, 3>& phi) {
  const double n = std::sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]);
  if (n == 0) return {1, 0, 0, 0};
  const double s = std::sin(n / 2) / n;
  return {std::cos(n / 2), s * phi[0], s * phi[1], s * phi[2]};
}
inline std::array<double, 3> logMap(Quat q) {
  if (q[0] < 0)
    for (double& x : q) x = -x;
  const double n = std::sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const double k = n < 1e-300 ? 2.0 : 2.0 * std::atan2(n, q[0]) / n;
  return {k * q[1], k * q[2], k * q[3]};
}

// q moved by the tangent increment h along speed k (physics/derivatives.h): dq adds where qdot is
// u; a quaternion turns by exp(h e_k) on the left (its rotation vector in F); Free's p adds.
inline std::vector<double> retract(const Model& m, std::vector<double> q, int k, double h) {
  for (const Body& b : m.bodies()) {
    const int i = k - b.uOffset;
    if (i < 0 || i >= b.nu) continue;
    double* qb = &q[b.qOffset];
    if (mobilizerQdotIsU(b.mobilizer)) {
      qb[i] += h;
    } else if (i >= 3) {
      qb[4 + i - 3] += h;
    } else {
      std::array<double, 3> phi{0, 0, 0};
      phi[i] = h;
      const Quat r = multiply(expMap(phi), {qb[0], qb[1], qb[2], qb[3]});
      for (int j = 0; j < 4; ++j) qb[j] = r[j];
    }
  }
  return q;
}

// The tangent-space difference (a - b) of two configurations near `at`: per speed.
inline std::vector<double> tangentDifference(const Model& m, const std::vector<double>& a,
                                             const std::vector<double>& b, const std::vector<double>& at) {
  std::vector<double> d(m.nu());
  for (const Body& body : m.bodies()) {
    const double* qa = &a[body.qOffset];
    const double* qb = &b[body.qOffset];
    if (mobilizerQdotIsU(body.mobilizer)) {
      for (int i = 0; i < body.nu; ++i) d[body.uOffset + i] = qa[i] - qb[i];
      continue;
    }
    const Quat ref = conjugate({at[body.qOffset], at[body.qOffset + 1], at[body.qOffset + 2], at[body.qOffset + 3]});
    const std::array<double, 3> la = logMap(multiply({qa[0], qa[1], qa[2], qa[3]}, ref));
    const std::array<double, 3> lb = logMap(multiply({qb[0], qb[1], qb[2], qb[3]}, ref));
    for (int i = 0; i < 3; ++i) d[body.uOffset + i] = la[i] - lb[i];
    if (body.mobilizer == MobilizerType::Free)
      for (int i = 0; i < 3; ++i) d[body.uOffset + 3 + i] = qa[4 + i] - qb[4 + i];
  }
  return d;
}

struct DerivativeCase {
  std::shared_ptr<const Model> model;
  std::vector<double> q, u, tau;
  std::vector<std::string> params;  // parameters to differentiate by
  double constraintTolerance = 1e-10;
};

// Sets a world's state and actions.
inline void place(Batch<double>& b, std::int64_t w, const DerivativeCase& c, const std::vector<double>& q,
                  const std::vector<double>& u, const std::vector<double>& tau) {
  b.setQ(w, q);
  b.setU(w, u);
  b.setTau(w, tau);
}

// The Jacobian (rows x columns, row-major) by central differences of the engine's own step (or
// evaluation): column k from worlds stepped at +h and -h along direction k.
inline std::vector<double> centralDifferences(const DerivativeCase& c, Linearization what, double dt,
                                              Integrator integrator, double h) {
  const Model& m = *c.model;
  const int nu = m.nu(), columns = 3 * nu + static_cast<int>(c.params.size());
  const int rows = what == Linearization::Step ? 2 * nu : nu;
  Batch<double> b(c.model, 1 + 2 * columns);
  b.setConstraintTolerance(c.constraintTolerance, 50);
  for (std::int64_t w = 0; w < b.numWorlds(); ++w) place(b, w, c, c.q, c.u, c.tau);
  for (int k = 0; k < columns; ++k) {
    for (int side = 0; side < 2; ++side) {
      const std::int64_t w = 1 + 2 * k + side;
      const double s = side == 0 ? h : -h;
      std::vector<double> q = c.q, u = c.u, tau = c.tau;
      if (k < nu) q = retract(m, q, k, s);
      else if (k < 2 * nu) u[k - nu] += s;
      else if (k < 3 * nu) tau[k - 2 * nu] += s;
      else {  // a step relative to the parameter's size
        const double p = b.parameter(w, c.params[k - 3 * nu]);
        b.setParameter(w, c.params[k - 3 * nu], p + s * std::max(1.0, std::abs(p)));
      }
      place(b, w, c, q, u, tau);
    }
  }
  if (what == Linearization::Step) b.step(dt, 1, integrator);
  else b.evaluate();
  std::vector<double> J(static_cast<std::size_t>(rows) * columns);
  for (int k = 0; k < columns; ++k) {
    const std::int64_t plus = 1 + 2 * k, minus = plus + 1;
    EXPECT_EQ(b.status(plus), 0);
    EXPECT_EQ(b.status(minus), 0);
    std::vector<double> col(rows);
    if (what == Linearization::Step) {
      const std::vector<double> dq = tangentDifference(m, b.q(plus), b.q(minus), b.q(0));
      for (int r = 0; r < nu; ++r) col[r] = dq[r];
      for (int r = 0; r < nu; ++r) col[nu + r] = b.u(plus)[r] - b.u(minus)[r];
    } else {
      for (int r = 0; r < nu; ++r) col[r] = b.udot(plus)[r] - b.udot(minus)[r];
    }
    const double step = k < 3 * nu ? h : h * std::max(1.0, std::abs(b.parameter(0, c.params[k - 3 * nu])));
    for (int r = 0; r < rows; ++r) J[std::size_t(r) * columns + k] = col[r] / (2 * step);
  }
  return J;
}

// The linearization of world 1 of a batch of 3 (worlds 0 and 2 elsewhere).
inline std::vector<double> exact(const DerivativeCase& c, Linearization what, double dt, Integrator integrator) {
  Batch<double> b(c.model, 3);
  b.setConstraintTolerance(c.constraintTolerance, 50);
  for (std::int64_t w = 0; w < 3; ++w) place(b, w, c, c.q, c.u, c.tau);
  b.setU(0, std::vector<double>(c.model->nu(), 0.1));
  if (what == Linearization::Step) b.linearize(dt, integrator, c.params);
  else b.linearizeEvaluation(c.params);
  EXPECT_EQ(b.jacobianShape().columns, 3 * c.model->nu() + int(c.params.size()));
  return b.jacobian(1);
}

// Largest |exact - differences| relative to the largest |entry| of each column (and 1).
// Returns that largest difference (infinite where the sizes differ or linearize gave a non-finite entry).
inline double expectMatches(const DerivativeCase& c, Linearization what, double dt, Integrator integrator, double h,
                            double tol, const char* label) {
  const std::vector<double> J = exact(c, what, dt, integrator);
  const std::vector<double> F = centralDifferences(c, what, dt, integrator, h);
  const double infinite = std::numeric_limits<double>::infinity();
  if (J.size() != F.size()) {
    ADD_FAILURE() << label << ": " << J.size() << " entries from linearize, " << F.size() << " from differences";
    return infinite;
  }
  const int columns = 3 * c.model->nu() + static_cast<int>(c.params.size());
  const int rows = static_cast<int>(J.size()) / columns;
  double worst = 0;
  int worstRow = -1, worstColumn = -1;
  for (int k = 0; k < columns; ++k) {
    double scale = 1;
    for (int r = 0; r < rows; ++r) scale = std::max(scale, std::abs(F[std::size_t(r) * columns + k]));
    for (int r = 0; r < rows; ++r) {
      const std::size_t i = std::size_t(r) * columns + k;
      if (!std::isfinite(J[i])) {
        ADD_FAILURE() << label << " row " << r << " column " << k << ": " << J[i];
        return infinite;
      }
      const double e = std::abs(J[i] - F[i]) / scale;
      if (e > worst) worst = e, worstRow = r, worstColumn = k;
    }
  }
  EXPECT_LT(worst, tol) << label << ": worst at row " << worstRow << ", column " << worstColumn << ": exact "
                        << J[std::size_t(worstRow) * columns + worstColumn] << ", differences "
                        << F[std::size_t(worstRow) * columns + worstColumn];
  return worst;
}

}  // namespace lockstep::test
