// The CUDA backend against the CPU backend: same per-world code, so results agree to rounding
// (the device fuses multiply-adds): 1e-12 relative in double over one evaluation and 100 RK4
// steps of a moderately conditioned tree; 1e-11 in q where a constraint projection decides the
// state (the error analysis above ConstrainedChain7SeedMatchesCpu).
#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "lockstep/backends/cpu_isa.h"
#include "random_tree.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

TEST(GpuDynamics, CudaBackendMatchesCpuBackend) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  Random rnd(400);
  for (int trial = 0; trial < 3; ++trial) {
    const RandomCase c = randomTree(rnd, 4 + 3 * trial);
    const int n = 1000;
    Batch<double> cpu(c.model, n, Backend::Cpu), gpu(c.model, n, Backend::Cuda);
    for (int w = 0; w < n; ++w) {
      std::vector<double> u = c.u;
      for (double& x : u) x *= 1.0 + 0.001 * w;
      for (Batch<double>* b : {&cpu, &gpu}) {
        b->setQ(w, c.q);
        b->setU(w, u);
        b->setTau(w, c.tau);
      }
    }
    MassProperties mp = c.model->body(0).mass;
    mp.mass *= 1.5;
    cpu.setMassProperties(7, 0, mp);
    gpu.setMassProperties(7, 0, mp);
    gpu.upload();
    cpu.evaluate();
    gpu.evaluate();
    gpu.download();
    for (int w : {0, 7, 999}) EXPECT_TRUE(near(vec(gpu.udot(w)), vec(cpu.udot(w)), 1e-12));
    cpu.step(1e-3, 100, Integrator::RK4);
    gpu.step(1e-3, 100, Integrator::RK4);
    gpu.download();
    for (int w = 0; w < n; w += 111) {
      EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), 1e-12)) << w;
      EXPECT_TRUE(near(vec(gpu.u(w)), vec(cpu.u(w)), 1e-12)) << w;
      EXPECT_EQ(gpu.status(w), cpu.status(w));
    }
  }
}

// Joint stops and PD actuators (per-world gains and targets, some efforts clamped): the CUDA
// kernels run the same per-world code as the CPU packs.
TEST(GpuDynamics, JointStopsAndPdActuatorsMatchCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  Random rnd(401);
  const ActuatedCase c = withStopsAndActuators(rnd, randomTree(rnd, 8), true, true);
  const int n = 600;
  Batch<double> cpu(c.model, n, Backend::Cpu), gpu(c.model, n, Backend::Cuda);
  const std::string kp = "actuator." + c.model->uNames()[c.model->actuators().front().u] + ".kp";
  const std::string k = "stop." + c.model->uNames()[c.model->stops().front().u] + ".stiffness";
  for (int w = 0; w < n; ++w) {
    std::vector<double> target = c.targetPosition;
    for (double& x : target) x += 0.001 * w;
    for (Batch<double>* b : {&cpu, &gpu}) {
      b->setQ(w, c.q);
      b->setU(w, c.u);
      b->setTau(w, c.tau);
      b->setTargets(w, target, c.targetVelocity);
      b->setParameter(w, kp, 5.0 + 0.1 * w);
      b->setParameter(w, k, 20.0 + 0.2 * w);
      b->setParameter(w, "effort_limit." + c.model->uNames()[0], 2.0 + 0.01 * w);
    }
  }
  gpu.upload();
  cpu.evaluate();
  gpu.evaluate();
  gpu.download();
  for (int w : {0, 7, 599}) {
    EXPECT_TRUE(near(vec(gpu.udot(w)), vec(cpu.udot(w)), 1e-12)) << w;
    EXPECT_TRUE(near(vec(gpu.actuatorEfforts(w)), vec(cpu.actuatorEfforts(w)), 1e-12)) << w;
    EXPECT_TRUE(near(vec(gpu.stopForces(w)), vec(cpu.stopForces(w)), 1e-12)) << w;
  }
  cpu.step(1e-3, 200, Integrator::RK4);
  gpu.step(1e-3, 200, Integrator::RK4);
  gpu.download();
  for (int w = 0; w < n; w += 61) {
    EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), 1e-9)) << w;
    EXPECT_TRUE(near(vec(gpu.u(w)), vec(cpu.u(w)), 1e-9)) << w;
    EXPECT_TRUE(near(vec(gpu.z(w)), vec(cpu.z(w)), 1e-9)) << w;
    EXPECT_EQ(gpu.status(w), cpu.status(w));
  }
}

TEST(GpuDynamics, ForceElementsMatchCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  for (const auto& model : {makeChain7Seed({true, true, false}), makeFreeBushingGrid(4)}) {
    const std::vector<double> q0 = model->numBodies() == 7 ? chainInitialQ(7) : freeBushingGridInitialQ(4);
    const int n = 512;
    Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
    cpu.setAllStates(q0, std::vector<double>(model->nu(), 0.0));
    gpu.setAllStates(q0, std::vector<double>(model->nu(), 0.0));
    for (int w = 0; w < n; w += 7) {
      const std::array<double, 6> k = {10.0 + w, 10, 10, 100, 100.0 + w, 100};
      cpu.setBushingStiffness(w, 0, k);
      gpu.setBushingStiffness(w, 0, k);
    }
    gpu.upload();
    cpu.step(1e-4, 200, Integrator::RK4);
    gpu.step(1e-4, 200, Integrator::RK4);
    gpu.download();
    for (int w = 0; w < n; w += 37) {
      EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), 1e-12)) << w;
      EXPECT_TRUE(near(vec(gpu.z(w)), vec(cpu.z(w)), 1e-12)) << w;
    }
  }
}

// The constrained chain-7-seed of the two tests below: 1000 worlds, a third of them with their own
// contact radii, assembled onto the contact, 100 RK4 steps of 1 ms, then one evaluation.
constexpr int kSeedWorlds = 1000;

void runConstrainedChain7Seed(Batch<double>& b) {
  b.setAllStates(chainInitialQ(7), std::vector<double>(7, 0.0));
  for (int w = 0; w < kSeedWorlds; w += 3) b.setSphereRadii(w, 0, 0.2 + 1e-4 * w, 0.1);
  if (b.backend() == Backend::Cuda) b.upload();
  b.assemble();
  b.step(1e-3, 100, Integrator::RK4);
  b.evaluate();
  if (b.backend() == Backend::Cuda) b.download();
}

// The largest differences of two runs over the checked worlds, each relative to max(1, |reference|)
// as near() measures them (multipliers relative to |reference|).
struct Spread {
  double q = 0, udot = 0, lambda = 0;
};
Spread spreadOf(const Batch<double>& a, const Batch<double>& ref) {
  Spread d;
  for (int w = 0; w < kSeedWorlds; w += 97) {
    const Eigen::VectorXd q = vec(ref.q(w)), udot = vec(ref.udot(w));
    d.q = std::max(d.q, (vec(a.q(w)) - q).cwiseAbs().maxCoeff() / std::max(1.0, q.cwiseAbs().maxCoeff()));
    d.udot = std::max(d.udot, (vec(a.udot(w)) - udot).cwiseAbs().maxCoeff() / std::max(1.0, udot.cwiseAbs().maxCoeff()));
    const double l = ref.contact(w, 0).multipliers[2];
    d.lambda = std::max(d.lambda, std::abs(a.contact(w, 0).multipliers[2] - l) / std::abs(l));
  }
  return d;
}

// Why the GPU test below allows 1e-11 in q (the unconstrained tests above: 1e-12).
//
// Both backends run the same per-world code with correctly rounded double operations (unit
// roundoff u = 2^-53 = 1.1e-16); they differ only in which products are fused into multiply-adds
// (nvcc fuses a*b + c wherever it can; the CPU's AVX2/AVX-512 packs only where the code spells a
// product feeding a sum, lanes.h; its generic packs and scalar path never). Each fused product
// differs from the unfused one by at most u |a b|. Where that difference goes:
//   - Without constraints it stays at rounding: chain-7 after 100 RK4 steps, fused against unfused
//     packs, differs by 6e-17 in q (measured here, 2026-11-27).
//   - The contact is held by a Gauss-Newton projection (assembly, then after every step) that stops
//     once |position error| < 1e-10 (Batch's constraint tolerance). Its result is fixed only up to
//     the last correction it accepted, not to u: two runs whose arithmetic differs anywhere may end
//     on different points of the tolerance band. All that projection guarantees is both states
//     within 1e-10 of the manifold, i.e. up to 2e-10 apart along its normal (|grad phi| ~ 1 for a
//     sphere distance); its quadratic convergence puts the last correction far below that.
//   - Measured on this run (CpuFmaSpreadOfTheConstrainedChain7Seed, and by hand with the same
//     protocol): right after the assembly q differs by 1.5e-12 between fused and unfused packs and
//     by 2.0e-12 after a one-ulp change of the initial q (same arithmetic); after the 100 steps,
//     fused against unfused 3.5e-12, scalar against packs 3.4e-12, one-ulp change 2.9e-12. The
//     GPU's difference from the CPU is of the same kind and size: 3.6e-12 on an H200 (issue 37).
//     udot differs by up to 3.4e-11 and the multiplier by up to 7e-12 relative (5.9e-11 right after
//     the assembly) in the same runs: within their 1e-10.
// So q is bounded by 1e-11: 2.5x the largest difference any change of arithmetic produced (the
// projection's resolution, about 4e-12), 20x inside what the projection guarantees, and far below
// a real disagreement of the per-world code (a dropped term of a force moves q by > 1e-6 here).
constexpr double kConstrainedSeedQTolerance = 1e-11;

TEST(GpuDynamics, CpuFmaSpreadOfTheConstrainedChain7Seed) {
  const std::vector<std::string> isas = cpuIsasSupported();
  if (isas.front() == "generic") GTEST_SKIP() << "this processor has no FMA copy of the packs";
  const auto model = makeChain7Seed();
  Batch<double> unfused(model, kSeedWorlds, Backend::Cpu, CpuOptions{0, true, "generic"});
  Batch<double> fused(model, kSeedWorlds, Backend::Cpu, CpuOptions{0, true, isas.front()});
  runConstrainedChain7Seed(unfused);
  runConstrainedChain7Seed(fused);
  const Spread d = spreadOf(fused, unfused);
  std::printf("FMA spread (%s vs generic): q %.3g, udot %.3g, lambda %.3g\n", isas.front().c_str(), d.q, d.udot,
              d.lambda);
  // The CPU's own fused-against-unfused spread fits the bounds the GPU test uses (the comment
  // above: 3.5e-12, 3.4e-11 and 7e-12 when written).
  EXPECT_LT(d.q, kConstrainedSeedQTolerance);
  EXPECT_LT(d.udot, 1e-10);
  EXPECT_LT(d.lambda, 1e-10);
}

TEST(GpuDynamics, ConstrainedChain7SeedMatchesCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = makeChain7Seed();
  Batch<double> cpu(model, kSeedWorlds, Backend::Cpu), gpu(model, kSeedWorlds, Backend::Cuda);
  runConstrainedChain7Seed(cpu);
  runConstrainedChain7Seed(gpu);
  const Spread d = spreadOf(gpu, cpu);
  std::printf("GPU - CPU: q %.3g, udot %.3g, lambda %.3g\n", d.q, d.udot, d.lambda);
  for (int w = 0; w < kSeedWorlds; w += 97) {
    EXPECT_EQ(gpu.status(w), kStatusOk) << describeStatus(gpu.status(w));
    EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), kConstrainedSeedQTolerance)) << w;
    EXPECT_TRUE(near(vec(gpu.udot(w)), vec(cpu.udot(w)), 1e-10)) << w;
    EXPECT_NEAR(gpu.contact(w, 0).multipliers[2], cpu.contact(w, 0).multipliers[2],
                1e-10 * std::abs(cpu.contact(w, 0).multipliers[2]));
  }
}

TEST(GpuDynamics, FloatCudaMatchesFloatCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = makeChain(7);
  Batch<float> cpu(model, 256, Backend::Cpu), gpu(model, 256, Backend::Cuda);
  cpu.setAllStates(chainInitialQ(7), std::vector<double>(7, 0.0));
  gpu.setAllStates(chainInitialQ(7), std::vector<double>(7, 0.0));
  gpu.upload();
  cpu.step(1e-3, 100);
  gpu.step(1e-3, 100);
  gpu.download();
  // float with and without fused multiply-adds: 1e-4 relative after 100 steps.
  EXPECT_TRUE(near(vec(gpu.q(5)), vec(cpu.q(5)), 1e-4));
}

TEST(GpuDynamics, StaleCopiesAreRefused) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  Batch<double> gpu(makeChain(2), 4, Backend::Cuda);
  EXPECT_THROW(gpu.step(1e-3), std::logic_error);  // never uploaded
  gpu.upload();
  gpu.step(1e-3);
  EXPECT_THROW(gpu.q(0), std::logic_error);  // not downloaded
  gpu.download();
  EXPECT_NO_THROW(gpu.q(0));
}

}  // namespace
}  // namespace lockstep::test
