// `lockstep study FILE`: a Monte Carlo parameter study. Samples the study's per-world parameters,
// runs every world, reduces the outputs across worlds (on the device when running on a GPU), and
// writes the statistics as CSV and JSON and the main outcome's histogram as a PNG.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "lockstep/plot.h"
#include "options.h"
#include "lockstep/study_file.h"
#include "progress.h"

namespace lockstep::cli {

namespace {

struct StudyOptions {
  std::string file;
  std::int64_t worlds = 0;
  int steps = -1;
  std::int64_t seed = -1;
  std::string precision;
  std::string device = "auto";
  std::string out = "study";
  int threads = 0;
  bool repairInertia = false;
};

const char* distributionName(Distribution d) {
  return d == Distribution::Uniform ? "uniform" : d == Distribution::Normal ? "normal" : "lognormal";
}

void writeCsv(const std::string& path, const StudySpec& spec, const StudyResult& r) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << "output,count,mean,stddev,min,max";
  for (double q : spec.quantiles) out << ",q" << q;  // q0.05, q0.5, ...
  out << "\n";
  out.precision(17);
  for (const OutputStats& s : r.outputs) {
    out << s.name << "," << s.count << "," << s.mean << "," << s.stddev << "," << s.min << "," << s.max;
    for (double q : s.quantiles) out << "," << q;
    out << "\n";
  }
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

void writeJson(const std::string& path, const StudyFile& f, const Backend backend, const StudyResult& r) {
  nlohmann::json j;
  j["scene"] = f.scene.name;
  j["study"] = f.source;
  j["worlds"] = f.spec.worlds;
  j["steps"] = f.spec.steps;
  j["dt"] = f.spec.dt;
  j["integrator"] = f.spec.integrator == Integrator::RK4 ? "rk4" : "euler";
  j["precision"] = f.precision;
  j["device"] = backendName(backend);
  j["seed"] = f.spec.seed;
  j["flagged_worlds"] = r.flaggedWorlds;
  j["wall_seconds"] = r.wallSeconds;
  for (const Variation& v : f.spec.vary)
    j["vary"].push_back({{"parameter", v.parameter}, {"distribution", distributionName(v.distribution)}, {"a", v.a},
                         {"b", v.b}});
  j["quantiles"] = f.spec.quantiles;
  for (const OutputStats& s : r.outputs)
    j["outputs"].push_back({{"name", s.name}, {"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev},
                            {"min", s.min}, {"max", s.max}, {"quantiles", s.quantiles},
                            {"histogram", s.histogram}});
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << j.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

int runStudyCommand(const StudyOptions& o) {
  SceneOptions sceneOptions;
  sceneOptions.repairInertia = o.repairInertia;
  StudyFile f = loadStudyFile(o.file, sceneOptions);
  if (o.worlds > 0) f.spec.worlds = o.worlds;
  if (o.steps >= 0) f.spec.steps = o.steps;
  if (o.seed >= 0) f.spec.seed = static_cast<std::uint64_t>(o.seed);
  if (!o.precision.empty()) f.precision = o.precision;
  const Backend backend = resolveBackend(o.device == "cpu" ? DeviceChoice::Cpu
                                         : o.device == "cuda" ? DeviceChoice::Cuda
                                                              : DeviceChoice::Auto);
  const int threads = setCappedCpuThreads(o.threads, f.spec.worlds);
  // Refuse what cannot finish before running: outputs that cannot be written, too many worlds.
  for (const char* extension : {".csv", ".json", ".png"}) checkWritable("--out", o.out + extension);
  checkMemory(*f.scene.model, f.precision == "float" ? Precision::Float : Precision::Double, f.spec.worlds, backend,
              threads);
  for (const WorldOverride& w : f.scene.perWorld)
    for (std::int64_t x : w.worlds)
      if (x >= f.spec.worlds)
        throw std::invalid_argument(f.scene.source + ": " + w.path + ": world " + std::to_string(x) +
                                    " is outside the study's " + std::to_string(f.spec.worlds) +
                                    " worlds (run more worlds with --worlds)");

  std::printf("study         %s (scene %s)\n", o.file.c_str(), f.scene.name.c_str());
  std::printf("worlds        %lld, %d steps x dt %g s, %s, %s, on the %s\n", static_cast<long long>(f.spec.worlds),
              f.spec.steps, f.spec.dt, f.spec.integrator == Integrator::RK4 ? "rk4" : "euler", f.precision.c_str(),
              backend == Backend::Cuda ? "GPU" : "CPU");
  for (const Variation& v : f.spec.vary)
    std::printf("vary          %s ~ %s(%g, %g)\n", v.parameter.c_str(), distributionName(v.distribution), v.a, v.b);
  std::fflush(stdout);

  Progress progress(f.spec.steps);
  auto onProgress = [&](double fraction, double elapsed) {
    progress.update(static_cast<int>(std::lround(fraction * f.spec.steps)), elapsed);
  };
  const Scene& scene = f.scene;
  StudyResult r;
  if (f.precision == "float") {
    r = runStudy<float>(scene.model, f.spec, backend, onProgress, [&](Batch<float>& b) { applyScene(scene, b); });
  } else {
    r = runStudy<double>(scene.model, f.spec, backend, onProgress, [&](Batch<double>& b) { applyScene(scene, b); });
  }
  progress.finish();

  std::printf("wall time     %.3f s\n", r.wallSeconds);
  std::printf("flagged       %lld worlds (left out of the statistics)\n", static_cast<long long>(r.flaggedWorlds));
  std::printf("\n%-28s %14s %14s %14s %14s\n", "output", "mean", "stddev", "min", "max");
  for (const OutputStats& s : r.outputs)
    std::printf("%-28s %14.6g %14.6g %14.6g %14.6g\n", s.name.c_str(), s.mean, s.stddev, s.min, s.max);
  writeCsv(o.out + ".csv", f.spec, r);
  writeJson(o.out + ".json", f, backend, r);
  writeHistogramPng(o.out + ".png", r.outputs.front(),
                    scene.name + ": " + std::to_string(f.spec.worlds) + " worlds after " +
                        std::to_string(f.spec.steps) + " steps");
  std::printf("\nwrote         %s.csv, %s.json, %s.png (histogram of %s)\n", o.out.c_str(), o.out.c_str(),
              o.out.c_str(), r.outputs.front().name.c_str());
  return 0;
}

}  // namespace

Command addStudyCommand(CLI::App& parent) {
  auto o = std::make_shared<StudyOptions>();
  CLI::App* app = parent.add_subcommand(
      "study", "Run a Monte Carlo parameter study: per-world parameters drawn from distributions, statistics of the "
               "outcomes across worlds (docs/study-format.md).");
  app->add_option("FILE", o->file, "study file, or a scene file with a \"study\" object")->required();
  addWholeNumber(*app, "--worlds", o->worlds, 1, kMaxWorlds, "worlds (default: the study's)");
  addWholeNumber(*app, "--steps", o->steps, 0, kMaxInt, "steps (default: the study's)");
  addWholeNumber(*app, "--seed", o->seed, 0, std::numeric_limits<std::int64_t>::max(),
                 "seed of the parameter draws (default: the study's)");
  app->add_option("--precision", o->precision, "float or double (default: the study's)")
      ->check(CLI::IsMember({"float", "double"}));
  app->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app->add_option("--out", o->out, "prefix of the output files: PREFIX.csv, PREFIX.json, PREFIX.png")
      ->capture_default_str();
  addWholeNumber(*app, "--threads", o->threads, 1, kMaxInt, "CPU threads (default and most: all cores, one per world)");
  app->add_flag("--repair-inertia", o->repairInertia, "repair invalid URDF inertias (a warning per link)");
  return {app, [o] { return runStudyCommand(*o); }};
}

}  // namespace lockstep::cli
