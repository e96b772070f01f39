#include "lockstep/study/throughput.h"

#include "lockstep/engine/fields.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "lockstep/backends/device.h"

namespace lockstep {

// ---- memory (the estimate is the Batch's own: batchMemoryOf, host/batch/device_memory.cpp) ------

BatchMemory batchMemory(const Model& model, Precision precision, std::int64_t worlds, Backend backend,
                        int cpuThreadCount) {
  if (worlds < 1) throw std::invalid_argument("batchMemory: worlds: must be at least 1");
  const Sizes s = sizesOf(model);
  const int threads = cpuThreadCount > 0 ? cpuThreadCount : defaultCpuThreads();
  return withPrecision(precision, [&](auto t) { return batchMemoryOf<decltype(t)>(s, worlds, backend, threads); });
}

std::int64_t worldsThatFit(const Model& model, Precision precision, Backend backend, int cpuThreadCount,
                           const MemoryAvailable& have, double fraction) {
  const Sizes s = sizesOf(model);
  const int threads = cpuThreadCount > 0 ? cpuThreadCount : defaultCpuThreads();
  return withPrecision(precision,
                       [&](auto t) { return worldsThatFitOf<decltype(t)>(s, backend, threads, have, fraction); });
}

// ---- runner -------------------------------------------------------------------------------------

struct ThroughputRunner::Impl {
  virtual ~Impl() = default;
  virtual void step() = 0;  // one Batch::step call; asynchronous on CUDA
  virtual std::int64_t flagged() = 0;
  virtual cudaStream_t stream() = 0;  // the stream the batch launches on (CUDA)
  virtual void synchronize() = 0;

  cudaEvent_t start = nullptr, stop = nullptr;
};

namespace {

template <class T>
struct BatchRunner final : ThroughputRunner::Impl {
  BatchRunner(const ThroughputConfig& c) : config(c), batch(c.model, c.worlds, c.backend, CpuOptions{c.cpuThreads}) {
    const Model& m = *c.model;
    const std::vector<double> q = c.q0.empty() ? m.defaultQ() : c.q0;
    const std::vector<double> u = c.u0.empty() ? std::vector<double>(m.nu(), 0.0) : c.u0;
    batch.setAllStates(q, u);
    batch.setObserveAfterStep(c.observe);
    batch.upload();
    if (c.assemble) batch.assemble();
  }
  void step() override { batch.step(config.dt, config.stepsPerCall, config.integrator); }
  cudaStream_t stream() override { return static_cast<cudaStream_t>(batch.stream()); }
  void synchronize() override { batch.synchronize(); }
  std::int64_t flagged() override {
    batch.download();
    const std::int32_t* status = batch.hostView().status;
    return std::count_if(status, status + batch.numWorlds(), [](std::int32_t s) { return s != kStatusOk; });
  }

  ThroughputConfig config;
  Batch<T> batch;
};

void checkConfig(const ThroughputConfig& c) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("throughput '" + c.scene + "': " + what); };
  if (!c.model) fail("model: must not be null");
  if (c.worlds < 1) fail("worlds: must be at least 1");
  if (!(c.dt > 0)) fail("dt: must be positive");
  if (c.stepsPerCall < 1) fail("steps per call: must be at least 1");
  if (c.warmupCalls < 0) fail("warm-up calls: must be >= 0");
  if (c.repetitions < 1) fail("repetitions: must be at least 1");
  if (c.cpuThreads < 0) fail("CPU threads: must be >= 0");
  if (!c.q0.empty() && static_cast<int>(c.q0.size()) != c.model->nq())
    fail("q0: expected " + std::to_string(c.model->nq()) + " values, got " + std::to_string(c.q0.size()));
  if (!c.u0.empty() && static_cast<int>(c.u0.size()) != c.model->nu())
    fail("u0: expected " + std::to_string(c.model->nu()) + " values, got " + std::to_string(c.u0.size()));
}

}  // namespace

ThroughputRunner::ThroughputRunner(const ThroughputConfig& config) : config_(config) {
  checkConfig(config_);
  const bool cuda = config_.backend == Backend::Cuda;
  if (cuda) {
    const DeviceInfo dev = queryDevice();
    if (!dev.available) throw std::runtime_error("throughput '" + config_.scene + "': " + dev.reason);
    device_ = dev.name;
  } else {
    device_ = "cpu";
  }
  memory_ = batchMemory(*config_.model, config_.precision, config_.worlds, config_.backend, cpuThreads());
  const std::string why = whyBatchDoesNotFit(memory_, memoryAvailable(cuda));
  if (!why.empty()) throw std::runtime_error("throughput '" + config_.scene + "': " + why);

  impl_ = withPrecision(config_.precision, [&](auto t) -> std::unique_ptr<Impl> {
    return std::make_unique<BatchRunner<decltype(t)>>(config_);
  });
  if (cuda) {
    checkCuda(cudaEventCreate(&impl_->start), "cudaEventCreate");
    checkCuda(cudaEventCreate(&impl_->stop), "cudaEventCreate");
  }
  for (int k = 0; k < config_.warmupCalls; ++k) impl_->step();
  impl_->synchronize();
}

ThroughputRunner::~ThroughputRunner() {
  if (impl_ && impl_->start) cudaEventDestroy(impl_->start);
  if (impl_ && impl_->stop) cudaEventDestroy(impl_->stop);
}

int ThroughputRunner::cpuThreads() const {
  if (config_.backend == Backend::Cuda) return 0;
  return config_.cpuThreads > 0 ? config_.cpuThreads : defaultCpuThreads();
}

double ThroughputRunner::timeOneCall() {
  if (config_.backend == Backend::Cuda) {
    checkCuda(cudaEventRecord(impl_->start, impl_->stream()), "cudaEventRecord");
    impl_->step();
    checkCuda(cudaEventRecord(impl_->stop, impl_->stream()), "cudaEventRecord");
    checkCuda(cudaEventSynchronize(impl_->stop), "waiting for the timed steps");
    checkCuda(cudaGetLastError(), "timed steps");
    float ms = 0;
    checkCuda(cudaEventElapsedTime(&ms, impl_->start, impl_->stop), "cudaEventElapsedTime");
    return 1e-3 * double(ms);
  }
  const auto t0 = std::chrono::steady_clock::now();
  impl_->step();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

std::int64_t ThroughputRunner::flaggedWorlds() { return impl_->flagged(); }

// ---- measurement and report ---------------------------------------------------------------------

ThroughputResult measureThroughput(const ThroughputConfig& config) {
  ThroughputRunner runner(config);
  std::vector<double> seconds;
  for (int k = 0; k < config.repetitions; ++k) seconds.push_back(runner.timeOneCall());
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);

  ThroughputResult r;
  r.config = config;
  r.secondsPerStep = median / config.stepsPerCall;
  r.minSecondsPerStep = seconds.front() / config.stepsPerCall;
  r.maxSecondsPerStep = seconds.back() / config.stepsPerCall;
  r.worldStepsPerSecond = double(config.worlds) / r.secondsPerStep;
  r.memory = runner.memory();
  r.flaggedWorlds = runner.flaggedWorlds();
  r.cpuThreads = runner.cpuThreads();
  r.device = runner.device();
  return r;
}

void printThroughputTable(std::ostream& out, const std::vector<ThroughputResult>& results) {
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %-7s %-9s %9s %5s %14s %12s %10s %10s %s\n", "scene", "backend", "precision",
                "worlds", "steps", "world-steps/s", "s/step", "host MiB", "device MiB", "flagged");
  out << line;
  for (const ThroughputResult& r : results) {
    const ThroughputConfig& c = r.config;
    std::string backend = backendName(c.backend);
    if (c.backend == Backend::Cpu) backend += "x" + std::to_string(r.cpuThreads);
    std::snprintf(line, sizeof line, "%-22s %-7s %-9s %9lld %5d %14.4g %12.4g %10.1f %10.1f %lld%s\n", c.scene.c_str(),
                  backend.c_str(), precisionName(c.precision), static_cast<long long>(c.worlds), c.stepsPerCall,
                  r.worldStepsPerSecond, r.secondsPerStep, double(r.memory.hostBytes) / 1048576.0,
                  double(r.memory.deviceBytes) / 1048576.0, static_cast<long long>(r.flaggedWorlds),
                  r.flaggedWorlds ? "  INVALID: flagged worlds were not advanced" : "");
    out << line;
  }
}

}  // namespace lockstep
