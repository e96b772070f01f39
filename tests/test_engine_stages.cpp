// The engine's stages called directly (not through a Batch). This file is compiled with the
// engine library's own CPU flags, in its own executable: a template instantiated here with other
// flags (say without fused multiply-adds) could be the copy the linker keeps for the library too,
// and change its results in the last bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lockstep/batch.h"
#include "lockstep/builtin_scenes.h"
#include "random_tree.h"

namespace lockstep::test {
namespace {

// Pass 3 alone (bodyAccelerationsFromUdot: A_b = ~Phi A_parent + c_b + H_b udot_b, what the
// inspection of a stored evaluation uses) gives the sweep's own body accelerations, to roundoff:
// the sweep calls the same per-body functions (inboardAcceleration, jointAcceleration), but the
// compiler may fuse their multiply-adds differently where they are inlined; with constraints the
// solve corrects udot and A_GB separately.
void expectPassThreeMatchesTheSweep(const std::shared_ptr<const Model>& model, const std::vector<double>& q,
                                    const std::vector<double>& u, const std::vector<double>& tau) {
  Batch<double> batch(model, 1, Backend::Cpu);
  batch.setQ(0, q);
  batch.setU(0, u);
  batch.setTau(0, tau);
  const Sizes s = batch.sizes();
  const WorkspaceLayout layout = WorkspaceLayout::of(s);
  std::vector<double> scratch(layout.total, 0.0), fromUdot(6 * s.nb, 0.0);
  const Workspace<double> ws{layout, {scratch.data(), 1}};
  const ModelView<double> mv = batch.hostModelView();
  const WorldView<double> world = batch.hostView().world(0);
  const int status = forwardDynamics<double, true>(mv, world, ws, world.udot, ws.ydot(s.nq + s.nu), world.multipliers).status;
  ASSERT_EQ(status, kStatusOk);
  bodyAccelerationsFromUdot(mv, ws, Strided<const double>(world.udot), Strided<double>{fromUdot.data(), 1});
  const Strided<double> A = ws.A_GB();
  double scale = 1.0;
  for (int i = 0; i < 6 * s.nb; ++i) scale = std::max(scale, std::abs(A[i]));
  for (int i = 0; i < 6 * s.nb; ++i) {
    EXPECT_NEAR(fromUdot[i], A[i], (s.nc == 0 ? 1e-14 : 1e-12) * scale) << "component " << i;
  }
}

TEST(Sweep, PassThreeFromUdotIsTheSweepsOwn) {
  Random rnd(1207);
  for (int trial = 0; trial < 5; ++trial) {
    const RandomCase c = randomTree(rnd, 4 + trial);
    expectPassThreeMatchesTheSweep(c.model, c.q, c.u, c.tau);
  }
  const std::vector<double> u7 = {0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.6};
  expectPassThreeMatchesTheSweep(makeChain(7), chainInitialQ(7), u7, std::vector<double>(7, 0.1));
  expectPassThreeMatchesTheSweep(makeChain7Seed(), chainInitialQ(7), u7, std::vector<double>(7, 0.1));
}

}  // namespace
}  // namespace lockstep::test
