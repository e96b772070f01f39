// Lockstep against Simbody 3.7 on random trees of every mobilizer type and on chain-7.
#include "lockstep/batch.h"
#include "lockstep/builtin_scenes.h"
#include "random_tree.h"
#include "simbody_oracle.h"

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

TEST(SimbodyOracle, RandomTreesGiveTheSameAccelerationsAndEnergies) {
  Random rnd(300);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = randomTree(rnd, 1 + trial % 12);
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk);
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    EXPECT_NEAR(batch.kineticEnergy(0), ref.kinetic, 1e-11 * std::max(1.0, std::abs(ref.kinetic)));
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential, 1e-11 * std::max(1.0, std::abs(ref.potential)));
  }
}

TEST(SimbodyOracle, Chain7) {
  const auto model = makeChain(7);
  SimbodyOracle oracle(*model);
  Batch<double> batch(model, 1);
  Random rnd(301);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> q(7), u(7), tau(7, 0.0);
    for (int i = 0; i < 7; ++i) {
      q[i] = trial == 0 ? 0.3 : rnd.uniform(-2, 2);
      u[i] = trial == 0 ? 0.0 : rnd.uniform(-3, 3);
    }
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.evaluate();
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(oracle.evaluate(q, u, tau).udot), 1e-10));
  }
}

}  // namespace
}  // namespace lockstep::test
