// MuJoCo's own step on Gymnasium's MJCF robots (models/mjcf/), one thread, for the side-by-side
// figures of bench/README.md ("MJCF robots"): mj_step with MuJoCo's own timestep, contacts and
// integrator, as Gymnasium runs it. Reports steps per second and simulated seconds per wall second.
// Lockstep's side of the comparison is `lockstep bench scenes/<robot>.json` on the same machine.
#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <string>
#include <vector>

namespace {

// The model of an MJCF file and its data 200 steps on (past the first contacts), zero controls;
// null (the benchmark skipped with MuJoCo's message) when the file cannot be read.
mjModel* loadAndSettle(benchmark::State& state, const std::string& path, mjData** d) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m) {
    state.SkipWithError(error);
    return nullptr;
  }
  *d = mj_makeData(m);
  for (int i = 0; i < m->nu; ++i) (*d)->ctrl[i] = 0;
  for (int i = 0; i < 200; ++i) mj_step(m, *d);
  return m;
}

void mujocoStep(benchmark::State& state, const std::string& path) {
  mjData* d = nullptr;
  mjModel* m = loadAndSettle(state, path, &d);
  if (!m) return;
  for (auto _ : state) mj_step(m, d);
  state.counters["steps_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["sim_s_per_wall_s"] =
      benchmark::Counter(double(state.iterations()) * m->opt.timestep, benchmark::Counter::kIsRate);
  state.counters["timestep"] = m->opt.timestep;
  mj_deleteData(d);
  mj_deleteModel(m);
}

// MuJoCo's finite-difference Jacobians of one step, mjd_transitionFD (A = d x+ / d x, B = d x+ / d ctrl
// in MuJoCo's tangent space), forward or centred differences with eps 1e-6: the anchor of
// bench_derivatives.cpp's linearize on the same MJCF file.
void mujocoTransitionFD(benchmark::State& state, const std::string& path, bool centered) {
  mjData* d = nullptr;
  mjModel* m = loadAndSettle(state, path, &d);
  if (!m) return;
  const int nx = 2 * m->nv + m->na;
  std::vector<mjtNum> A(std::size_t(nx) * nx), B(std::size_t(nx) * m->nu);
  for (auto _ : state) mjd_transitionFD(m, d, 1e-6, centered ? 1 : 0, A.data(), B.data(), nullptr, nullptr);
  state.counters["nv"] = m->nv;
  state.counters["nu"] = m->nu;
  mj_deleteData(d);
  mj_deleteModel(m);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = std::string(LOCKSTEP_SOURCE_DIR) + "/models/mjcf/";
  for (const char* robot : {"ant", "half_cheetah", "hopper", "walker2d_v5", "humanoid", "inverted_double_pendulum",
                            "reacher"})
    benchmark::RegisterBenchmark((std::string("mujoco/mj_step/") + robot).c_str(), mujocoStep,
                                 dir + robot + ".xml");
  for (const char* robot : {"reacher", "inverted_double_pendulum", "half_cheetah", "ant"})
    for (bool centered : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("mujoco/mjd_transitionFD/") + robot + (centered ? "/centered" : "/forward")).c_str(),
          mujocoTransitionFD, dir + robot + ".xml", centered);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
