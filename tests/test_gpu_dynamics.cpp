// The CUDA backend against the CPU backend: same per-world code, so results agree to rounding
// (the device fuses multiply-adds): 1e-12 relative in double over one evaluation and 100 RK4
// steps of a moderately conditioned tree.
#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "random_tree.h"

#include <array>

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

TEST(GpuDynamics, ConstrainedChain7SeedMatchesCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = makeChain7Seed();
  const int n = 1000;
  Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
  for (Batch<double>* b : {&cpu, &gpu}) {
    b->setAllStates(chainInitialQ(7), std::vector<double>(7, 0.0));
    for (int w = 0; w < n; w += 3) b->setSphereRadii(w, 0, 0.2 + 1e-4 * w, 0.1);
  }
  gpu.upload();
  cpu.assemble();
  gpu.assemble();
  cpu.step(1e-3, 100, Integrator::RK4);
  gpu.step(1e-3, 100, Integrator::RK4);
  cpu.evaluate();
  gpu.evaluate();
  gpu.download();
  for (int w = 0; w < n; w += 97) {
    EXPECT_EQ(gpu.status(w), kStatusOk) << describeStatus(gpu.status(w));
    EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), 1e-12)) << w;
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
