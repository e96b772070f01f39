// Lockstep Monte Carlo parameter studies: vary per-world parameters by named distributions, run
// every world, and reduce chosen outputs across worlds (mean, standard deviation, extremes,
// quantiles, histogram, the standard error and 95% interval of the mean, rank correlations, Sobol
// indices; study_statistics.h) on the host, from the outcomes read back chunk by chunk — one
// computation for every backend, chunk size and rank count.
//
// Sampling is counter-based: the value drawn for (seed, variation, world) depends on nothing
// else, so a study gives the same parameters whatever the number of worlds, threads or backend.
//
// A study runs in rounds (one, unless "until"; runStudyRounds, the one loop behind `lockstep
// study`, runStudy and Python's run_study), each round split over the processes of the job
// (communicator.h: one process or MPI ranks). Each process runs its worlds [first, first + count)
// (runStudyWorlds) in chunks of at most StudySpec::chunk worlds, one batch after another (constant
// memory). Every world's draws and result depend only on its
// index, and the statistics (reduceStudy) only on the outcomes in world order (the fixed block
// tree of study_statistics.h), so they are the same bits whatever the chunk size or rank count.
//
// Names come from the field registry (views.h; `lockstep info` prints them for a model, and
// docs/study-format.md gives the grammar prefix[.element][.part]):
//   parameters: every per-world parameter (body.<body>.mass, spring.<name>.stiffness, gravity.z, ...)
//               and the initial state q.<coordinate>, u.<speed>;
//   outputs:    every component of the state, evaluation and observation fields at the end of the
//               run (q.<coordinate>, udot.<speed>, energy.kinetic, body.<body>.x, body.<body>.vx,
//               bushing.<name>.q.3, contact.<name>.error, multiplier.<contact>.z, ...) and energy.total.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/study/communicator.h"
#include "lockstep/study/run_choices.h"
#include "lockstep/study/study_statistics.h"

namespace lockstep {

enum class Distribution { Uniform, Normal, LogNormal };
// Parses "uniform", "normal", "lognormal" / "log-normal"; throws std::invalid_argument otherwise.
Distribution parseDistribution(const std::string& s);

struct Variation {
  std::string parameter;
  Distribution distribution = Distribution::Uniform;
  double a = 0, b = 1;  // uniform: [a, b]; normal: mean a, standard deviation b; log-normal: mean a and
                        // standard deviation b of the logarithm
  double min = -std::numeric_limits<double>::infinity();  // draws are clipped to [min, max]
  double max = std::numeric_limits<double>::infinity();
};

// "until": adds worlds until the 95% confidence interval of one output's mean is narrow enough.
struct StoppingRule {
  std::string output;            // empty: no rule, the study runs StudySpec::worlds worlds
  double ciHalfWidth = 0;        // stop when the 95% half-width of that output's mean is at most this
  std::int64_t maxWorlds = 0;    // and stop at the latest after this many worlds
  std::int64_t every = 0;        // worlds added per round after the first StudySpec::worlds (0: worlds)
};

// Sobol: Saltelli's design and indices. Derivative: every world carries the derivatives of its state
// by the varied values along its trajectory (Batch::linearize, docs/derivatives.md), and the study
// reports the derivative-based global sensitivity measures of its outputs (StudyResult::dgsm).
enum class Sensitivity { None, Sobol, Derivative };

struct StudySpec {
  std::vector<Variation> vary;
  std::uint64_t seed = 1;
  std::int64_t worlds = 1000;
  int steps = 1000;
  double dt = 1e-3;
  Integrator integrator = Integrator::RK4;
  std::vector<std::string> outputs;                       // the first is the main outcome
  std::vector<double> quantiles = {0.05, 0.25, 0.5, 0.75, 0.95};
  int histogramBins = 40;
  std::int64_t chunk = 0;  // worlds per batch (0: a piece in one batch); changes no result
  int cpuThreads = 0;      // CPU backend threads of each batch (CpuOptions::threads; 0: all cores); changes no result
  StoppingRule until;
  // Sobol: the Saltelli design of study_statistics.h with `worlds` base rows, worlds * (vary + 2)
  // worlds in all; the summary statistics are then over the design's A and B worlds.
  Sensitivity sensitivity = Sensitivity::None;
  int bootstrapResamples = 1000;  // of the Sobol indices' confidence intervals
};

// Worlds a study of `baseWorlds` worlds runs (the Saltelli design's extra worlds included).
std::int64_t studyWorldCount(const StudySpec& spec, std::int64_t baseWorlds);
// The value of variation i in world w: its counter-based draw, or the Saltelli design's.
double studyDraw(const StudySpec& spec, int variation, std::int64_t world);

struct OutputStats {
  std::string name;
  std::int64_t count = 0;  // healthy worlds the statistics are over; with none, every number is NaN
  std::string undefined;   // why there are no statistics (no healthy world); empty otherwise
  double mean = 0, stddev = 0, min = 0, max = 0;  // stddev with the n - 1 denominator
  std::vector<double> quantiles;                  // at StudySpec::quantiles, linear interpolation
  std::vector<std::int64_t> histogram;            // histogramBins equal bins over [min, max]
  double standardError = 0;                       // of the mean, stddev / sqrt(count)
  double ciHalfWidth = 0;                         // of the 95% interval of the mean (Student t)
};

struct StudyResult {
  std::vector<OutputStats> outputs;
  std::int64_t flaggedWorlds = 0;  // worlds that failed and were left out of the statistics
  std::int64_t worlds = 0;         // worlds run (a sequential study's final count; a Sobol study's design)
  std::vector<std::vector<double>> spearman;  // [variation][output]; NaN where undefined
  std::vector<std::vector<std::string>> spearmanUndefined;  // [variation][output]: why rho is NaN, or ""
  // [output], for a Sobol study. An index is NaN (with its interval) where it is undefined: a
  // parameter that does not vary, an output that is constant, fewer than 2 healthy base rows.
  std::vector<SobolIndices> sobol;
  std::vector<std::vector<std::string>> sobolUndefined;  // [output][variation]: why S_i, ST_i are NaN, or ""
  // [output][variation], a derivative study: the derivative-based global sensitivity measure
  // nu = mean over the healthy worlds of (d output / d varied value)^2, and Sobol and Kucherenko's
  // bound on the total Sobol index, C nu / Var(output), C the Poincare constant of the variation's
  // distribution ((b - a)^2 / pi^2 for uniform on [a, b], sd^2 for normal). NaN, with the reason,
  // where undefined (an output or a varied value the derivatives do not reach, a log-normal
  // variation's bound: its distribution has no Poincare constant, a constant output).
  std::vector<std::vector<double>> dgsm, dgsmBound;
  std::vector<std::vector<std::string>> dgsmUndefined;
  double wallSeconds = 0;
};

// The per-world outcomes of worlds [first, first + size()) in world order.
struct StudyOutcomes {
  std::int64_t first = 0;
  std::vector<std::vector<double>> values;  // [output][world - first]
  std::vector<std::int32_t> status;         // [world - first]; 0: healthy
  // A derivative study's d output / d varied value of every world at the end of its run:
  // [output * vary.size() + variation][world - first]; NaN where the derivatives do not reach.
  std::vector<std::vector<double>> gradients;
  std::int64_t size() const { return static_cast<std::int64_t>(status.size()); }
  // Appends the outcomes of the worlds that follow (more.first == first + size(), else throws).
  void append(const StudyOutcomes& more);
};

// The value drawn for one world, clipped to [min, max].
double sampleVariation(const Variation& v, std::uint64_t seed, int variationIndex, std::int64_t world);

// Sets a named parameter or initial-state value of world w (names above); validates it.
template <class T>
void setNamedParameter(Batch<T>& batch, std::int64_t w, const std::string& name, double value);
// Memory a study needs per world beyond its batch (batchMemory): a derivative study's step
// Jacobian, 2nu x (3nu + variations) in the batch's precision (host copy, and device copy on
// CUDA), and its sensitivities S, 2nu x variations doubles (host); nothing for other studies.
BatchMemory studyExtraBytesPerWorld(const Model& model, const StudySpec& spec, Precision precision, Backend backend);
// The most worlds of one chunk whose batch and extra memory (studyExtraBytesPerWorld; on CUDA a
// derivative study's dual worlds, at most 1 GiB of device memory) fit in `fraction` of `have`.
std::int64_t studyWorldsThatFit(const Model& model, const StudySpec& spec, Precision precision, Backend backend,
                                int cpuThreads, const MemoryAvailable& have, double fraction);

// Checks that every variation and output of the spec names something in the model, and that no
// value is varied twice.
void validateStudy(const std::shared_ptr<const Model>& model, const StudySpec& spec);

// Statistics of n values with their health flags (status 0), as described by OutputStats.
OutputStats reduceValues(const std::string& name, const double* values, const std::int32_t* status, std::int64_t n,
                         const std::vector<double>& quantiles, int bins);
// s for `worlds` worlds of which none is healthy: count 0, every number NaN, the reason in s.undefined.
OutputStats withoutHealthyWorlds(OutputStats s, std::int64_t worlds, std::size_t quantiles);

// Prepares a batch whose world 0 is study world `firstWorld` before the variations are drawn (a
// scene's initial state and per-world values: applySceneFrom).
template <class T>
using StudySetup = std::function<void(Batch<T>&, std::int64_t firstWorld)>;

// Runs worlds [first, first + count) of the study (world indices of the whole study: the draws of
// world w are studyDraw(spec, i, w)) in chunks of at most spec.chunk worlds, and returns their
// outcomes. progress is called after each piece of steps with the fraction of the count done
// and the seconds elapsed. A draw the model refuses throws ModelError naming the study's world.
template <class T>
StudyOutcomes runStudyWorlds(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                             std::int64_t first, std::int64_t count,
                             const std::function<void(double, double)>& progress = {},
                             const StudySetup<T>& setup = {});

// The statistics of a study from the outcomes of all its worlds (all.first == 0): per output the
// moments (momentsOf: fixed blocks, fixed tree), exact quantiles, the histogram, standard error and
// 95% interval of the mean; Spearman's rho of every variation against every output; for a Sobol
// study the indices. Depends only on the values in world order.
StudyResult reduceStudy(const StudySpec& spec, const StudyOutcomes& all);

// What a sequential study ("until") decides after `all` (its outcomes so far, all.first == 0):
// the worlds to run next, 0 to stop.
std::int64_t nextRoundWorlds(const StudySpec& spec, const StudyOutcomes& all);
// The same from the moments of the rule's output over the `worlds` worlds run so far.
std::int64_t nextRoundWorlds(const StudySpec& spec, std::int64_t worlds, const Moments& m);

// ---- reducing where the worlds ran (`--reduce ranks`: studies too large to gather) -------------
//
// A rank summarizes each output over the pieces of world indices it ran: the Moments of every
// block of kMomentBlock world indices it ran whole, the raw worlds of the blocks it ran only in
// part, and a quantile sketch. Rank 0 puts the pieces together (MomentsAssembly): each block
// reduced once, in world order, then the fixed tree — the same bits as momentsOf over all worlds,
// whatever the ranks and chunks. Sketches merge exactly (integer counts).
struct OutputShare {
  struct Loose {
    std::int64_t world;
    double value;
    std::int32_t status;
  };
  std::vector<std::pair<std::int64_t, Moments>> blocks;  // (block index, its moments)
  std::vector<Loose> loose;
  QuantileSketch sketch;

  // Adds worlds [first, first + n) (values and status in world order).
  void add(std::int64_t first, const double* values, const std::int32_t* status, std::int64_t n);
  // As doubles, to send (world, block indices and counts are exact in a double below 2^53).
  void encode(std::vector<double>& out) const;
  // Reads one share from in[at ...], advancing at; throws std::invalid_argument when malformed.
  static OutputShare decode(const std::vector<double>& in, std::size_t& at);
};

class MomentsAssembly {
 public:
  void add(const OutputShare& share);
  // The moments of worlds [0, worlds): every block must be whole (or the last, up to worlds).
  Moments total(std::int64_t worlds) const;

 private:
  std::map<std::int64_t, Moments> whole_;
  std::map<std::int64_t, std::vector<OutputShare::Loose>> loose_;
};

// ---- the rounds of a study ----------------------------------------------------------------------

// Where a study's statistics are computed: every outcome gathered on rank 0 (exact quantiles,
// Spearman's rho, Sobol indices; the outcomes kept), or each rank reducing its own worlds
// (moments from the blocks, histograms, quantiles from the sketch; for studies too large to gather).
enum class StudyReduction { Gather, OnRanks };

// What a study leaves on rank 0 (the other ranks: result.worlds and result.flaggedWorlds with
// StudyReduction::OnRanks, nothing with Gather).
struct StudyRun {
  StudyResult result;
  StudyOutcomes outcomes;  // every world's, when gathered
};

// Progress of a study: the fraction done of the current plan of `planned` worlds (it grows with
// each round of a sequential study), and the seconds elapsed. Rank 0's share stands for every
// rank's (the shares are equal).
using StudyProgress = std::function<void(double fraction, std::int64_t planned, double elapsed)>;

// What every rank throws when some rank failed: rank 0's message names it (describeRankErrors).
// In a job of one process the failure's own exception is thrown instead.
struct StudyFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the study's rounds (one unless "until": nextRoundWorlds decides on rank 0), each split over
// the ranks in equal contiguous ranges of world indices (runStudyWorlds), and reduces it as asked:
// the same bits whatever the chunk size or the number of ranks. With progress, each piece of
// worlds steps in hundredths of the run so that progress can be shown.
template <class T>
StudyRun runStudyRounds(const Communicator& ranks, std::shared_ptr<const Model> model, const StudySpec& spec,
                        Backend backend, StudyReduction reduction = StudyReduction::Gather,
                        const StudyProgress& progress = {}, const StudySetup<T>& setup = {});

// The same in one process, gathered: the statistics, and the per-world outcomes when asked.
template <class T>
StudyResult runStudy(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                     const StudyProgress& progress = {}, const StudySetup<T>& setup = {},
                     StudyOutcomes* outcomes = nullptr);

// The per-world values of one output in host memory, after a run (for reports and tests).
template <class T>
std::vector<double> outputValues(Batch<T>& batch, const std::string& output);

}  // namespace lockstep
