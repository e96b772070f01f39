// `lockstep bench [SCENE]`: the throughput table of one scene on this machine's backends, in
// world-steps per second, for users comparing hardware (the same measurement as bench/).
#include <iostream>
#include <sstream>

#include "commands.h"
#include "lockstep/scene.h"
#include "lockstep/throughput.h"

namespace lockstep::cli {

namespace {

struct BenchOptions {
  std::string scene;
  std::string worlds;  // comma-separated; empty: a default per backend
  std::string precision = "float,double";
  std::string device = "auto";
  int stepsPerCall = 10;
  int repetitions = 5;
  int threads = 0;
};

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

int runBench(const BenchOptions& o) {
  const Scene scene = o.scene.empty() ? loadBuiltinScene() : loadSceneFile(o.scene);
  const Backend backend = resolveBackend(o.device == "cpu" ? DeviceChoice::Cpu
                                         : o.device == "cuda" ? DeviceChoice::Cuda
                                                              : DeviceChoice::Auto);
  std::vector<std::int64_t> worlds;
  for (const std::string& w : splitList(o.worlds.empty() ? (backend == Backend::Cuda ? "1,256,4096,65536,1048576"
                                                                                     : "1,256,4096")
                                                         : o.worlds)) {
    try {
      worlds.push_back(std::stoll(w));
    } catch (const std::exception&) {
      throw std::invalid_argument("--worlds: '" + w + "' is not a number (give a list such as 256,4096)");
    }
    if (worlds.back() < 1) throw std::invalid_argument("--worlds: each count must be at least 1");
  }
  std::vector<Precision> precisions;
  for (const std::string& p : splitList(o.precision)) {
    if (p != "float" && p != "double") throw std::invalid_argument("--precision: '" + p + "' is not float or double");
    precisions.push_back(p == "float" ? Precision::Float : Precision::Double);
  }
  std::vector<ThroughputResult> results;
  for (Precision p : precisions) {
    for (std::int64_t n : worlds) {
      ThroughputConfig c;
      c.scene = scene.name;
      c.model = scene.model;
      c.q0 = scene.q0;
      c.u0 = scene.u0;
      c.assemble = !scene.model->contacts().empty();
      c.backend = backend;
      c.precision = p;
      c.worlds = n;
      c.dt = scene.simulation.dt;
      c.integrator = scene.simulation.integrator;
      c.stepsPerCall = o.stepsPerCall;
      c.repetitions = o.repetitions;
      c.cpuThreads = o.threads;
      const BatchMemory need = batchMemory(*c.model, p, n, backend, o.threads);
      const std::string why = whyBatchDoesNotFit(need, memoryAvailable(backend == Backend::Cuda));
      if (!why.empty()) {
        std::cout << "skipped " << scene.name << " " << precisionName(p) << " " << n << " worlds: " << why << "\n";
        continue;
      }
      results.push_back(measureThroughput(c));
    }
  }
  printThroughputTable(std::cout, results);
  return 0;
}

}  // namespace

Command addBenchCommand(CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Measure world-steps per second of a scene (default: the built-in chain-7-seed) on this machine.");
  app->add_option("SCENE", o->scene, "scene file or URDF (default: the built-in scene)");
  app->add_option("--worlds", o->worlds,
                  "comma-separated world counts (default: 1,256,4096 on the CPU; up to 1048576 on a GPU)");
  app->add_option("--precision", o->precision, "float, double or both (comma-separated)")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app->add_option("--steps-per-call", o->stepsPerCall, "steps per timed call")->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--repetitions", o->repetitions, "timed calls; the median is reported")->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--threads", o->threads, "CPU threads (default: all cores)")->check(CLI::PositiveNumber);
  return {app, [o] { return runBench(*o); }};
}

}  // namespace lockstep::cli
