// Lockstep throughput measurement: how many world-steps per second one backend advances one scene.
//
//   ThroughputConfig c;                      // what to run
//   c.scene = "chain-7";  c.model = makeChain(7);  c.q0 = chainInitialQ(7);
//   c.backend = Backend::Cuda;  c.precision = Precision::Float;  c.worlds = 65536;
//   ThroughputResult r = measureThroughput(c);
//   printThroughputTable(std::cout, {r});
//
// Method. A Batch of `worlds` copies of the model is built, every world is set to (q0, u0), the
// constraints are assembled if asked, and the batch is copied to the device. `warmupCalls` calls of
// Batch::step(dt, stepsPerCall, integrator) come first (they load the GPU module and fill caches
// and page tables); then `repetitions` calls are timed one by one:
//   CPU   std::chrono::steady_clock around each call (the call returns when every world is done);
//   CUDA  a cudaEvent pair recorded on the batch's stream (Batch::stream()) around each call
//         (Batch::step launches asynchronously on that stream), then cudaEventSynchronize on the
//         second event.
// The figure reported is the median call; world-steps/s = worlds * stepsPerCall / median call time.
// Only the steps are timed: no host<->device copies, no state setting, no allocation.
//
// A world that fails (StatusFlag) is skipped by later steps, which would inflate the figure: the
// result counts such worlds (flaggedWorlds) and printThroughputTable marks rows that have any.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/study/run_choices.h"

namespace lockstep {

// Bytes a Batch of `worlds` worlds of `model` allocates (batchMemoryOf, batch.h).
BatchMemory batchMemory(const Model& model, Precision precision, std::int64_t worlds, Backend backend,
                        int cpuThreads = 0);  // cpuThreads 0: defaultCpuThreads() (a Batch's default)

// The most worlds of `model` whose batch fits in `fraction` of `have` (0 when not even one does).
std::int64_t worldsThatFit(const Model& model, Precision precision, Backend backend, int cpuThreads,
                           const MemoryAvailable& have, double fraction = 0.9);

struct ThroughputConfig {
  std::string scene;  // label for the table, e.g. "chain-7"
  std::shared_ptr<const Model> model;
  std::vector<double> q0, u0;  // initial state of every world; empty: q = model default, u = 0
  bool assemble = false;       // project q, u onto the constraints before timing
  Backend backend = Backend::Cpu;
  Precision precision = Precision::Float;
  std::int64_t worlds = 1;
  double dt = 1e-3;
  Integrator integrator = Integrator::RK4;
  int stepsPerCall = 10;  // steps per Batch::step call (one kernel launch on CUDA)
  int warmupCalls = 2;
  int repetitions = 5;  // timed calls; the median is reported
  int cpuThreads = 0;   // CPU backend threads of the batch (CpuOptions::threads); 0: defaultCpuThreads()
  bool observe = true;  // write the observations after each call (Batch's default)
};

struct ThroughputResult {
  ThroughputConfig config;       // what was run (the model pointer included)
  double secondsPerStep = 0;     // median call time / stepsPerCall: one step of all worlds
  double minSecondsPerStep = 0;  // fastest and slowest timed call, per step
  double maxSecondsPerStep = 0;
  double worldStepsPerSecond = 0;  // worlds / secondsPerStep
  BatchMemory memory;
  std::int64_t flaggedWorlds = 0;  // worlds with a StatusFlag at the end: not advanced, figure invalid
  int cpuThreads = 0;              // threads the CPU backend used (0 on CUDA)
  std::string device;              // the CUDA device's name, or "cpu"
};

// A prepared batch whose step calls can be timed one at a time: what measureThroughput and the
// Google Benchmark suite (bench/) both use. The constructor builds the batch, sets the states,
// assembles if asked and runs the warm-up calls; it throws std::invalid_argument for a bad config,
// std::runtime_error when the batch does not fit in memory (whyBatchDoesNotFit) or when CUDA is
// asked for and no device is usable.
class ThroughputRunner {
 public:
  explicit ThroughputRunner(const ThroughputConfig& config);
  ~ThroughputRunner();
  ThroughputRunner(const ThroughputRunner&) = delete;
  ThroughputRunner& operator=(const ThroughputRunner&) = delete;

  // Advances every world by config().stepsPerCall steps; returns the seconds that took (device
  // time between two events on CUDA, steady_clock on the CPU).
  double timeOneCall();
  // Worlds flagged so far (on CUDA this downloads the batch: call it outside timed regions).
  std::int64_t flaggedWorlds();
  const ThroughputConfig& config() const { return config_; }
  const BatchMemory& memory() const { return memory_; }
  int cpuThreads() const;  // threads of the CPU backend's calls (0 on CUDA)
  const std::string& device() const { return device_; }

  struct Impl;  // the batch of one precision (throughput.cpp)

 private:
  ThroughputConfig config_;
  BatchMemory memory_;
  std::string device_;
  std::unique_ptr<Impl> impl_;
};

// Builds a ThroughputRunner, times config.repetitions calls and summarizes them. Throws as
// ThroughputRunner does.
ThroughputResult measureThroughput(const ThroughputConfig& config);

// One row per result: scene, backend, precision, worlds, steps per call, world-steps/s, time per
// step, memory, flagged worlds (rows with flagged worlds end in "INVALID").
void printThroughputTable(std::ostream& out, const std::vector<ThroughputResult>& results);

}  // namespace lockstep
