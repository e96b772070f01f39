// An independent dense reference for forward dynamics, for the tests:
//   M(q)      by the composite-rigid-body algorithm with dense 6x6 matrices in Eigen;
//   bias(q,u) = sum_b ~J_b (I_b Jdot_b u + gyro_b(w_b) - F_b), with J_b the body Jacobians built
//             by composing mobilizer poses directly and Jdot_b u differentiated exactly with dual
//             numbers along q(t) = q + t qdot;
//   udot      = M^-1 (tau - damping*u - bias), solved by LDLT.
// It shares only the per-mobilizer X_FM, H_FM and qdot maps with the engine, which the mobilizer
// tests check separately against finite differences.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "lockstep/engine/model.h"

namespace lockstep::test {

struct DenseDynamics {
  Eigen::MatrixXd M;     // mass matrix [nu x nu]
  Eigen::VectorXd bias;  // C(q,u) + g(q) - applied body forces, as generalized forces [nu]
  Eigen::VectorXd udot;  // M^-1 (tau - damping.*u - bias)
  double kinetic = 0, potential = 0;
};

DenseDynamics denseForwardDynamics(const Model& model, const std::vector<double>& q, const std::vector<double>& u,
                                   const std::vector<double>& tau);

}  // namespace lockstep::test
