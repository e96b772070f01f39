// World-steps per second of the reference scenes (docs/scenes.md) on the CPU and CUDA backends,
// in float and double, over 1 to 2^20 worlds: one benchmark per (scene, backend, precision, worlds),
// named step/<scene>/<backend>/<precision>/<worlds>.
//
// Each iteration is one Batch::step call of several RK4 steps of dt = 1e-3 over every world, timed
// by ThroughputRunner (steady_clock on the CPU, a cudaEvent pair on CUDA) after its warm-up and
// reported as manual time; items/s is world-steps/s. The prepared batch is kept between Google
// Benchmark's runs of the same benchmark, so construction, upload and warm-up happen once.
//
// A benchmark is skipped, with the reason, when
//   - it needs a CUDA device and none is usable;
//   - the batch would not fit in 90% of the free device memory or available host memory;
//   - it is a CPU run of more than kCpuBodyWorlds bodies x worlds (seconds per call on two cores)
//     and LOCKSTEP_BENCH_FULL=1 is not set.
// Worlds flagged by the engine (failed steps) are not advanced, so a run with any is an error.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench_scenes.h"
#include "lockstep/backends/device.h"

namespace lockstep::bench {
namespace {

// CPU runs above this many bodies x worlds need LOCKSTEP_BENCH_FULL=1.
constexpr std::int64_t kCpuBodyWorlds = std::int64_t(1) << 17;
constexpr std::int64_t kWorldCounts[] = {1, 64, 256, 4096, 65536, 1048576};

bool fullRun() {
  const char* v = std::getenv("LOCKSTEP_BENCH_FULL");
  return v && std::string(v) == "1";
}

// LOCKSTEP_BENCH_CPU_THREADS=n runs the CPU backend on n threads (default: defaultCpuThreads(), all cores).
// On a machine shared with other work, one thread gives steadier figures: a parallel region waits
// for its slowest thread, and a thread that the OS has descheduled stalls the whole call.
int cpuThreadsFromEnvironment() {
  const char* v = std::getenv("LOCKSTEP_BENCH_CPU_THREADS");
  return v ? std::max(0, std::atoi(v)) : 0;
}

// The runner of the benchmark that ran last: Google Benchmark calls a benchmark's function several
// times (to size the iteration count, then for each repetition); the batch is built once.
struct CachedRunner {
  std::string key;
  std::unique_ptr<ThroughputRunner> runner;
};
CachedRunner& cachedRunner() {
  static CachedRunner cache;
  return cache;
}

ThroughputRunner& runnerFor(const std::string& key, const ThroughputConfig& config) {
  CachedRunner& cache = cachedRunner();
  if (cache.key != key || !cache.runner) {
    cache.runner.reset();
    cache.runner = std::make_unique<ThroughputRunner>(config);
    cache.key = key;
  }
  return *cache.runner;
}

// Why this benchmark cannot run here, or empty.
std::string skipReason(const ThroughputConfig& c) {
  if (c.backend == Backend::Cuda) {
    const DeviceInfo dev = queryDevice();
    if (!dev.available) return "skipped: " + dev.reason;
  }
  if (c.backend == Backend::Cpu && !fullRun() && c.worlds * c.model->numBodies() > kCpuBodyWorlds)
    return "skipped: " + std::to_string(c.worlds) + " worlds of " + std::to_string(c.model->numBodies()) +
           " bodies on the CPU; set LOCKSTEP_BENCH_FULL=1 to run it";
  const BatchMemory need = batchMemory(*c.model, c.precision, c.worlds, c.backend);
  const std::string why = whyBatchDoesNotFit(need, memoryAvailable(c.backend == Backend::Cuda));
  return why.empty() ? "" : "skipped: " + why;
}

void runStep(benchmark::State& state, const std::string& key, ThroughputConfig config) {
  if (cachedRunner().key != key) {  // free the previous batch before measuring what is free
    cachedRunner().runner.reset();
    cachedRunner().key.clear();
  }
  const std::string skip = skipReason(config);
  if (!skip.empty()) {
    state.SkipWithError(skip.c_str());
    return;
  }
  ThroughputRunner* runner = nullptr;
  try {
    runner = &runnerFor(key, config);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) state.SetIterationTime(runner->timeOneCall());

  const std::int64_t flagged = runner->flaggedWorlds();
  if (flagged) {
    const std::string msg = std::to_string(flagged) + " worlds were flagged and not advanced";
    state.SkipWithError(msg.c_str());
  }
  state.SetItemsProcessed(state.iterations() * config.worlds * config.stepsPerCall);
  state.counters["worlds"] = double(config.worlds);
  state.counters["steps_per_call"] = config.stepsPerCall;
  state.counters["threads"] = runner->cpuThreads();
  state.counters["device_bytes"] = benchmark::Counter(double(runner->memory().deviceBytes),
                                                      benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
  state.counters["host_bytes"] = benchmark::Counter(double(runner->memory().hostBytes), benchmark::Counter::kDefaults,
                                                    benchmark::Counter::kIs1024);
  state.SetLabel(runner->device());
}

}  // namespace

void registerStepBenchmarks() {
  for (const BenchScene& scene : benchScenes()) {
    for (Backend backend : {Backend::Cpu, Backend::Cuda}) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        for (std::int64_t worlds : kWorldCounts) {
          ThroughputConfig c = throughputConfig(scene, backend, precision, worlds);
          const bool cuda = backend == Backend::Cuda;
          c.stepsPerCall = cuda || worlds <= 4096 ? 10 : 1;  // CPU: keep one call under a minute
          c.warmupCalls = cuda ? 2 : 1;
          if (!cuda) c.cpuThreads = cpuThreadsFromEnvironment();
          const std::string name = "step/" + scene.name + "/" + backendName(backend) + "/" + precisionName(precision) +
                                   "/" + std::to_string(worlds);
          benchmark::RegisterBenchmark(name.c_str(), [name, c](benchmark::State& state) { runStep(state, name, c); })
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace lockstep::bench
