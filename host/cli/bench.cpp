// `lockstep bench [SCENE]`: the throughput table of one scene on this machine's backends, in
// world-steps per second, for users comparing hardware (the same measurement as bench/).
#include <algorithm>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.h"
#include "lockstep/backends/device.h"
#include "lockstep/io/scene.h"
#include "lockstep/study/throughput.h"
#include "lockstep/backends/cpu_isa.h"
#include "options.h"
#include "ranks.h"

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
  // Under mpirun every rank measures the same configurations at the same time, each on its own GPU
  // (node-local rank) or its share of the node's cores; rank 0 prints its own table and the sum of
  // the ranks' throughput. A rank that fails stops every rank (ranks.h).
  const Ranks& ranks = Ranks::world();
  Scene scene;
  Backend backend = Backend::Cpu;
  std::vector<std::int64_t> worlds;
  std::vector<Precision> precisions;
  std::string error, isa;
  try {
    scene = o.scene.empty() ? loadBuiltinScene() : loadSceneFile(o.scene);
    backend = resolveBackend(parseDeviceChoice(o.device));
    if (backend == Backend::Cuda && ranks.usesMpi()) selectCudaDevice(ranks.localRank() % std::max(1, cudaDeviceCount()));
    worlds = parseWholeNumberList("--worlds", o.worlds.empty() ? (backend == Backend::Cuda ? "1,256,4096,65536,1048576"
                                                                                           : "1,256,4096")
                                                               : o.worlds,
                                  1, kMaxWorlds);
    for (const std::string& p : splitList(o.precision)) {
      if (p != "float" && p != "double") throw std::invalid_argument("--precision: '" + p + "' is not float or double");
      precisions.push_back(parsePrecision(p));
    }
    if (backend == Backend::Cpu) isa = describeCpuIsa();  // throws on a bad LOCKSTEP_CPU_ISA, before any output
  } catch (const std::exception& e) {
    error = e.what();
  }
  auto stopIfAnyFailed = [&](const std::string& mine) {
    const std::string failed = describeRankErrors(ranks.agree(mine));
    if (!failed.empty() && ranks.root()) throw std::runtime_error(failed);
    return !failed.empty();
  };
  if (stopIfAnyFailed(error)) return 1;
  if (backend == Backend::Cpu && ranks.root()) std::cout << "CPU instruction set: " << isa << "\n";
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const int threadsRequested = o.threads > 0 ? o.threads : (ranks.localSize() > 1 ? std::max(1, cores / ranks.localSize()) : 0);
  std::vector<ThroughputResult> results;
  std::vector<double> totals;  // sum over the ranks of world-steps/s
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
      c.cpuThreads = backend == Backend::Cpu ? cappedCpuThreads(threadsRequested, n) : 0;
      const BatchMemory need = batchMemory(*c.model, p, n, backend, c.cpuThreads);
      const std::string why = whyBatchDoesNotFit(need, memoryAvailable(backend == Backend::Cuda));
      // Skipped on every rank when it does not fit on one.
      const std::string skip = describeRankErrors(ranks.agree(why));
      if (!skip.empty()) {
        const std::string what =
            scene.name + " " + precisionName(p) + " " + std::to_string(n) + " worlds: " + skip + "; at most " +
            std::to_string(worldsThatFit(*c.model, p, backend, c.cpuThreads, memoryAvailable(backend == Backend::Cuda))) +
            " worlds fit";
        // A size the default list holds is skipped; one asked for with --worlds is refused.
        if (!o.worlds.empty()) {
          if (ranks.root()) throw std::runtime_error("--worlds: " + what);
          return 1;
        }
        if (ranks.root()) std::cout << "skipped " << what << "\n";
        continue;
      }
      ranks.sum(0);  // start together: the ranks share the node's memory bandwidth and cores
      ThroughputResult r;
      std::string failed;
      try {
        r = measureThroughput(c);
      } catch (const std::exception& e) {
        failed = e.what();
      }
      if (stopIfAnyFailed(failed)) return 1;
      totals.push_back(ranks.sum(r.worldStepsPerSecond));
      results.push_back(r);
    }
  }
  if (!ranks.root()) return 0;
  printThroughputTable(std::cout, results);
  if (ranks.size() > 1) {
    std::cout << "\n" << ranks.size() << " ranks measured at once, each with the worlds above"
              << (backend == Backend::Cuda ? " on its own GPU" : (" on " + std::to_string(results.empty() ? 0 : results[0].cpuThreads) + " CPU threads"))
              << "; rank 0's table above, the sum of the ranks' world-steps/s:\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      std::cout << "  " << scene.name << " " << precisionName(results[i].config.precision) << " " << results[i].config.worlds
                << " worlds per rank: " << totals[i] << " world-steps/s\n";
  }
  return 0;
}

}  // namespace

Command addBenchCommand(CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Measure world-steps per second of a scene (default: the built-in chain-7-seed) on this machine; under "
             "mpirun, on every rank at once, with the sum of the ranks' throughput.");
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
  app->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember(deviceChoiceNames()));
  addWholeNumber(*app, "--steps-per-call", o->stepsPerCall, 1, kMaxInt, "steps per timed call (default: 10)");
  addWholeNumber(*app, "--repetitions", o->repetitions, 1, kMaxInt,
                 "timed calls; the median is reported (default: 5)");
  addWholeNumber(*app, "--threads", o->threads, 1, kMaxInt, "CPU threads per rank (default and most: all cores, shared by the ranks of a node; one per world)");
  return {app, [o] { return runBench(*o); }};
}

}  // namespace lockstep::cli
