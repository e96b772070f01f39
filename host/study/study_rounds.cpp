// The rounds of a study, split over the processes of a job (runStudyRounds): the one loop behind
// `lockstep study` (one process or MPI ranks), runStudy and Python's run_study. With the outcomes
// gathered, rank 0 reduces them (reduceStudy); reduced on the ranks, each rank sends rank 0 a
// summary of its worlds per round (OutputShare) and the histograms are counted where the worlds ran.
#include <algorithm>
#include <chrono>
#include <exception>

#include "lockstep/study/study.h"
#include "lockstep/study/study_statistics.h"

namespace lockstep {

namespace {

// Rank 0's view of a study reduced on the ranks: per output the blocks' moments and the merged
// quantile sketch.
struct DistributedReduction {
  std::vector<MomentsAssembly> moments;
  std::vector<QuantileSketch> sketches;
};

// Sends this rank's summary of its piece to rank 0, which adds every rank's in rank order.
void reduceRound(const Communicator& ranks, const StudySpec& spec, const StudyOutcomes& mine, DistributedReduction& d) {
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
StudyResult finishDistributed(const Communicator& ranks, const StudySpec& spec, std::int64_t worlds,
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
    } else {
      s = withoutHealthyWorlds(s, worlds, spec.quantiles.size());
    }
    r.outputs.push_back(s);
  }
  return r;
}

std::size_t outputIndex(const StudySpec& spec, const std::string& name) {
  return std::find(spec.outputs.begin(), spec.outputs.end(), name) - spec.outputs.begin();
}

}  // namespace

std::string describeRankErrors(const std::vector<std::string>& errors) {
  const auto failed = std::find_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
  if (failed == errors.end()) return {};
  if (errors.size() == 1 || std::all_of(errors.begin(), errors.end(), [&](const std::string& e) { return e == *failed; }))
    return *failed;
  int count = 0;
  for (const std::string& e : errors) count += !e.empty();
  return "rank " + std::to_string(failed - errors.begin()) + " of " + std::to_string(errors.size()) +
         " failed: " + *failed + (count > 1 ? " (" + std::to_string(count - 1) + " other ranks failed too)" : "");
}

template <class T>
StudyRun runStudyRounds(const Communicator& ranks, std::shared_ptr<const Model> model, const StudySpec& spec,
                        Backend backend, StudyReduction reduction, const StudyProgress& progress,
                        const StudySetup<T>& setup) {
  validateStudy(model, spec);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const bool distributed = reduction == StudyReduction::OnRanks;
  if (distributed && spec.sensitivity == Sensitivity::Derivative)
    throw std::invalid_argument("study: sensitivity \"derivative\" reduces every world's derivatives on rank 0: "
                                "gather the outcomes (leave out reducing on the ranks)");
  DistributedReduction partial;
  partial.moments.resize(spec.outputs.size());
  partial.sketches.resize(spec.outputs.size());
  std::vector<StudyOutcomes> pieces;  // this rank's, kept when distributed
  StudyRun run;
  std::int64_t done = 0;
  for (std::int64_t n = studyWorldCount(spec, spec.worlds); n > 0;) {
    // This rank's share of the round: equal contiguous ranges of world indices.
    const std::int64_t r = ranks.rank(), N = ranks.size();
    const std::int64_t lo = done + n * r / N, hi = done + n * (r + 1) / N;
    StudyOutcomes mine;
    std::string error;
    std::exception_ptr failure;
    try {
      const double before = seconds();
      std::function<void(double, double)> onProgress;
      if (progress)
        onProgress = [&](double fraction, double elapsed) {
          progress((double(done) + fraction * double(n)) / double(done + n), done + n, before + elapsed);
        };
      mine = runStudyWorlds<T>(model, spec, backend, lo, hi - lo, onProgress, setup);
    } catch (const std::exception& e) {
      error = e.what();
      failure = std::current_exception();
    }
    const std::string failed = describeRankErrors(ranks.agree(error));
    if (!failed.empty()) {
      if (failure && ranks.size() == 1) std::rethrow_exception(failure);
      throw StudyFailed(failed);
    }
    std::int64_t next = 0;
    if (distributed) {
      reduceRound(ranks, spec, mine, partial);
      pieces.push_back(std::move(mine));
      if (ranks.root() && !spec.until.output.empty())
        next = nextRoundWorlds(spec, done + n, partial.moments[outputIndex(spec, spec.until.output)].total(done + n));
    } else {
      StudyOutcomes round;
      round.first = done;
      for (const std::vector<double>& v : mine.values) round.values.push_back(ranks.gather(v));
      round.status = ranks.gather(mine.status);
      for (const std::vector<double>& g : mine.gradients) round.gradients.push_back(ranks.gather(g));
      if (ranks.root()) {
        run.outcomes.append(round);
        next = nextRoundWorlds(spec, run.outcomes);
      }
    }
    done += n;
    n = ranks.broadcast(next);
  }
  if (distributed) run.result = finishDistributed(ranks, spec, done, pieces, partial);
  else if (ranks.root()) run.result = reduceStudy(spec, run.outcomes);
  run.result.wallSeconds = seconds();
  return run;
}

template <class T>
StudyResult runStudy(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                     const StudyProgress& progress, const StudySetup<T>& setup, StudyOutcomes* outcomes) {
  StudyRun run = runStudyRounds<T>(OneProcess(), std::move(model), spec, backend, StudyReduction::Gather, progress, setup);
  if (outcomes) *outcomes = std::move(run.outcomes);
  return std::move(run.result);
}

#define LOCKSTEP_STUDY_ROUNDS(T)                                                                                  \
  template StudyRun runStudyRounds<T>(const Communicator&, std::shared_ptr<const Model>, const StudySpec&, Backend, \
                                      StudyReduction, const StudyProgress&, const StudySetup<T>&);                 \
  template StudyResult runStudy<T>(std::shared_ptr<const Model>, const StudySpec&, Backend, const StudyProgress&,  \
                                   const StudySetup<T>&, StudyOutcomes*);
LOCKSTEP_STUDY_ROUNDS(float)
LOCKSTEP_STUDY_ROUNDS(double)
#undef LOCKSTEP_STUDY_ROUNDS

}  // namespace lockstep
