// The cost of exact derivatives (Batch::linearize, docs/derivatives.md) against the cost of a step,
// per world, one CPU thread, double, 64 worlds:
//   derivatives/<scene>/step/<integrator>           one step of every world (the packs)
//   derivatives/<scene>/linearize/<integrator>      A and B (2nu x 3nu) of one step of every world
//   derivatives/<scene>/evaluation                  d udot / d (dq, u, tau) of every world
//   derivatives/<scene>/linearize/rk4/cuda          A and B of 4096 worlds on the GPU (skipped without one;
//                                                   the Jacobians' copy to the host included)
// The robots of bench_scenes (panda, ur5, solo12, chain-7, chain-7-seed) and Gymnasium's MJCF robots
// read by MuJoCo's compiler (models/mjcf/; under the compliant law, and under MuJoCo's own law as
// derivatives/mjcf-<robot>-mujoco/{step,linearize}/<the file's integrator>), whose side by side anchor, MuJoCo's own
// mjd_transitionFD on the same file, is in bench_mujoco_step.cpp; Pinocchio's
// computeABADerivatives is timed by bench/bench_derivatives.py. Counter us_per_world: the median
// seconds per iteration over the worlds.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_scenes.h"
#include "lockstep/backends/device.h"
#include "lockstep/io/scene.h"

namespace lockstep::bench {
namespace {

constexpr std::int64_t kWorlds = 64;

enum class What { Step, Linearize, Evaluation };

void derivatives(benchmark::State& state, std::shared_ptr<const Model> model, std::vector<double> q0,
                 std::vector<double> u0, bool assemble, What what, Integrator integrator, double dt) {
  Batch<double> batch(model, kWorlds, Backend::Cpu, CpuOptions{1});
  if (u0.empty()) u0.assign(model->nu(), 0.0);
  batch.setAllStates(q0, u0);
  if (assemble) batch.assemble();
  batch.setObserveAfterStep(false);
  auto run = [&] {
    if (what == What::Step) {
      batch.step(dt, 1, integrator);
      batch.setAllStates(q0, u0);  // the same state every time, as for the linearizations
    } else if (what == What::Linearize) {
      batch.linearize(dt, integrator);
    } else {
      batch.linearizeEvaluation();
    }
  };
  run();
  for (auto _ : state) run();
  state.counters["us_per_world"] =
      benchmark::Counter(double(state.iterations()) * kWorlds * 1e-6, benchmark::Counter::kIsRate |
                                                                      benchmark::Counter::kInvert);
  state.counters["nu"] = model->nu();
}

void derivativesOnDevice(benchmark::State& state, std::shared_ptr<const Model> model, std::vector<double> q0,
                         std::vector<double> u0, bool assemble) {
  if (!queryDevice().available) {
    state.SkipWithError(("skipped: " + queryDevice().reason).c_str());
    return;
  }
  constexpr std::int64_t kDeviceWorlds = 4096;
  Batch<double> batch(model, kDeviceWorlds, Backend::Cuda);
  if (u0.empty()) u0.assign(model->nu(), 0.0);
  batch.setAllStates(q0, u0);
  batch.upload();
  if (assemble) batch.assemble();
  batch.linearize(1e-3, Integrator::RK4);
  for (auto _ : state) batch.linearize(1e-3, Integrator::RK4);
  state.counters["us_per_world"] = benchmark::Counter(double(state.iterations()) * kDeviceWorlds * 1e-6,
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void registerScene(const std::string& name, std::shared_ptr<const Model> model, const std::vector<double>& q0,
                   const std::vector<double>& u0, bool assemble) {
  for (Integrator integrator : {Integrator::RK4, Integrator::SemiImplicitEuler}) {
    const std::string in = integrator == Integrator::RK4 ? "rk4" : "euler";
    benchmark::RegisterBenchmark(("derivatives/" + name + "/step/" + in).c_str(), derivatives, model, q0, u0,
                                 assemble, What::Step, integrator, 1e-3);
    benchmark::RegisterBenchmark(("derivatives/" + name + "/linearize/" + in).c_str(), derivatives, model, q0, u0,
                                 assemble, What::Linearize, integrator, 1e-3);
  }
  benchmark::RegisterBenchmark(("derivatives/" + name + "/evaluation").c_str(), derivatives, model, q0, u0, assemble,
                               What::Evaluation, Integrator::RK4, 1e-3);
  benchmark::RegisterBenchmark(("derivatives/" + name + "/linearize/rk4/cuda").c_str(), derivativesOnDevice, model, q0,
                               u0, assemble);
}

const bool registered = [] {
  for (const char* name : {"chain-7", "chain-7-seed", "panda", "ur5", "solo12"}) {
    for (const BenchScene& s : benchScenes())
      if (s.name == name) registerScene(s.name, s.model, s.q0, s.u0, s.assemble);
  }
  // Gymnasium's robots through MuJoCo's compiler, for the side by side with mjd_transitionFD: under
  // the compliant law at q0 (mjcf-<robot>), and under MuJoCo's law (mjcf-<robot>-mujoco) as
  // bench_mujoco_step.cpp takes MuJoCo's: 200 steps of the file's own step on, zero actions, then
  // one step of the file's dt and integrator (its soft solve's derivatives by the implicit function
  // theorem).
  const std::string dir = std::string(LOCKSTEP_SOURCE_SCENES_DIR) + "/../models/mjcf/";
  for (const char* robot : {"reacher", "inverted_double_pendulum", "half_cheetah", "ant"}) {
    try {
      const Scene scene = loadSceneFile(dir + robot + ".xml");
      const double dt = scene.simulation.dt;
      const Integrator in = scene.simulation.integrator;
      Batch<double> settle(scene.model, 1);
      settle.setAllStates(scene.q0, scene.u0.empty() ? std::vector<double>(scene.model->nu(), 0.0) : scene.u0);
      settle.step(dt, 200, in);
      const std::string name = std::string("derivatives/mjcf-") + robot + "-mujoco/";
      const std::string file = in == Integrator::RK4 ? "rk4" : "euler";
      for (What what : {What::Step, What::Linearize})
        benchmark::RegisterBenchmark((name + (what == What::Step ? "step/" : "linearize/") + file).c_str(),
                                     derivatives, scene.model, settle.q(0), settle.u(0), false, what, in, dt);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_derivatives: %s under MuJoCo's law left out: %s\n", robot, e.what());
    }
  }
  SceneOptions compliant;
  compliant.mjcfLaw = MjcfOptions::ContactLaw::Compliant;
  for (const char* robot : {"reacher", "inverted_double_pendulum", "half_cheetah", "ant"}) {
    try {
      const Scene scene = loadSceneFile(dir + robot + ".xml", compliant);
      registerScene(std::string("mjcf-") + robot, scene.model, scene.q0, scene.u0, false);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_derivatives: %s left out: %s\n", robot, e.what());
    }
  }
  return true;
}();

}  // namespace
}  // namespace lockstep::bench
