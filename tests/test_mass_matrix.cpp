// The joint-space mass matrix by the composite-rigid-body algorithm (physics/crba.h): against the
// dense reference's (an independent CRBA with 6x6 matrices, reference_dynamics.h) on random trees
// of every mobilizer, with the rotors' armature; symmetric to the bit and positive definite; and
// M udot = tau - bias against the articulated-body sweep's udot (the two algorithms agree).
#include <cmath>

#include "lockstep/engine/batch.h"
#include "lockstep/physics/crba.h"
#include "random_tree.h"
#include "reference_dynamics.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

// M of world 0 of a batch at its state, by the engine's CRBA.
Eigen::MatrixXd engineMassMatrix(Batch<double>& batch) {
  const Sizes s = batch.sizes();
  const WorkspaceLayout layout = WorkspaceLayout::of(s);
  std::vector<double> scratch(layout.total, 0.0), M(s.nu * s.nu), Ic(10 * s.nb);
  const Workspace<double> ws{layout, {scratch.data(), 1}};
  const ModelView<double> mv = batch.hostModelView();
  const WorldView<double> world = batch.hostView().world(0);
  computeKinematics<double>(mv, world.params, world.q, world.u, ws);
  computeMassMatrix<double>(mv, world.params, ws, Strided<double>{M.data(), 1}, Strided<double>{Ic.data(), 1});
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(M.data(), s.nu, s.nu);
}

TEST(MassMatrix, EqualsTheDenseReferenceOnRandomTrees) {
  Random rnd(8801);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = randomTree(rnd, 1 + trial % 12);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    const Eigen::MatrixXd M = engineMassMatrix(batch);
    const DenseDynamics ref = denseForwardDynamics(*c.model, c.q, c.u, c.tau);
    const double scale = std::max(1.0, ref.M.cwiseAbs().maxCoeff());
    EXPECT_LT((M - ref.M).cwiseAbs().maxCoeff(), 1e-12 * scale) << "trial " << trial;
    EXPECT_EQ((M - M.transpose()).cwiseAbs().maxCoeff(), 0.0) << "trial " << trial;
    if (M.rows() > 0) {
      EXPECT_GT(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues().minCoeff(), 0.0);
    }
  }
}

// With armature on some speeds: M gains it on the diagonal, and M udot = tau + (udot's other terms)
// holds against the sweep: M (udot with tau) - M (udot without) = tau.
TEST(MassMatrix, ArmatureIsOnTheDiagonalAndMTimesTheSweepsResponseIsTheForce) {
  Random rnd(8802);
  for (int trial = 0; trial < 10; ++trial) {
    RandomCase c = randomTree(rnd, 2 + trial % 6);
    ModelBuilder mb = ModelBuilder::fromModel(*c.model);
    std::vector<BodyDesc> bodies = mb.bodies();
    ModelBuilder withArmature;
    for (BodyDesc b : bodies) {
      const int nu = mobilizerNu(b.mobilizer);
      b.armature.assign(nu, 0.0);
      for (int k = 0; k < nu; ++k) b.armature[k] = rnd.uniform(0, 0.3);
      withArmature.addBody(b);
    }
    const auto model = withArmature.build();
    Batch<double> batch(model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    const Eigen::MatrixXd M = engineMassMatrix(batch);
    const DenseDynamics ref = denseForwardDynamics(*model, c.q, c.u, c.tau);
    Eigen::MatrixXd expected = ref.M;
    for (int i = 0; i < model->nu(); ++i) expected(i, i) += model->armature()[i];
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    EXPECT_LT((M - expected).cwiseAbs().maxCoeff(), 1e-12 * scale) << "trial " << trial;
    batch.setTau(0, std::vector<double>(model->nu(), 0.0));
    batch.evaluate();
    const std::vector<double> free = batch.udot(0);
    batch.setTau(0, c.tau);
    batch.evaluate();
    const std::vector<double> pushed = batch.udot(0);
    Eigen::VectorXd du(model->nu());
    for (int i = 0; i < model->nu(); ++i) du(i) = pushed[i] - free[i];
    const Eigen::VectorXd tau = M * du;
    for (int i = 0; i < model->nu(); ++i) EXPECT_NEAR(tau(i), c.tau[i], 1e-9 * (1 + std::abs(c.tau[i]))) << trial;
  }
}

}  // namespace
}  // namespace lockstep::test
