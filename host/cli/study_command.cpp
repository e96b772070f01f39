// `lockstep study FILE`: a Monte Carlo parameter study. Reads the study and its options, runs it
// on one process or split over MPI ranks (`mpirun -np N lockstep study FILE`; runStudyRounds,
// study.h, the same bits whatever the chunk size or the number of ranks), prints the statistics and
// writes them as CSV and JSON (study_file.h), the main outcome's histogram and the sensitivities as
// PNG and, when asked, the per-world outcomes as .npz.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "lockstep/backends/device.h"
#include "lockstep/report/png_plots.h"
#include "lockstep/study/study.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/study_file.h"
#include "options.h"
#include "ranks.h"
#include "npz.h"
#include "../io/text_file.h"

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
  std::int64_t chunk = 0;
  bool outcomes = false;
  std::string reduce = "gather";
  bool repairInertia = false;
};

// The environment variable that makes one rank fail on purpose (tests of the failure path).
constexpr const char* kFailRankVariable = "LOCKSTEP_STUDY_FAIL_RANK";

// Bytes rank 0 holds per world of a study at its peak (the Spearman correlations): each output's
// gathered value, its copy and its ranks; the status; the parameters redrawn; one parameter's
// ranks and the index sort behind them.
std::int64_t gatheredBytesPerWorld(const StudySpec& spec) {
  const std::int64_t gradients =
      spec.sensitivity == Sensitivity::Derivative ? std::int64_t(spec.outputs.size() * spec.vary.size()) * 8 : 0;
  return std::int64_t(spec.outputs.size()) * 24 + std::int64_t(spec.vary.size()) * 8 + 4 + 24 + gradients;
}

// Chunk size: the worlds whose batch, with what the study adds per world (a derivative study's
// Jacobians and sensitivities: studyExtraBytesPerWorld), takes at most half of this rank's share of
// the memory (the ranks on a node share its host memory; each rank has a GPU of its own), at most 2^22.
std::int64_t chunkFromMemory(const Model& model, const StudySpec& spec, Precision precision, Backend backend, int threads,
                             int localRanks) {
  MemoryAvailable have = memoryAvailable(backend == Backend::Cuda);
  have.hostBytes /= std::max(1, localRanks);
  const std::int64_t fit = studyWorldsThatFit(model, spec, precision, backend, threads, have, 0.5);
  if (fit < 1)
    throw std::runtime_error("not even one world fits in half of this rank's memory (" + gibText(double(have.hostBytes)) +
                             " of host memory)");
  return std::min<std::int64_t>(fit, std::int64_t(1) << 22);
}

// ---- progress of the whole job: rank 0's share stands for every rank's (equal shares) ----------

class JobProgress {
 public:
  // Shown on a terminal, or as log lines when `log` (an MPI job, whose stderr is a pipe).
  JobProgress(bool shown, bool log) : terminal_(isatty(STDERR_FILENO) == 1), shown_(shown && (terminal_ || log)) {}
  // fraction of the current plan of `planned` worlds done.
  void update(double fraction, std::int64_t planned, double elapsed) {
    if (!shown_) return;
    if (planned != planned_) lastTenth_ = -1;  // a new round
    planned_ = planned;
    const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    if (terminal_) {
      std::fprintf(stderr, "\r  %lld worlds: %3.0f%%, %.1f s elapsed, ETA %.1f s   ", static_cast<long long>(planned),
                   100 * fraction, elapsed, left);
    } else {
      // A log (mpirun forwards stderr through a pipe): a line at every tenth of the plan, at
      // most one every 2 seconds, and the last.
      const int tenth = static_cast<int>(fraction * 10);
      if (tenth <= lastTenth_ || (elapsed < lastPrint_ + 2 && fraction < 1)) return;
      lastTenth_ = tenth;
      lastPrint_ = elapsed;
      std::fprintf(stderr, "progress      %lld worlds: %3.0f%%, %.1f s elapsed, ETA %.1f s\n",
                   static_cast<long long>(planned), 100 * fraction, elapsed, left);
    }
    std::fflush(stderr);
  }
  void finish() {
    if (shown_ && terminal_) std::fprintf(stderr, "\r%78s\r", "");
  }

 private:
  bool terminal_, shown_;
  int lastTenth_ = -1;
  std::int64_t planned_ = 0;
  double lastPrint_ = -1e9;
};

// ---- writing the results ------------------------------------------------------------------------

// The per-world outcomes: "outputs" [worlds, outputs] with "output_names", "parameters" [worlds,
// variations] (the drawn values) with "parameter_names", "status" [worlds].
void writeOutcomes(const std::string& path, const StudySpec& spec, const StudyOutcomes& all) {
  const std::int64_t n = all.size(), nOut = std::int64_t(spec.outputs.size()), nVary = std::int64_t(spec.vary.size());
  auto member = [](const std::string& name, std::vector<std::int64_t> shape) {
    NpzMember m;
    m.name = name;
    m.shape = std::move(shape);
    return m;
  };
  NpzMember outputs = member("outputs", {n, nOut});
  outputs.doubles.resize(std::size_t(n * nOut));
  for (std::int64_t w = 0; w < n; ++w)
    for (std::int64_t o = 0; o < nOut; ++o) outputs.doubles[std::size_t(w * nOut + o)] = all.values[o][w];
  NpzMember parameters = member("parameters", {n, nVary});
  parameters.doubles.resize(std::size_t(n * nVary));
  for (std::int64_t w = 0; w < n; ++w)
    for (std::int64_t i = 0; i < nVary; ++i)
      parameters.doubles[std::size_t(w * nVary + i)] = studyDraw(spec, static_cast<int>(i), w);
  NpzMember status = member("status", {n});
  status.integer = true;
  status.ints = all.status;
  NpzMember outputNames = member("output_names", {});
  outputNames.strings = spec.outputs;
  NpzMember parameterNames = member("parameter_names", {});
  for (const Variation& v : spec.vary) parameterNames.strings.push_back(v.parameter);
  std::vector<NpzMember> members = {outputs, outputNames, parameters, status};
  if (nVary > 0) members.push_back(parameterNames);
  writeNpz(path, members);
}

// The plots of an output's statistics and of its Sobol indices.
HistogramPlot histogramPlot(const OutputStats& s, const std::string& title) {
  return {title, s.name, s.count, s.mean, s.stddev, s.min, s.max, s.quantiles, s.histogram};
}
SobolPlot sobolPlot(const SobolIndices& s, const std::vector<std::string>& names, const std::string& title) {
  return {title, names, s.first, s.total, s.firstLow, s.firstHigh, s.totalLow, s.totalHigh, s.rows, s.resamples};
}

// Writes every file under a temporary name first, then renames them all: a failure leaves no
// partial file (and the original error is the one reported).
void writeAll(const std::vector<std::pair<std::string, std::function<void(const std::string&)>>>& files) {
  std::vector<std::string> partials;
  try {
    for (const auto& [path, write] : files) {
      partials.push_back(path + ".partial");
      write(partials.back());
    }
    for (std::size_t i = 0; i < files.size(); ++i) std::filesystem::rename(partials[i], files[i].first);
  } catch (...) {
    std::error_code ignored;
    for (const std::string& p : partials) std::filesystem::remove(p, ignored);
    throw;
  }
}

// ---- the run ------------------------------------------------------------------------------------

// Stops every rank when one failed: rank 0 throws the description, the others return false.
bool allSucceeded(const Ranks& ranks, const std::string& myError) {
  const std::string failed = describeRankErrors(ranks.agree(myError));
  if (failed.empty()) return true;
  if (ranks.root()) throw std::runtime_error(failed);
  return false;
}

// The status of the first flagged world (gathered outcomes; 0 when there are none).
std::int32_t firstStatus(const StudyOutcomes& all) {
  for (std::int32_t s : all.status)
    if (s != 0) return s;
  return 0;
}

int runStudyCommand(const StudyOptions& o) {
  const Ranks& ranks = Ranks::world();
  const auto start = std::chrono::steady_clock::now();
  // Every rank reads the study and prepares its device; the ranks then agree that all succeeded.
  StudyFile f;
  Backend backend = Backend::Cpu;
  int threads = 0;
  std::int64_t chunk = 0;
  std::string error;
  try {
    SceneOptions sceneOptions;
    sceneOptions.repairInertia = o.repairInertia;
    f = loadStudyFile(o.file, sceneOptions);
    if (o.worlds > 0) f.spec.worlds = o.worlds;
    if (o.steps >= 0) f.spec.steps = o.steps;
    if (o.seed >= 0) f.spec.seed = static_cast<std::uint64_t>(o.seed);
    if (!o.precision.empty()) f.precision = o.precision;
    if (f.spec.until.maxWorlds > 0 && f.spec.until.maxWorlds < f.spec.worlds)
      throw std::invalid_argument("--worlds " + std::to_string(f.spec.worlds) + " is more than the study's until.max_worlds (" +
                                  std::to_string(f.spec.until.maxWorlds) + ")");
    backend = resolveBackend(parseDeviceChoice(o.device));
    // One GPU per rank on a node (node-local rank), or a share of the node's cores.
    if (backend == Backend::Cuda && ranks.usesMpi()) selectCudaDevice(ranks.localRank() % std::max(1, cudaDeviceCount()));
    const std::int64_t planned =
        studyWorldCount(f.spec, f.spec.until.output.empty() ? f.spec.worlds : f.spec.until.maxWorlds);
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    const int share = std::max(1, cores / ranks.localSize());
    threads = cappedCpuThreads(o.threads > 0 ? o.threads : (ranks.localSize() > 1 ? share : 0),
                                  std::max<std::int64_t>(1, planned / ranks.size()));
    const Precision precision = parsePrecision(f.precision);
    chunk = o.chunk > 0 ? o.chunk : chunkFromMemory(*f.scene.model, f.spec, precision, backend, threads, ranks.localSize());
    f.spec.chunk = chunk;
    f.spec.cpuThreads = threads;
    for (const WorldOverride& w : f.scene.perWorld)
      for (std::int64_t x : w.worlds)
        if (x >= f.spec.worlds)
          throw std::invalid_argument(f.scene.source + ": " + w.path + ": world " + std::to_string(x) +
                                      " is outside the study's " + std::to_string(f.spec.worlds) +
                                      " worlds (run more worlds with --worlds)");
    if (o.reduce == "ranks" && o.outcomes)
      throw std::invalid_argument("--outcomes needs the outcomes gathered: leave out --reduce ranks");
    if (o.reduce == "ranks" && f.spec.sensitivity == Sensitivity::Sobol)
      throw std::invalid_argument("a Sobol study needs the outcomes gathered: leave out --reduce ranks");
    if (ranks.root()) {
      // Refuse what cannot finish before running: outputs that cannot be written, outcomes that
      // do not fit in rank 0's memory.
      for (const char* extension : {".csv", ".json", ".png"}) {
        checkWritable("--out", o.out + extension);
        std::error_code ec;
        if (std::filesystem::equivalent(o.file, o.out + extension, ec))
          throw std::runtime_error("--out: '" + o.out + extension + "' is the study file itself: choose another prefix");
      }
      if (o.outcomes) checkWritable("--out", o.out + ".npz");
      if (!f.spec.vary.empty()) checkWritable("--out", o.out + "-sensitivity.png");
      // The .npz writer holds the outputs and parameters twice more (arrays, then archive bytes).
      const double npz = o.outcomes ? 16.0 * double(f.spec.outputs.size() + f.spec.vary.size()) + 8 : 0;
      const double perWorld = double(gatheredBytesPerWorld(f.spec)) + npz;
      const double available = 0.9 * double(memoryAvailable(false).hostBytes);
      if (o.reduce == "gather" && double(planned) * perWorld > available)
        throw std::runtime_error(std::to_string(planned) + " worlds in " + f.precision + " do not fit: their outcomes need " +
                                 gibText(double(planned) * perWorld) + " of host memory on rank 0, " +
                                 gibText(available / 0.9) + " available; at most " +
                                 std::to_string(static_cast<std::int64_t>(available / perWorld)) +
                                 " worlds fit (use --worlds); or reduce on the ranks (--reduce ranks)");
    }
    if (o.reduce == "ranks") {
      // Each rank keeps its share's outcomes (8 bytes per output and 4 per world) for the histograms.
      const double share = double(planned) / ranks.size() + 1;
      const double perWorld = 8.0 * double(f.spec.outputs.size()) + 4;
      const double available = 0.5 * double(memoryAvailable(false).hostBytes) / ranks.localSize();
      if (share * perWorld > available)
        throw std::runtime_error(std::to_string(planned) + " worlds in " + f.precision + " do not fit: each rank's " +
                                 std::to_string(static_cast<std::int64_t>(share)) + " outcomes need " +
                                 gibText(share * perWorld) + " of host memory, " + gibText(available) +
                                 " available to a rank; at most " +
                                 std::to_string(static_cast<std::int64_t>(available / perWorld) * ranks.size()) +
                                 " worlds fit (use --worlds, or more ranks)");
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!allSucceeded(ranks, error)) return 1;

  const StudySpec& spec = f.spec;
  if (ranks.root()) {
    std::printf("study         %s (scene %s)\n", o.file.c_str(), f.scene.name.c_str());
    std::printf("worlds        %lld, %d steps x dt %g s, %s, %s, on the %s\n", static_cast<long long>(spec.worlds),
                spec.steps, spec.dt, spec.integrator == Integrator::RK4 ? "rk4" : "euler", f.precision.c_str(),
                backend == Backend::Cuda ? "GPU" : "CPU");
    if (spec.sensitivity == Sensitivity::Sobol)
      std::printf("sensitivity   Sobol indices, Saltelli design: %lld base rows x (%zu variations + 2) = %lld worlds\n",
                  static_cast<long long>(spec.worlds), spec.vary.size(),
                  static_cast<long long>(studyWorldCount(spec, spec.worlds)));
    if (!spec.until.output.empty())
      std::printf("until         95%% interval of the mean of %s at most +-%g: %lld worlds, then %lld more a round, at "
                  "most %lld\n",
                  spec.until.output.c_str(), spec.until.ciHalfWidth, static_cast<long long>(spec.worlds),
                  static_cast<long long>(spec.until.every > 0 ? spec.until.every : spec.worlds),
                  static_cast<long long>(spec.until.maxWorlds));
    std::printf("plan          %d rank%s (%s), chunks of at most %lld worlds, %s\n", ranks.size(),
                ranks.size() == 1 ? "" : "s",
                backend == Backend::Cuda ? "one GPU each" : (std::to_string(threads) + " CPU threads each").c_str(),
                static_cast<long long>(chunk),
                o.reduce == "gather" ? "outcomes gathered on rank 0" : "reduced on the ranks (quantiles from the sketch)");
    for (const Variation& v : spec.vary)
      std::printf("vary          %s ~ %s(%g, %g)\n", v.parameter.c_str(), distributionName(v.distribution), v.a, v.b);
    std::fflush(stdout);
  }

  // Every rank runs its share of each round; rank 0 holds the statistics (and the outcomes, gathered).
  const bool distributed = o.reduce == "ranks";
  const StudyReduction reduction = distributed ? StudyReduction::OnRanks : StudyReduction::Gather;
  JobProgress progress(ranks.root(), ranks.size() > 1);
  const char* failRank = std::getenv(kFailRankVariable);
  auto run = [&](auto precision) {
    using T = decltype(precision);
    return runStudyRounds<T>(ranks, f.scene.model, spec, backend, reduction,
                             [&](double fraction, std::int64_t planned, double elapsed) {
                               progress.update(fraction, planned, elapsed);
                             },
                             [&](Batch<T>& b, std::int64_t first) {
                               if (failRank && std::atoi(failRank) == ranks.rank())
                                 throw std::runtime_error(std::string("failure injected by ") + kFailRankVariable +
                                                          "=" + failRank);
                               applySceneFrom(f.scene, b, first);
                             });
  };
  StudyRun done;
  try {
    done = withPrecision(parsePrecision(f.precision), run);
  } catch (const std::exception& e) {
    // Every rank stops; rank 0 says why (and which rank failed).
    if (!ranks.root()) return 1;
    throw std::runtime_error(std::string(e.what()) + "; no output was written");
  }
  progress.finish();
  if (!ranks.root()) return 0;

  // Rank 0: the statistics and every file.
  const StudyResult& r = done.result;
  const bool healthy = r.outputs.front().count > 0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wall time     %.3f s\n", wall);
  std::printf("flagged       %lld worlds (left out of the statistics)\n", static_cast<long long>(r.flaggedWorlds));
  if (!spec.until.output.empty())
    std::printf("until         stopped after %lld worlds (%s)\n", static_cast<long long>(r.worlds),
                std::find_if(r.outputs.begin(), r.outputs.end(), [&](const OutputStats& s) {
                  return s.name == spec.until.output;
                })->ciHalfWidth <= spec.until.ciHalfWidth
                    ? "interval reached"
                    : "max_worlds reached");
  std::printf("\n%-28s %14s %14s %14s %14s %14s\n", "output", "mean", "95% CI +-", "stddev", "min", "max");
  for (const OutputStats& s : r.outputs)
    std::printf("%-28s %14.6g %14.6g %14.6g %14.6g %14.6g\n", s.name.c_str(), s.mean, s.ciHalfWidth, s.stddev, s.min,
                s.max);
  if (!r.spearman.empty()) {
    std::printf("\nSpearman rank correlation, parameter x output\n");
    for (std::size_t i = 0; i < r.spearman.size(); ++i)
      for (std::size_t o = 0; o < r.spearman[i].size(); ++o) {
        if (r.spearmanUndefined[i][o].empty())
          std::printf("  %-34s %-28s %8.4f\n", spec.vary[i].parameter.c_str(), spec.outputs[o].c_str(), r.spearman[i][o]);
        else
          std::printf("  %-34s %-28s %8s  (%s)\n", spec.vary[i].parameter.c_str(), spec.outputs[o].c_str(), "null",
                      r.spearmanUndefined[i][o].c_str());
      }
  }
  if (!r.sobol.empty()) {
    std::printf("\nSobol indices (95%% bootstrap intervals)\n");
    for (std::size_t o = 0; o < r.sobol.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        const SobolIndices& s = r.sobol[o];
        if (!r.sobolUndefined[o][i].empty())
          std::printf("  %-28s %-34s null  (%s)\n", spec.outputs[o].c_str(), spec.vary[i].parameter.c_str(),
                      r.sobolUndefined[o][i].c_str());
        else
          std::printf("  %-28s %-34s first %7.4f [%7.4f, %7.4f]  total %7.4f [%7.4f, %7.4f]\n", spec.outputs[o].c_str(),
                      spec.vary[i].parameter.c_str(), s.first[i], s.firstLow[i], s.firstHigh[i], s.total[i],
                      s.totalLow[i], s.totalHigh[i]);
      }
  }
  if (!r.dgsm.empty()) {
    std::printf("\nDerivative-based sensitivity: nu = mean (d output / d parameter)^2, and its bound on the total Sobol index\n");
    for (std::size_t o = 0; o < r.dgsm.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        const char* out = spec.outputs[o].c_str();
        const char* par = spec.vary[i].parameter.c_str();
        if (std::isnan(r.dgsm[o][i]))
          std::printf("  %-28s %-34s null  (%s)\n", out, par, r.dgsmUndefined[o][i].c_str());
        else if (std::isnan(r.dgsmBound[o][i]))
          std::printf("  %-28s %-34s nu %12.6g  total <= null  (%s)\n", out, par, r.dgsm[o][i],
                      r.dgsmUndefined[o][i].c_str());
        else
          std::printf("  %-28s %-34s nu %12.6g  total <= %7.4f\n", out, par, r.dgsm[o][i], r.dgsmBound[o][i]);
      }
  }

  std::vector<std::pair<std::string, std::function<void(const std::string&)>>> files = {
      {o.out + ".csv", [&](const std::string& p) { io::writeTextFile(p, studyCsv(spec, r)); }},
      {o.out + ".json", [&](const std::string& p) { io::writeTextFile(p, studyJson(f, backend, r, distributed)); }}},
      plots;
  if (healthy)
    plots.push_back({o.out + ".png", [&](const std::string& p) {
                       writeHistogramPng(p, histogramPlot(r.outputs.front(),
                                                          f.scene.name + ": " + std::to_string(r.worlds) +
                                                              " worlds after " + std::to_string(spec.steps) + " steps"));
                     }});
  // Beside the histogram, the bar chart of the sensitivities: the first output's Sobol indices, or
  // Spearman's rho of every parameter against every output.
  std::vector<std::string> parameters;
  for (const Variation& v : spec.vary) parameters.push_back(v.parameter);
  const bool sensitivityChart =
      healthy && (!r.sobol.empty() || (!r.spearman.empty() && spec.outputs.size() <= LinePlot::kMaxCurves));
  if (sensitivityChart && !r.sobol.empty())
    plots.push_back({o.out + "-sensitivity.png", [&](const std::string& p) {
                       writeSobolPng(p, sobolPlot(r.sobol.front(), parameters,
                                                  f.scene.name + ": Sobol indices of " + spec.outputs.front()));
                     }});
  else if (sensitivityChart)
    plots.push_back({o.out + "-sensitivity.png", [&](const std::string& p) {
                       writeSpearmanPng(p, parameters, spec.outputs, r.spearman,
                                        f.scene.name + ": Spearman rank correlation, " + std::to_string(r.worlds) +
                                            " worlds");
                     }});
  if (o.outcomes) files.push_back({o.out + ".npz", [&](const std::string& p) { writeOutcomes(p, spec, done.outcomes); }});
  // The plots after the numbers, and without them where PLplot cannot write PNGs here (a machine
  // with the library but not its drivers): the study's results stand, the exit status is 0.
  std::string noPlots = plots.empty() ? std::string() : pngPlotsUnavailable();
  writeAll(files);
  if (noPlots.empty()) {
    try {
      writeAll(plots);
    } catch (const PlotsUnavailable& e) {
      noPlots = e.what();
    }
  }
  if (!noPlots.empty()) {
    std::printf("\nwrote         %s.csv, %s.json%s; no plots: %s\n", o.out.c_str(), o.out.c_str(),
                o.outcomes ? (", " + o.out + ".npz (per-world outcomes)").c_str() : "", noPlots.c_str());
    std::fprintf(stderr, "lockstep study: the PNG plots were not written: %s\n", noPlots.c_str());
    return 0;
  }
  if (!healthy) {
    // Nothing to plot: the counts and, when asked, every world's outcome and status are written.
    std::printf("\nwrote         %s.csv, %s.json (counts only)%s\n", o.out.c_str(), o.out.c_str(),
                o.outcomes ? (", " + o.out + ".npz (per-world outcomes and status)").c_str() : "");
    const std::int32_t first = firstStatus(done.outcomes);  // 0 when reduced on the ranks
    throw std::runtime_error("no healthy world: all " + std::to_string(r.worlds) + " worlds were flagged" +
                             (first ? " (the first: " + describeStatus(first) + ")" : std::string()) +
                             "; no statistics, no plots" +
                             (o.outcomes ? std::string() : " (--outcomes writes every world's status)"));
  }
  std::printf("\nwrote         %s.csv, %s.json, %s.png (histogram of %s)%s%s\n", o.out.c_str(), o.out.c_str(),
              o.out.c_str(), r.outputs.front().name.c_str(),
              sensitivityChart ? (", " + o.out + "-sensitivity.png").c_str() : "",
              o.outcomes ? (", " + o.out + ".npz (per-world outcomes)").c_str() : "");
  return 0;
}

const char* kStudyHelp = R"(
A study file (docs/study-format.md) names a scene, the worlds, the parameters drawn per world
("vary": uniform, normal, lognormal, each clipped to optional min/max) and the outputs. Optional:
  "until": {"output": NAME, "ci_half_width": H, "max_worlds": M, "every": E}
      adds E worlds a round (default: the study's worlds) until the 95% interval of NAME's mean
      is at most +-H, or M worlds ran;
  "sensitivity": "sobol"
      runs the Saltelli design (worlds = base rows; worlds x (variations + 2) run) and reports
      first-order and total Sobol indices with bootstrap 95% intervals (PREFIX-sensitivity.png).
Writes PREFIX.csv and PREFIX.json (count, mean, standard error and 95% interval of the mean,
stddev, min, max, quantiles, histogram; Spearman's rho of every parameter against every output),
PREFIX.png (histogram of the first output) and with --outcomes PREFIX.npz (every world's outputs,
parameters and status). Files appear only when the whole study succeeded; when no world is
healthy, only the counts (PREFIX.csv, PREFIX.json) and PREFIX.npz are written, and the command
fails saying so. An undefined correlation or Sobol index is null, with its reason.

Worlds run in chunks of at most --chunk worlds (default: half of the memory); under
`mpirun -np N lockstep study FILE` (or srun) the worlds are split over N ranks, each on its own
GPU (node-local rank) or its share of the CPU cores, and rank 0 writes every file. Results are
the same bits for any chunk size and any number of ranks. Rank 0 gathers the outcomes (exact
quantiles); with --reduce ranks each rank reduces its own (same moments and histograms, quantiles
from a sketch of relative error 0.005, no correlations), for studies too large to gather. A rank
that fails stops the job with "rank R of N failed: REASON; no output was written".)";

}  // namespace

Command addStudyCommand(CLI::App& parent) {
  auto o = std::make_shared<StudyOptions>();
  CLI::App* app = parent.add_subcommand(
      "study", "Run a Monte Carlo parameter study: per-world parameters drawn from distributions, statistics of the "
               "outcomes across worlds (docs/study-format.md); under mpirun, split over the ranks.");
  app->footer(kStudyHelp);
  app->add_option("FILE", o->file, "study file, or a scene file with a \"study\" object")->required();
  addWholeNumber(*app, "--worlds", o->worlds, 1, kMaxWorlds, "worlds (default: the study's)");
  addWholeNumber(*app, "--steps", o->steps, 0, kMaxInt, "steps (default: the study's)");
  addWholeNumber(*app, "--seed", o->seed, 0, std::numeric_limits<std::int64_t>::max(),
                 "seed of the parameter draws (default: the study's)");
  app->add_option("--precision", o->precision, "float or double (default: the study's)")
      ->check(CLI::IsMember(precisionNames()));
  app->add_option("--device", o->device, "cpu, cuda or auto; under MPI each rank takes GPU (node-local rank mod GPUs)")
      ->check(CLI::IsMember(deviceChoiceNames()));
  app->add_option("--out", o->out, "prefix of the output files: PREFIX.csv, PREFIX.json, PREFIX.png")
      ->capture_default_str();
  addWholeNumber(*app, "--chunk", o->chunk, 1, kMaxWorlds,
                 "worlds per batch (default: what fits in half of the memory, at most 4194304); changes no result");
  app->add_option("--reduce", o->reduce,
                  "gather: every outcome to rank 0, exact quantiles and Spearman's rho; ranks: each rank reduces "
                  "its own worlds (same moments and histograms, quantiles from the sketch, no rho), for studies too "
                  "large to gather")
      ->check(CLI::IsMember({"gather", "ranks"}))
      ->capture_default_str();
  app->add_flag("--outcomes", o->outcomes, "also write every world's outputs, parameters and status to PREFIX.npz");
  addWholeNumber(*app, "--threads", o->threads, 1, kMaxInt,
                 "CPU threads per rank (default: all cores, shared equally by the ranks of a node)");
  app->add_flag("--repair-inertia", o->repairInertia, "repair invalid URDF inertias (a warning per link)");
  return {app, [o] { return runStudyCommand(*o); }};
}

}  // namespace lockstep::cli
