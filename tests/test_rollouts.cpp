// Batch control for learning loops: subset resets, given states, auto-reset with reasons,
// observations, zero-copy field views and DLPack, recorded steps, determinism.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cmath>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

// chain-7 with the bushing and the spring (no constraint), worlds started from slightly
// different states so that every world differs.
void startWorlds(Batch<double>& b) {
  for (std::int64_t w = 0; w < b.numWorlds(); ++w) {
    std::vector<double> q = chainInitialQ(7);
    q[0] += 0.01 * w;
    b.setQ(w, q);
    b.setInitialState(w, q, std::vector<double>(7, 0.0));
  }
}

TEST(Rollouts, ResettingSomeWorldsLeavesTheOthersBitIdentical) {
  const auto model = makeChain7Seed({true, true, false});
  const int n = 16;
  Batch<double> a(model, n), b(model, n);
  startWorlds(a);
  startWorlds(b);
  a.step(1e-3, 50);
  b.step(1e-3, 50);
  a.resetWorlds(std::vector<std::int64_t>{2, 11});
  std::vector<std::uint8_t> mask(n, 0);
  mask[5] = 1;
  a.resetWorldsMask(mask.data(), MemorySpace::Host);
  a.step(1e-3, 30);
  b.step(1e-3, 30);
  Batch<double> fresh(model, n);
  startWorlds(fresh);
  fresh.step(1e-3, 30);
  for (int w = 0; w < n; ++w) {
    if (w == 2 || w == 5 || w == 11) {
      EXPECT_EQ(a.q(w), fresh.q(w)) << w;  // restarted from its initial state at time 0
      EXPECT_EQ(a.time(w), fresh.time(w));
    } else {
      EXPECT_EQ(a.q(w), b.q(w)) << w;
      EXPECT_EQ(a.u(w), b.u(w)) << w;
      EXPECT_EQ(a.z(w), b.z(w)) << w;
    }
  }
}

TEST(Rollouts, ObservationsAreCurrentAfterResetsAndSteps) {
  const auto model = makeChain7Seed({true, false, false});
  Batch<double> a(model, 4), probe(model, 1);
  startWorlds(a);
  a.step(1e-3, 20);
  a.resetWorld(3);
  probe.setQ(0, a.initialQ(3));
  probe.evaluate();
  for (int b = 0; b < 7; ++b) {
    EXPECT_TRUE(near(toEigen(a.bodyPose(3, b).p), toEigen(probe.bodyPose(0, b).p), 0.0));
    EXPECT_TRUE(near(toEigen(a.bodyVelocity(3, b)), toEigen(probe.bodyVelocity(0, b)), 0.0));
  }
  // After a step, the observations are those of the new state: link 7's origin from the chain.
  const std::vector<double> q = a.q(1);
  double angle = 0;
  Vec3d p = Vec3d::zero();
  for (int i = 0; i < 7; ++i) {
    if (i > 0) p += Vec3d{{0.5 * std::sin(angle), -0.5 * std::cos(angle), 0}};
    angle += q[i];
  }
  EXPECT_TRUE(near(toEigen(a.bodyPose(1, 6).p), toEigen(p), 1e-14));
  EXPECT_NEAR(a.bodyPose(1, 6).R(0, 0), std::cos(angle), 1e-14);
  // Bushing observations match the bushing quantities.
  const FieldView bs = a.field("bushingState", MemorySpace::Host);
  const auto* data = static_cast<const double*>(bs.data);
  const BushingQuantities<double> bq = a.bushing(1, 0);
  for (int j = 0; j < 6; ++j) {
    // The observation comes from the CPU backend's pack code, the inspection from the scalar code:
    // equal to rounding.
    EXPECT_NEAR(data[1 * bs.worldStride + j * bs.componentStride], bq.q[j], 1e-14 * std::max(1.0, std::abs(bq.q[j])));
    EXPECT_NEAR(data[1 * bs.worldStride + (6 + j) * bs.componentStride], bq.f[j], 1e-14 * std::max(1.0, std::abs(bq.f[j])));
  }
}

TEST(Rollouts, ResetsReturnToTheCapturedAssembledState) {
  const auto model = makeChain7Seed();
  Batch<double> b(model, 3);
  b.setAllStates(chainInitialQ(7), std::vector<double>(7, 0.0));
  b.assemble();
  const std::vector<double> assembled = b.q(1);
  EXPECT_NE(assembled, b.initialQ(1));
  b.captureInitialState();
  EXPECT_EQ(b.initialQ(1), assembled);
  b.step(1e-3, 20);
  b.resetWorld(1);
  EXPECT_EQ(b.q(1), assembled);
  EXPECT_LT(b.constraintError(1), 1e-10);
  EXPECT_NE(b.q(0), assembled);
}

TEST(Rollouts, SetStatesWritesGivenStates) {
  const auto model = makeChain(3);
  Batch<double> a(model, 5);
  const std::int64_t worlds[2] = {4, 1};
  const double q[6] = {0.1, 0.2, 0.3, -0.1, -0.2, -0.3};
  const double u[6] = {1, 2, 3, 4, 5, 6};
  a.step(1e-3, 3);
  a.setStates(worlds, 2, q, u, MemorySpace::Host);
  EXPECT_EQ(a.q(4), (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_EQ(a.u(1), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(a.time(4), 0.0);
  EXPECT_NEAR(a.time(0), 3e-3, 1e-15);
}

TEST(Rollouts, FailedWorldsAutoResetWithTheirReasonWhileTheOthersMatchACleanRun) {
  const auto model = makeChain7Seed({true, true, false});
  const int n = 8;
  Batch<double> faulty(model, n), clean(model, n);
  startWorlds(faulty);
  startWorlds(clean);
  faulty.setAutoReset(true);
  clean.setAutoReset(true);
  faulty.setU(6, {1e200, 0, 0, 0, 0, 0, 0});  // overflows in its first step
  faulty.step(1e-3, 40);
  clean.step(1e-3, 40);
  EXPECT_EQ(faulty.status(6), kStatusOk);  // restarted, not stuck
  EXPECT_EQ(faulty.lastFailure(6), kStatusNonFinite);
  EXPECT_EQ(faulty.resetCount(6), 1);
  EXPECT_EQ(faulty.time(6), 0.0);
  EXPECT_EQ(faulty.q(6), faulty.initialQ(6));
  for (int w = 0; w < n; ++w) {
    if (w == 6) continue;
    EXPECT_EQ(faulty.q(w), clean.q(w)) << w;
    EXPECT_EQ(faulty.resetCount(w), 0);
  }
  // The spring's zero-length failure is recorded as such.
  Batch<double> s(model, 1);
  s.setAutoReset(true);
  s.evaluate();
  s.setSpringPoints(0, 0, s.bodyPose(0, 6).p, Vec3d::zero());  // P on Ground at link 7's origin Q: length 0
  s.step(1e-3, 1);
  EXPECT_EQ(s.lastFailure(0), kStatusSpringLengthZero);
  EXPECT_EQ(s.resetCount(0), 1);
}

TEST(Rollouts, FieldViewsAndDLPackDescribeTheMemory) {
  const auto model = makeChain(4);
  Batch<float> a(model, 6);
  for (int w = 0; w < 6; ++w) a.setQ(w, {0.1 * w, 0.2, 0.3, 0.4 + w});
  const FieldView q = a.field("q", MemorySpace::Host);
  EXPECT_EQ(q.elementType, FieldView::Type::Float32);
  EXPECT_EQ(q.worlds, 6);
  EXPECT_EQ(q.components, 4);
  const auto* qd = static_cast<const float*>(q.data);
  for (int w = 0; w < 6; ++w)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(double(qd[w * q.worldStride + c * q.componentStride]), double(float(a.q(w)[c])));
  // Actions written in place are what the dynamics uses.
  FieldView tau = a.field("tau", MemorySpace::Backend);
  static_cast<float*>(tau.data)[2 * tau.worldStride + 1 * tau.componentStride] = 3.5f;
  EXPECT_EQ(a.tau(2)[1], 3.5);
  DLManagedTensor* t = a.toDLPack("q", MemorySpace::Host);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 6);
  EXPECT_EQ(t->dl_tensor.shape[1], 4);
  EXPECT_EQ(t->dl_tensor.strides[0], 1);
  EXPECT_EQ(t->dl_tensor.strides[1], 6);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(t->dl_tensor.data, q.data);
  t->deleter(t);
  DLManagedTensor* st = a.toDLPack("status", MemorySpace::Host);
  EXPECT_EQ(st->dl_tensor.ndim, 1);
  EXPECT_EQ(st->dl_tensor.dtype.code, kDLInt);
  st->deleter(st);
  EXPECT_THROW(a.field("nothing", MemorySpace::Host), std::invalid_argument);
  EXPECT_EQ(Batch<float>::fieldNames().front(), "q");
}

TEST(Rollouts, RecordedStepsAndDeterminism) {
  const auto model = makeChain7Seed();
  auto run = [&](bool recorded) {
    Batch<double> b(model, 8);
    startWorlds(b);
    b.assemble();
    if (recorded) {
      auto graph = b.captureStep(1e-3, 5);
      for (int k = 0; k < 10; ++k) graph->launch();
    } else {
      for (int k = 0; k < 10; ++k) b.step(1e-3, 5);
    }
    std::vector<std::vector<double>> q;
    for (int w = 0; w < 8; ++w) q.push_back(b.q(w));
    return q;
  };
  const auto first = run(false);
  EXPECT_EQ(run(false), first);  // same inputs, same bits
  EXPECT_EQ(run(true), first);   // a recorded step is the same step
}

TEST(Rollouts, GpuResetsAndFieldViews) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = makeChain7Seed({true, true, false});
  const int n = 64;
  Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
  startWorlds(cpu);
  startWorlds(gpu);
  gpu.upload();
  cpu.step(1e-3, 20);
  gpu.step(1e-3, 20);
  const std::vector<std::int64_t> reset = {3, 40};
  cpu.resetWorlds(reset);
  gpu.resetWorlds(reset);
  auto graph = gpu.captureStep(1e-3, 10);
  graph->launch();
  cpu.step(1e-3, 10);
  gpu.download();
  for (int w = 0; w < n; w += 9) EXPECT_TRUE(near(toEigen(gpu.bodyPose(w, 6).p), toEigen(cpu.bodyPose(w, 6).p), 1e-12));
  const FieldView q = gpu.field("q", MemorySpace::Backend);
  EXPECT_TRUE(q.onDevice);
  DLManagedTensor* t = gpu.toDLPack("q", MemorySpace::Backend);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  t->deleter(t);
}

}  // namespace
}  // namespace lockstep::test
