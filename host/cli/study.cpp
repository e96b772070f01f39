// `lockstep study FILE`: a Monte Carlo parameter study. Samples the study's per-world parameters,
// runs every world in chunks, on one process or split over MPI ranks (`mpirun -np N lockstep study
// FILE`), gathers the per-world outcomes on rank 0 and reduces them there (reduceStudy: the same
// bits whatever the chunk size or the number of ranks), and writes the statistics as CSV and JSON,
// the main outcome's histogram as a PNG and, when asked, the per-world outcomes as .npz.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "commands.h"
#include "lockstep/device.h"
#include "lockstep/plot.h"
#include "lockstep/statistics.h"
#include "lockstep/study_file.h"
#include "options.h"
#include "ranks.h"
#include "recording.h"

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

const char* distributionName(Distribution d) {
  return d == Distribution::Uniform ? "uniform" : d == Distribution::Normal ? "normal" : "lognormal";
}

// The environment variable that makes one rank fail on purpose (tests of the failure path).
constexpr const char* kFailRankVariable = "LOCKSTEP_STUDY_FAIL_RANK";

std::string gibText(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1 << 30));
  return text;
}

// Bytes rank 0 holds per world of a study at its peak (the Spearman correlations): each output's
// gathered value, its copy and its ranks; the status; the parameters redrawn; one parameter's
// ranks and the index sort behind them.
std::int64_t gatheredBytesPerWorld(const StudySpec& spec) {
  return std::int64_t(spec.outputs.size()) * 24 + std::int64_t(spec.vary.size()) * 8 + 4 + 24;
}

// Chunk size: the worlds whose batch takes at most half of this rank's share of the memory (the
// ranks on a node share its host memory; each rank has a GPU of its own), at most 2^22.
std::int64_t chunkFromMemory(const Model& model, Precision precision, Backend backend, int threads, int localRanks) {
  MemoryAvailable have = memoryAvailable(backend == Backend::Cuda);
  have.hostBytes /= std::max(1, localRanks);
  const std::int64_t fit = worldsThatFit(model, precision, backend, threads, have, 0.5);
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
  void newRound() { lastTenth_ = -1; }
  void finish() {
    if (shown_ && terminal_) std::fprintf(stderr, "\r%78s\r", "");
  }

 private:
  bool terminal_, shown_;
  int lastTenth_ = -1;
  double lastPrint_ = -1e9;
};

// ---- writing the results ------------------------------------------------------------------------

void writeCsv(const std::string& path, const StudySpec& spec, const StudyResult& r) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << "output,count,mean,stddev,min,max,standard_error,ci95_half_width";
  for (double q : spec.quantiles) out << ",q" << q;  // q0.05, q0.5, ...
  out << "\n";
  out.precision(17);
  for (const OutputStats& s : r.outputs) {
    out << s.name << "," << s.count << "," << s.mean << "," << s.stddev << "," << s.min << "," << s.max << ","
        << s.standardError << "," << s.ciHalfWidth;
    for (double q : s.quantiles) out << "," << q;
    out << "\n";
  }
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

// A number for JSON, null when it is not finite (NaN: undefined, e.g. a constant outcome's rho).
nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

// Everything in it depends only on the study, not on the machine, the chunk size, the number of
// ranks or the wall time (printed instead), so that the same study writes the same bytes.
void writeJson(const std::string& path, const StudyFile& f, const Backend backend, const StudyResult& r,
               bool sketched) {
  const StudySpec& spec = f.spec;
  nlohmann::json j;
  j["scene"] = f.scene.name;
  j["study"] = f.source;
  j["worlds"] = r.worlds;
  j["steps"] = spec.steps;
  j["dt"] = spec.dt;
  j["integrator"] = spec.integrator == Integrator::RK4 ? "rk4" : "euler";
  j["precision"] = f.precision;
  j["device"] = backendName(backend);
  j["seed"] = spec.seed;
  j["flagged_worlds"] = r.flaggedWorlds;
  for (const Variation& v : spec.vary)
    j["vary"].push_back({{"parameter", v.parameter}, {"distribution", distributionName(v.distribution)}, {"a", v.a},
                         {"b", v.b}});
  j["quantiles"] = spec.quantiles;
  // Exact from the gathered outcomes, or the mergeable sketch's estimate (--reduce ranks).
  j["quantile_method"] = sketched ? "sketch, relative error " + std::to_string(QuantileSketch::kDefaultAlpha) : "exact";
  for (const OutputStats& s : r.outputs)
    j["outputs"].push_back({{"name", s.name}, {"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev},
                            {"min", s.min}, {"max", s.max}, {"standard_error", s.standardError},
                            {"ci95", {number(s.mean - s.ciHalfWidth), number(s.mean + s.ciHalfWidth)}},
                            {"ci95_half_width", number(s.ciHalfWidth)}, {"quantiles", s.quantiles},
                            {"histogram", s.histogram}});
  if (!spec.until.output.empty()) {
    const OutputStats& s = *std::find_if(r.outputs.begin(), r.outputs.end(),
                                         [&](const OutputStats& o) { return o.name == spec.until.output; });
    j["until"] = {{"output", spec.until.output},
                  {"ci_half_width", spec.until.ciHalfWidth},
                  {"max_worlds", spec.until.maxWorlds},
                  {"every", spec.until.every > 0 ? spec.until.every : spec.worlds},
                  {"worlds_run", r.worlds},
                  {"reached", s.ciHalfWidth <= spec.until.ciHalfWidth}};
  }
  for (std::size_t i = 0; i < r.spearman.size(); ++i)
    for (std::size_t o = 0; o < r.spearman[i].size(); ++o)
      j["spearman"].push_back(
          {{"parameter", spec.vary[i].parameter}, {"output", spec.outputs[o]}, {"rho", number(r.spearman[i][o])}});
  if (spec.sensitivity == Sensitivity::Sobol) {
    j["sensitivity"] = {{"method", "sobol"},
                        {"base_rows", spec.worlds},
                        {"design_worlds", r.worlds},
                        {"bootstrap_resamples", spec.bootstrapResamples}};
    for (std::size_t o = 0; o < r.sobol.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        const SobolIndices& s = r.sobol[o];
        j["sobol"].push_back({{"output", spec.outputs[o]},
                              {"parameter", spec.vary[i].parameter},
                              {"rows", s.rows},
                              {"first", number(s.first[i])},
                              {"first_ci95", {number(s.firstLow[i]), number(s.firstHigh[i])}},
                              {"total", number(s.total[i])},
                              {"total_ci95", {number(s.totalLow[i]), number(s.totalHigh[i])}}});
      }
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << j.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

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

// Writes every file under a temporary name first, then renames them all: a failure leaves none.
void writeAll(const std::vector<std::pair<std::string, std::function<void(const std::string&)>>>& files) {
  std::vector<std::string> written;
  try {
    for (const auto& [path, write] : files) {
      const std::string partial = path + ".partial";
      written.push_back(partial);
      write(partial);
    }
  } catch (...) {
    for (const std::string& p : written) std::filesystem::remove(p);
    throw;
  }
  for (const auto& [path, write] : files) std::filesystem::rename(path + ".partial", path);
}

// ---- the run ------------------------------------------------------------------------------------

// Stops every rank when one failed: rank 0 throws the description, the others return false.
bool allSucceeded(const Ranks& ranks, const std::string& myError, const std::string& suffix = "") {
  const std::string failed = describeRankErrors(ranks.agree(myError));
  if (failed.empty()) return true;
  if (ranks.root()) throw std::runtime_error(failed + suffix);
  return false;
}

// Rank 0's view of a study reduced where its worlds ran (--reduce ranks): per output the blocks'
// moments and the merged quantile sketch.
struct DistributedReduction {
  std::vector<MomentsAssembly> moments;
  std::vector<QuantileSketch> sketches;
};

// Sends this rank's summary of its piece to rank 0, which adds every rank's in rank order.
void reduceRound(const Ranks& ranks, const StudySpec& spec, const StudyOutcomes& mine, DistributedReduction& d) {
  std::vector<double> encoded;
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    OutputShare share;
    share.add(mine.first, mine.values[o].data(), mine.status.data(), mine.size());
    share.encode(encoded);
  }
  const std::vector<double> all = ranks.gather(encoded);
  if (!ranks.root()) return;
  std::size_t at = 0;
  for (int r = 0; r < ranks.size(); ++r)
    for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
      const OutputShare share = OutputShare::decode(all, at);
      d.moments[o].add(share);
      d.sketches[o].merge(share.sketch);
    }
}

// The statistics of a study reduced on the ranks: moments from the blocks, histograms counted on
// every rank over its own outcomes once the extremes are known, quantiles from the sketch.
StudyResult finishDistributed(const Ranks& ranks, const StudySpec& spec, std::int64_t worlds,
                              const std::vector<StudyOutcomes>& pieces, const DistributedReduction& d) {
  const std::size_t nOut = spec.outputs.size();
  std::vector<Moments> m(nOut);
  std::vector<double> extremes(2 * nOut);
  if (ranks.root())
    for (std::size_t o = 0; o < nOut; ++o) {
      m[o] = d.moments[o].total(worlds);
      extremes[2 * o] = m[o].min;
      extremes[2 * o + 1] = m[o].max;
    }
  extremes = ranks.broadcast(extremes);
  const int bins = spec.histogramBins;
  std::vector<double> counts(nOut * bins + 1, 0.0);  // histograms, then the flagged worlds
  for (const StudyOutcomes& p : pieces) {
    for (std::int64_t w = 0; w < p.size(); ++w) {
      if (p.status[w] != 0) {
        counts.back() += 1;
        continue;
      }
      for (std::size_t o = 0; o < nOut; ++o) {
        const double lo = extremes[2 * o], range = extremes[2 * o + 1] - lo;
        counts[o * bins + histogramBin(p.values[o][w], lo, range, bins)] += 1;
      }
    }
  }
  counts = ranks.sum(counts);
  StudyResult r;
  r.worlds = worlds;
  r.flaggedWorlds = static_cast<std::int64_t>(counts.back());
  if (!ranks.root()) return r;
  for (std::size_t o = 0; o < nOut; ++o) {
    OutputStats s;
    s.name = spec.outputs[o];
    s.count = m[o].count;
    s.histogram.assign(bins, 0);
    if (s.count > 0) {
      s.mean = m[o].mean;
      s.stddev = m[o].stddev();
      s.min = m[o].min;
      s.max = m[o].max;
      s.standardError = m[o].standardError();
      s.ciHalfWidth = m[o].halfWidth95();
      s.quantiles = d.sketches[o].quantiles(spec.quantiles);
      for (int b = 0; b < bins; ++b) s.histogram[b] = static_cast<std::int64_t>(counts[o * bins + b]);
    }
    r.outputs.push_back(s);
  }
  return r;
}

// Runs the rounds of the study (one round unless "until"), each split over the ranks. Gathering
// (distributed false): the outcomes go to rank 0 (`all`). Otherwise each rank keeps its own and
// sends rank 0 its summary; `result` receives the statistics on rank 0. Returns false on the ranks
// other than 0 when a rank failed (rank 0 throws).
template <class T>
bool runRounds(const StudyFile& f, Backend backend, const Ranks& ranks, bool distributed, StudyOutcomes& all,
               StudyResult& result) {
  const StudySpec& spec = f.spec;
  const auto start = std::chrono::steady_clock::now();
  JobProgress progress(ranks.root(), ranks.size() > 1);
  const char* failRank = std::getenv(kFailRankVariable);
  DistributedReduction reduction;
  reduction.moments.resize(spec.outputs.size());
  reduction.sketches.resize(spec.outputs.size());
  std::vector<StudyOutcomes> pieces;  // this rank's, kept when distributed
  std::int64_t done = 0;
  for (std::int64_t n = studyWorldCount(spec, spec.worlds); n > 0;) {
    // This rank's share of the round: equal contiguous ranges of world indices.
    const std::int64_t r = ranks.rank(), N = ranks.size();
    const std::int64_t lo = done + n * r / N, hi = done + n * (r + 1) / N;
    StudyOutcomes mine;
    std::string error;
    try {
      if (failRank && std::atoi(failRank) == ranks.rank())
        throw std::runtime_error(std::string("failure injected by ") + kFailRankVariable + "=" + failRank);
      const double before = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Rank 0's fraction of its share stands for the round's: the shares are equal.
      auto onProgress = [&](double fraction, double elapsed) {
        progress.update((double(done) + fraction * double(n)) / double(done + n), done + n, before + elapsed);
      };
      mine = runStudyWorlds<T>(f.scene.model, spec, backend, lo, hi - lo, onProgress,
                               [&](Batch<T>& b, std::int64_t first) { applySceneFrom(f.scene, b, first); });
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!allSucceeded(ranks, error, "; no output was written")) return false;
    std::int64_t next = 0;
    if (distributed) {
      reduceRound(ranks, spec, mine, reduction);
      pieces.push_back(std::move(mine));
      if (ranks.root() && !spec.until.output.empty()) {
        const std::size_t o = std::find(spec.outputs.begin(), spec.outputs.end(), spec.until.output) - spec.outputs.begin();
        next = nextRoundWorlds(spec, done + n, reduction.moments[o].total(done + n));
      }
    } else {
      StudyOutcomes round;
      round.first = done;
      for (const std::vector<double>& v : mine.values) round.values.push_back(ranks.gather(v));
      round.status = ranks.gather(mine.status);
      if (ranks.root()) {
        all.append(round);
        next = nextRoundWorlds(spec, all);
      }
    }
    done += n;
    progress.newRound();
    n = ranks.broadcast(next);
  }
  progress.finish();
  if (distributed) result = finishDistributed(ranks, spec, done, pieces, reduction);
  return true;
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
    backend = resolveBackend(o.device == "cpu" ? DeviceChoice::Cpu
                             : o.device == "cuda" ? DeviceChoice::Cuda
                                                  : DeviceChoice::Auto);
    // One GPU per rank on a node (node-local rank), or a share of the node's cores.
    if (backend == Backend::Cuda && ranks.usesMpi()) selectCudaDevice(ranks.localRank() % std::max(1, cudaDeviceCount()));
    const std::int64_t planned =
        studyWorldCount(f.spec, f.spec.until.output.empty() ? f.spec.worlds : f.spec.until.maxWorlds);
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    const int share = std::max(1, cores / ranks.localSize());
    threads = cappedCpuThreads(o.threads > 0 ? o.threads : (ranks.localSize() > 1 ? share : 0),
                                  std::max<std::int64_t>(1, planned / ranks.size()));
    const Precision precision = f.precision == "float" ? Precision::Float : Precision::Double;
    chunk = o.chunk > 0 ? o.chunk : chunkFromMemory(*f.scene.model, precision, backend, threads, ranks.localSize());
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

  StudyOutcomes all;
  StudyResult r;
  const bool distributed = o.reduce == "ranks";
  const bool ran = f.precision == "float" ? runRounds<float>(f, backend, ranks, distributed, all, r)
                                          : runRounds<double>(f, backend, ranks, distributed, all, r);
  if (!ran || !ranks.root()) return ran ? 0 : 1;

  // Rank 0: the statistics and every file.
  if (!distributed) r = reduceStudy(spec, all);
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
      for (std::size_t o = 0; o < r.spearman[i].size(); ++o)
        std::printf("  %-34s %-28s %8.4f\n", spec.vary[i].parameter.c_str(), spec.outputs[o].c_str(), r.spearman[i][o]);
  }
  if (!r.sobol.empty()) {
    std::printf("\nSobol indices (95%% bootstrap intervals)\n");
    for (std::size_t o = 0; o < r.sobol.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        const SobolIndices& s = r.sobol[o];
        std::printf("  %-28s %-34s first %7.4f [%7.4f, %7.4f]  total %7.4f [%7.4f, %7.4f]\n", spec.outputs[o].c_str(),
                    spec.vary[i].parameter.c_str(), s.first[i], s.firstLow[i], s.firstHigh[i], s.total[i],
                    s.totalLow[i], s.totalHigh[i]);
      }
  }

  std::vector<std::pair<std::string, std::function<void(const std::string&)>>> files = {
      {o.out + ".csv", [&](const std::string& p) { writeCsv(p, spec, r); }},
      {o.out + ".json", [&](const std::string& p) { writeJson(p, f, backend, r, distributed); }},
      {o.out + ".png", [&](const std::string& p) {
         writeHistogramPng(p, r.outputs.front(),
                           f.scene.name + ": " + std::to_string(r.worlds) + " worlds after " +
                               std::to_string(spec.steps) + " steps");
       }}};
  // Beside the histogram, the bar chart of the sensitivities: the first output's Sobol indices, or
  // Spearman's rho of every parameter against every output.
  std::vector<std::string> parameters;
  for (const Variation& v : spec.vary) parameters.push_back(v.parameter);
  const bool sensitivityChart = !r.sobol.empty() || (!r.spearman.empty() && spec.outputs.size() <= LinePlot::kMaxCurves);
  if (!r.sobol.empty())
    files.push_back({o.out + "-sensitivity.png", [&](const std::string& p) {
                       writeSobolPng(p, parameters, r.sobol.front(),
                                     f.scene.name + ": Sobol indices of " + spec.outputs.front());
                     }});
  else if (sensitivityChart)
    files.push_back({o.out + "-sensitivity.png", [&](const std::string& p) {
                       writeSpearmanPng(p, parameters, spec.outputs, r.spearman,
                                        f.scene.name + ": Spearman rank correlation, " + std::to_string(r.worlds) +
                                            " worlds");
                     }});
  if (o.outcomes) files.push_back({o.out + ".npz", [&](const std::string& p) { writeOutcomes(p, spec, all); }});
  writeAll(files);
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
parameters and status). Files appear only when the whole study succeeded.

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
      ->check(CLI::IsMember({"float", "double"}));
  app->add_option("--device", o->device, "cpu, cuda or auto; under MPI each rank takes GPU (node-local rank mod GPUs)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
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
