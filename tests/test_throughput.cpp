// The throughput measurement (throughput.h): its memory estimate against the field lists and the
// device's own accounting, its checks, and a small CPU measurement end to end.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "lockstep/study/throughput.h"
#include "lockstep/physics/workspace.h"

namespace lockstep::test {
namespace {

ThroughputConfig chain7(Backend backend, Precision precision, std::int64_t worlds) {
  ThroughputConfig c;
  c.scene = "chain-7";
  c.model = makeChain(7);
  c.q0 = chainInitialQ(7);
  c.backend = backend;
  c.precision = precision;
  c.worlds = worlds;
  c.stepsPerCall = 2;
  c.warmupCalls = 1;
  c.repetitions = 3;
  return c;
}

// The Batch's own description of its fields (Batch::field) and its WorkspaceLayout give the bytes
// per world independently of the field lists batchMemory sums.
template <class T>
std::int64_t fieldBytesPerWorld(const std::shared_ptr<const Model>& model) {
  Batch<T> batch(model, 3, Backend::Cpu);
  std::int64_t bytes = 0;
  for (const std::string& name : Batch<T>::fieldNames()) {
    const FieldView v = batch.field(name, MemorySpace::Host);
    const int size = v.elementType == FieldView::Type::Float64 ? 8 : 4;
    bytes += v.components * size;
  }
  return bytes;
}

TEST(Throughput, MemoryEstimateFollowsTheFieldsAndTheWorkspaceLayout) {
  const auto model = makeChain(7);
  const std::int64_t workspace = WorkspaceLayout::of(Batch<double>(model, 1, Backend::Cpu).sizes()).total;
  const std::int64_t n = 1000;
  for (Precision p : {Precision::Float, Precision::Double}) {
    const std::int64_t size = p == Precision::Double ? 8 : 4;
    const std::int64_t fields =
        p == Precision::Double ? fieldBytesPerWorld<double>(model) : fieldBytesPerWorld<float>(model);
    const BatchMemory a = batchMemory(*model, p, n, Backend::Cuda);
    const BatchMemory b = batchMemory(*model, p, 2 * n, Backend::Cuda);
    EXPECT_EQ(b.deviceBytes - a.deviceBytes, n * (fields + workspace * size)) << precisionName(p);
    EXPECT_EQ(b.hostBytes - a.hostBytes, n * fields) << precisionName(p);
  }
  // CPU: no device bytes; one workspace per thread on the host.
  const BatchMemory c1 = batchMemory(*model, Precision::Double, n, Backend::Cpu, 1);
  const BatchMemory c3 = batchMemory(*model, Precision::Double, n, Backend::Cpu, 3);
  EXPECT_EQ(c1.deviceBytes, 0);
  EXPECT_EQ(c3.hostBytes - c1.hostBytes, 2 * workspace * 8);
}

TEST(Throughput, TooLargeBatchesAreExplained) {
  BatchMemory need;
  need.deviceBytes = std::int64_t(12) << 30;
  need.hostBytes = 1 << 20;
  MemoryAvailable have;
  have.deviceBytes = std::int64_t(10) << 30;
  have.hostBytes = std::int64_t(10) << 30;
  EXPECT_EQ(whyBatchDoesNotFit(need, have), "needs 12.0 GiB of device memory, 10.0 GiB free");
  have.deviceBytes = std::int64_t(80) << 30;
  EXPECT_EQ(whyBatchDoesNotFit(need, have), "");
  EXPECT_GT(memoryAvailable(false).hostBytes, 0);
}

// A Batch larger than the memory available is refused when it is made, before it allocates
// (2^62 worlds once failed in std::vector, 3e10 after growing to what the machine had), saying what it
// needs, what there is and how many worlds fit: the command line's check, made by the library.
TEST(BatchMemory, BatchLargerThanTheHostMemoryIsRefusedBeforeAllocating) {
  const auto model = makeChain(7);
  for (const std::int64_t worlds : {std::int64_t(1) << 62, std::int64_t(30'000'000'000)}) {
    std::string message;
    try {
      Batch<double> tooBig(model, worlds, Backend::Cpu);
    } catch (const BatchMemoryError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("Batch: " + std::to_string(worlds) + " worlds need more memory than is available (needs "),
              std::string::npos) << message;
    EXPECT_NE(message.find(" GiB of host memory, "), std::string::npos) << message;
    const std::size_t most = message.find("at most ");
    ASSERT_NE(most, std::string::npos) << message;
    const std::int64_t fit = std::stoll(message.substr(most + 8));
    EXPECT_GT(fit, 1000) << message;
    EXPECT_NE(message.find(" worlds of this model fit"), std::string::npos) << message;
    // The same count as the command line's (what is available moves a little between readings).
    const double now = double(worldsThatFit(*model, Precision::Double, Backend::Cpu, 0, memoryAvailable(false)));
    EXPECT_NEAR(double(fit) / now, 1.0, 0.1) << message;
  }
}

TEST(Throughput, RejectsBadConfigurations) {
  ThroughputConfig c = chain7(Backend::Cpu, Precision::Double, 4);
  c.worlds = 0;
  EXPECT_THROW(measureThroughput(c), std::invalid_argument);
  c = chain7(Backend::Cpu, Precision::Double, 4);
  c.q0.pop_back();
  EXPECT_THROW(measureThroughput(c), std::invalid_argument);
  c = chain7(Backend::Cpu, Precision::Double, 4);
  c.model = nullptr;
  EXPECT_THROW(measureThroughput(c), std::invalid_argument);
}

TEST(Throughput, CpuMeasurementAndTable) {
  const ThroughputResult r = measureThroughput(chain7(Backend::Cpu, Precision::Double, 16));
  EXPECT_GT(r.worldStepsPerSecond, 0);
  EXPECT_NEAR(r.worldStepsPerSecond * r.secondsPerStep, 16.0, 1e-9);
  EXPECT_LE(r.minSecondsPerStep, r.secondsPerStep);
  EXPECT_LE(r.secondsPerStep, r.maxSecondsPerStep);
  EXPECT_EQ(r.flaggedWorlds, 0);
  EXPECT_EQ(r.device, "cpu");
  EXPECT_GE(r.cpuThreads, 1);
  std::ostringstream out;
  printThroughputTable(out, {r, r});
  const std::string text = out.str();
  EXPECT_NE(text.find("world-steps/s"), std::string::npos);
  EXPECT_NE(text.find("chain-7"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(text.find("INVALID"), std::string::npos);
}

TEST(Throughput, ConstrainedSceneIsAssembledBeforeTiming) {
  ThroughputConfig c = chain7(Backend::Cpu, Precision::Double, 4);
  c.scene = "chain-7-seed";
  c.model = makeChain7Seed();
  c.assemble = true;
  EXPECT_EQ(measureThroughput(c).flaggedWorlds, 0);
}

TEST(Throughput, CudaWithoutDeviceThrowsOtherwiseMeasuresAndMatchesTheEstimate) {
  const DeviceInfo dev = queryDevice();
  ThroughputConfig c = chain7(Backend::Cuda, Precision::Float, 4096);
  if (!dev.available) {
    EXPECT_THROW(measureThroughput(c), std::runtime_error);
    GTEST_SKIP() << "GPU part skipped: " << dev.reason;
  }
  const ThroughputResult r = measureThroughput(c);
  EXPECT_GT(r.worldStepsPerSecond, 0);
  EXPECT_EQ(r.flaggedWorlds, 0);
  EXPECT_EQ(r.device, dev.name);
  // The device's own accounting of the batch's allocations (no kernel has run on this batch, so
  // no local-memory reservation is included); cudaMalloc rounds each of ~30 arrays up.
  checkCuda(cudaFree(nullptr), "context");
  std::size_t free0 = 0, free1 = 0, total = 0;
  checkCuda(cudaMemGetInfo(&free0, &total), "cudaMemGetInfo");
  {
    Batch<float> batch(c.model, 1 << 20, Backend::Cuda);
    batch.upload();
    checkCuda(cudaMemGetInfo(&free1, &total), "cudaMemGetInfo");
  }
  const std::int64_t used = std::int64_t(free0) - std::int64_t(free1);
  const std::int64_t estimate = batchMemory(*c.model, Precision::Float, 1 << 20, Backend::Cuda).deviceBytes;
  EXPECT_GE(used, estimate);
  EXPECT_LE(used, estimate + (std::int64_t(64) << 20));
}

}  // namespace
}  // namespace lockstep::test
