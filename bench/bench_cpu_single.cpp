// One CPU thread: the cost of one forward-dynamics evaluation of one world, of its stages, and of
// one RK4 step, for comparison with the one-thread figures of other engines (docs/scenes.md:
// Pinocchio 3.7 ABA 2.39 us, MuJoCo 2.2.2 3.0 us, Simbody 3.7 14.8 us on chain-7 in double).
//
//   cpu1/fd/<scene>/<precision>             computeStateDerivative of one world (kinematics, forces,
//                                           articulated-body sweep, constraints, qdot): what each
//                                           RK4 stage costs; the same world again and again
//   cpu1/fd-lanes/<scene>/<precision>       the same on a SIMD pack of worlds (lanes.h; the
//                                           chosen instruction set's width, cpuIsa), as the CPU
//                                           backend steps models without contacts; per world
//   cpu1/stage/<stage>/<scene>/<precision>  one stage of it alone (kinematics, forces, factor, solve)
//   cpu1/evaluate/<scene>/<precision>/<n>   Batch::evaluate over n worlds (adds the energies and the
//                                           OpenMP dispatch), per world
//   cpu1/step/<scene>/<precision>/<n>       Batch::step, one RK4 step over n worlds (1, 2, 3, 256), per
//                                           world-step
//   cpu1/step-scalar/<scene>/<precision>/1  the same for one world on the scalar code
//                                           (CpuOptions::lanes false): the single-world engine
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench_scenes.h"
#include "lockstep/physics/integrator.h"
#include "lockstep/backends/cpu_isa.h"

namespace lockstep::bench {
namespace {

// Counts `items` processed in this run and reports the seconds per item under `name`.
void reportPerItem(benchmark::State& state, std::int64_t items, const char* name) {
  state.SetItemsProcessed(items);
  state.counters[name] = benchmark::Counter(double(items), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One world of a scene at its (assembled) initial state, with a workspace of its own.
template <class T>
struct OneWorld {
  explicit OneWorld(const BenchScene& scene) : batch(scene.model, 1, Backend::Cpu) {
    batch.setAllStates(scene.q0, scene.u0);
    if (scene.assemble) batch.assemble();
    layout = WorkspaceLayout::of(batch.sizes());
    scratch.assign(layout.total, T(0));
    model = batch.hostModelView();
    world = batch.hostView().world(0);
  }
  Workspace<T> workspace() { return {layout, {scratch.data(), 1}}; }

  Batch<T> batch;
  WorkspaceLayout layout;
  std::vector<T> scratch;
  ModelView<T> model;
  WorldView<T> world;
};

template <class T>
void forwardDynamics(benchmark::State& state, const BenchScene& scene) {
  OneWorld<T> one(scene);
  const Workspace<T> ws = one.workspace();
  int status = 0;
  for (auto _ : state) {
    status |= computeStateDerivative(one.model, one.world, ws);
    benchmark::ClobberMemory();
  }
  if (status) state.SkipWithError(("the evaluation failed: " + describeStatus(status)).c_str());
  state.SetItemsProcessed(state.iterations());
}

// One pack of copies of the world, on the CPU backend's default instruction set: the
// per-world cost when worlds share the SIMD lanes. Timed in batches of repetitions inside the
// library (the pack code is compiled there, once per instruction set).
template <class T>
void forwardDynamicsLanes(benchmark::State& state, const BenchScene& scene) {
  OneWorld<T> one(scene);
  const BackendContext<T> ctx{one.model, one.batch.hostView(), one.layout, nullptr, nullptr};
  constexpr std::int64_t kRepetitions = 64;
  int status = 0;
  for (auto _ : state) status |= cpuRepeatPackEvaluation(ctx, kRepetitions);
  if (status) state.SkipWithError(("the evaluation failed: " + describeStatus(status)).c_str());
  state.SetLabel(defaultCpuIsa());
  reportPerItem(state, state.iterations() * kRepetitions * cpuPackWidth(sizeof(T) == 8), "s_per_world");
}

enum class Stage { Kinematics, Forces, Factor, Solve };
const char* stageName(Stage s) {
  switch (s) {
    case Stage::Kinematics:
      return "kinematics";
    case Stage::Forces:
      return "forces";
    case Stage::Factor:
      return "factor";
    case Stage::Solve:
      return "solve";
  }
  return "";
}

template <class T>
void oneStage(benchmark::State& state, const BenchScene& scene, Stage stage) {
  OneWorld<T> one(scene);
  const Workspace<T> ws = one.workspace();
  const Sizes& s = one.model.sizes;
  // Every stage runs on the outputs of the stages before it.
  computeStateDerivative(one.model, one.world, ws);
  const Strided<T> zdot = ws.ydot(s.nq + s.nu), udot = ws.ydot(s.nq);
  for (auto _ : state) {
    switch (stage) {
      case Stage::Kinematics:
        computeKinematics<T>(one.model, one.world.params, one.world.q, one.world.u, ws);
        break;
      case Stage::Forces:
        computeForces<T>(one.model, one.world, one.world.u, ws, zdot);
        break;
      case Stage::Factor:
        factorArticulatedInertias<T>(one.model, one.world.params, ws);
        break;
      case Stage::Solve:
        solveArticulated<T>(one.model, ws, ws.Fb(), ws.tauTotal(), true, udot, ws.A_GB());
        break;
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

template <class T>
void batchEvaluate(benchmark::State& state, const BenchScene& scene, std::int64_t worlds) {
  Batch<T> batch(scene.model, worlds, Backend::Cpu, CpuOptions{1});
  batch.setAllStates(scene.q0, scene.u0);
  if (scene.assemble) batch.assemble();
  batch.evaluate();  // sizes the scratch
  for (auto _ : state) batch.evaluate();
  reportPerItem(state, state.iterations() * worlds, "s_per_world");
}

template <class T>
void batchStep(benchmark::State& state, const BenchScene& scene, std::int64_t worlds, bool lanes) {
  Batch<T> batch(scene.model, worlds, Backend::Cpu, CpuOptions{1, lanes});
  batch.setAllStates(scene.q0, scene.u0);
  if (scene.assemble) batch.assemble();
  batch.step(1e-3, 1, Integrator::RK4);
  for (auto _ : state) batch.step(1e-3, 1, Integrator::RK4);
  for (std::int64_t w = 0; w < worlds; ++w)
    if (batch.status(w) != kStatusOk) {
      state.SkipWithError(("world " + std::to_string(w) + ": " + describeStatus(batch.status(w))).c_str());
      break;
    }
  reportPerItem(state, state.iterations() * worlds, "s_per_world_step");
}

// With --benchmark_repetitions, the fastest repetition too: on a machine shared with other work it
// is the closest to the cost of the code alone.
double fastest(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

template <class T>
void registerFor(const BenchScene& scene, const std::string& precision) {
  const std::string tail = scene.name + "/" + precision;
  benchmark::RegisterBenchmark(("cpu1/fd/" + tail).c_str(), [&scene](benchmark::State& st) {
    forwardDynamics<T>(st, scene);
  })->ComputeStatistics("min", fastest);
  if (scene.model->contacts().empty())
    benchmark::RegisterBenchmark(("cpu1/fd-lanes/" + tail).c_str(), [&scene](benchmark::State& st) {
      forwardDynamicsLanes<T>(st, scene);
    })->ComputeStatistics("min", fastest);
  for (Stage stage : {Stage::Kinematics, Stage::Forces, Stage::Factor, Stage::Solve})
    benchmark::RegisterBenchmark(("cpu1/stage/" + std::string(stageName(stage)) + "/" + tail).c_str(),
                                 [&scene, stage](benchmark::State& st) { oneStage<T>(st, scene, stage); })
        ->ComputeStatistics("min", fastest);
  for (std::int64_t worlds : {1, 256})
    benchmark::RegisterBenchmark(("cpu1/evaluate/" + tail + "/" + std::to_string(worlds)).c_str(),
                                 [&scene, worlds](benchmark::State& st) { batchEvaluate<T>(st, scene, worlds); })
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics("min", fastest);
  for (std::int64_t worlds : {1, 2, 3, 256})
    benchmark::RegisterBenchmark(("cpu1/step/" + tail + "/" + std::to_string(worlds)).c_str(),
                                 [&scene, worlds](benchmark::State& st) { batchStep<T>(st, scene, worlds, true); })
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics("min", fastest);
  // The same step of one world on the scalar code (CpuOptions::lanes false): the single-world engine
  // that small batches are compared with.
  benchmark::RegisterBenchmark(("cpu1/step-scalar/" + tail + "/1").c_str(),
                               [&scene](benchmark::State& st) { batchStep<T>(st, scene, 1, false); })
      ->Unit(benchmark::kMicrosecond)
      ->ComputeStatistics("min", fastest);
}

}  // namespace

void registerCpuSingleThreadBenchmarks() {
  for (const BenchScene& scene : benchScenes()) {
    if (scene.name == "free-bushing-grid-16") continue;  // 256 free bodies: the step/ suite covers it
    registerFor<double>(scene, "double");
    registerFor<float>(scene, "float");
  }
}

}  // namespace lockstep::bench
