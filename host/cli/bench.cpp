// `lockstep bench [SCENE]`: the throughput table of one scene on this machine's backends, in
// world-steps per second, for users comparing hardware (the same measurement as bench/).
#include <iostream>
#include <sstream>

#include "commands.h"
#include "lockstep/scene.h"
#include "lockstep/throughput.h"
#include "lockstep/cpu_isa.h"
#include "options.h"

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
  const std::vector<std::int64_t> worlds =
      parseWholeNumberList("--worlds", o.worlds.empty() ? (backend == Backend::Cuda ? "1,256,4096,65536,1048576"
                                                                                  : "1,256,4096")
                                                      : o.worlds,
                           1, kMaxWorlds);
  std::vector<Precision> precisions;
  for (const std::string& p : splitList(o.precision)) {
    if (p != "float" && p != "double") throw std::invalid_argument("--precision: '" + p + "' is not float or double");
    precisions.push_back(p == "float" ? Precision::Float : Precision::Double);
  }
  if (backend == Backend::Cpu) {
    const std::string isa = describeCpuIsa();  // throws on a bad LOCKSTEP_CPU_ISA, before any output
    std::cout << "CPU instruction set: " << isa << "\n";
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
      c.cpuThreads = backend == Backend::Cpu ? setCappedCpuThreads(o.threads, n) : 0;
      const BatchMemory need = batchMemory(*c.model, p, n, backend, c.cpuThreads);
      const std::string why = whyBatchDoesNotFit(need, memoryAvailable(backend == Backend::Cuda));
      if (!why.empty()) {
        std::cout << "skipped " << scene.name << " " << precisionName(p) << " " << n << " worlds: " << why << "; at most "
                  << worldsThatFit(*c.model, p, backend, c.cpuThreads, memoryAvailable(backend == Backend::Cuda))
                  << " worlds fit\n";
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
  app->add_option_function<std::string>(
         "--worlds",
         [o](const std::string& list) {
           parseWholeNumberList("--worlds", list, 1, kMaxWorlds);  // refused here, while parsing
           o->worlds = list;
         },
         "comma-separated world counts (default: 1,256,4096 on the CPU; up to 1048576 on a GPU)")
      ->type_name("LIST");
  app->add_option("--precision", o->precision, "float, double or both (comma-separated)")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  addWholeNumber(*app, "--steps-per-call", o->stepsPerCall, 1, kMaxInt, "steps per timed call (default: 10)");
  addWholeNumber(*app, "--repetitions", o->repetitions, 1, kMaxInt,
                 "timed calls; the median is reported (default: 5)");
  addWholeNumber(*app, "--threads", o->threads, 1, kMaxInt, "CPU threads (default and most: all cores, one per world)");
  return {app, [o] { return runBench(*o); }};
}

}  // namespace lockstep::cli
