// The statistics of studies that run in pieces (chunks of worlds, MPI ranks, sequential batches),
// host code only: mergeable moments with a deterministic reduction order, fixed-edge histograms,
// a mergeable quantile sketch with a stated error bound, Spearman rank correlations, the Saltelli
// design with Sobol indices, and a sequential stopping rule.
//
// Reproducibility rule: every result here depends only on the values in world-index order, never
// on how the worlds were split into chunks or ranks. Moments are reduced in fixed blocks of
// kMomentBlock consecutive worlds merged in a fixed tree (momentsOf); histograms and the sketch
// hold integer counts, so merging them in any order gives the same bits.
//
// The formulas every reduction shares (sample standard deviation, interpolated quantile, histogram
// bin) are written once, in section 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

// ---- 0. the shared formulas -------------------------------------------------------------------

// Sample standard deviation from the sum of squared deviations ss of count values (n - 1
// denominator; 0 for a single value).
inline double sampleStddev(double ss, std::int64_t count) { return count > 1 ? std::sqrt(ss / double(count - 1)) : 0.0; }

// Quantile q in [0, 1] of count sorted values, by linear interpolation between the values at
// indices lo and hi: value(lo) + fraction * (value(hi) - value(lo)).
struct QuantilePoint {
  std::int64_t lo, hi;
  double fraction;
};
inline QuantilePoint quantilePoint(double q, std::int64_t count) {
  const double pos = q * double(count - 1);
  const std::int64_t lo = static_cast<std::int64_t>(std::floor(pos));
  const std::int64_t hi = lo + 1 < count ? lo + 1 : count - 1;
  return {lo, hi, pos - double(lo)};
}
inline double interpolateQuantile(const QuantilePoint& p, double valueLo, double valueHi) {
  return valueLo + p.fraction * (valueHi - valueLo);
}

// Bin of x among `bins` equal bins over [min, min + range]; the maximum goes into the last bin,
// and every value into bin 0 when all are equal (range 0).
inline int histogramBin(double x, double min, double range, int bins) {
  const int b = range > 0 ? static_cast<int>((x - min) / range * bins) : 0;
  return b < bins - 1 ? b : bins - 1;
}

// ---- 1. moments ----------------------------------------------------------------------------

// Count, mean, sum of squared deviations from the mean (M2), extremes of a set of values.
// add: Welford's update; merge: Chan, Golub and LeVeque's pairwise update
//   n = na + nb, delta = mean_b - mean_a, mean = mean_a + delta nb / n,
//   M2 = M2_a + M2_b + delta^2 na nb / n.
// Values must be finite (the runner leaves out flagged worlds before adding).
struct Moments {
  std::int64_t count = 0;
  double mean = 0, M2 = 0;
  double min = 0, max = 0;  // meaningful when count > 0

  void add(double x);
  void merge(const Moments& other);  // this = this (+) other; "this" is the left operand of the tree

  double variance() const;  // n - 1 denominator; 0 for fewer than two values
  double stddev() const;    // sampleStddev
  // Standard error of the mean, stddev / sqrt(count); 0 for fewer than two values.
  double standardError() const;
  // Half-width of the two-sided 95% confidence interval of the mean: studentT975(count - 1) *
  // standardError() (Student t with count - 1 degrees of freedom, so small samples get honest
  // intervals; it tends to 1.96 for large counts). Infinite for fewer than two values.
  double halfWidth95() const;
};

// Worlds per moment block: world w belongs to block w / kMomentBlock.
constexpr std::int64_t kMomentBlock = 1024;
inline std::int64_t momentBlockCount(std::int64_t worlds) { return (worlds + kMomentBlock - 1) / kMomentBlock; }

// The Moments of one block: its healthy values (status[i] == 0; every value when status is null)
// added in world order. A block split across chunks gives the same bits when its partial Moments
// is carried over and the next values are add()-ed to it in order; a rank boundary should fall on
// a multiple of kMomentBlock (or the block's partial Moments is sent on to the next rank).
Moments blockMoments(const double* values, std::int64_t n, const std::int32_t* status = nullptr);

// The moments of all worlds from the Moments of their blocks in block order, merged in a fixed
// binary tree: at each level, block results 2i and 2i+1 are merged (left with right), an odd last
// one moves up unchanged, until one remains. The tree depends only on blocks.size().
// Empty blocks (count 0) take part like the others (merging with an empty set is exact).
Moments mergeBlocks(const std::vector<Moments>& blocks);

// blockMoments over consecutive kMomentBlock-sized blocks of values[0 .. n) (world 0 first), then
// mergeBlocks: the reference for what a chunked or distributed run must reproduce bit for bit.
Moments momentsOf(const double* values, std::int64_t n, const std::int32_t* status = nullptr);

// The 0.975 quantile of Student's t with df degrees of freedom (the 95% two-sided multiplier):
// tabulated to 3 decimals for df 1 .. 30, above that the Cornish-Fisher series in 1/df (error
// below 1e-4); 1.959964 for infinite df. Throws std::invalid_argument for df < 1.
double studentT975(std::int64_t df);

// ---- 2. histograms with fixed edges ---------------------------------------------------------

// bins equal bins over [lo, hi] (histogramBin: hi itself goes into the last bin),
// with counts of the values below lo, above hi and non-finite ones. Two histograms with the same
// (lo, hi, bins) merge by adding counts, exactly and in any order.
struct FixedHistogram {
  double lo = 0, hi = 1;
  std::vector<std::int64_t> counts;
  std::int64_t below = 0, above = 0, nonFinite = 0;

  FixedHistogram() = default;
  // Throws std::invalid_argument unless lo < hi are finite and bins >= 1.
  FixedHistogram(double lo, double hi, int bins);
  void add(double x);
  void merge(const FixedHistogram& other);  // throws std::invalid_argument when the edges differ
  std::int64_t total() const;               // every value added, outside or non-finite included
  double edge(int i) const;                 // left edge of bin i (edge(bins) = hi)
};

// ---- 3. quantiles ---------------------------------------------------------------------------

// Exact quantiles of values (any order; sorted inside) by the interpolation of section 0
// (quantilePoint, interpolateQuantile). Empty: NaNs.
std::vector<double> exactQuantiles(std::vector<double> values, const std::vector<double>& qs);

// A mergeable quantile sketch with relative value error (the logarithmic bucketing of DDSketch,
// Masson, Rim and Lee 2019, with exact integer counts and no bucket collapsing): logarithmic buckets of ratio
// gamma = (1 + alpha) / (1 - alpha) for each sign (bucket k of |x| holds gamma^(k-1) < |x| <=
// gamma^k), one bucket for |x| < 2.2250738585072014e-308 (zero and subnormals). Each bucket
// reports 2 gamma^k / (gamma + 1), which is within relative alpha of every value in it.
//
// Error bound: quantile(q) is the interpolation of section 0 between the estimates of the order
// statistics x_lo and x_hi (quantilePoint(q, count)), each estimate within alpha |x| of the exact
// one, and clamped to the exact [min, max] (quantile(0) and quantile(1) are exact). So, when x_lo
// and x_hi do not have opposite signs,
//   |quantile(q) - exact(q)| <= alpha ((1 - f) |x_lo| + f |x_hi|) = alpha |exact(q)|,
// and in general <= alpha max(|x_lo|, |x_hi|); plus rounding (a few ulps relative) and 2.3e-308
// absolute for the zero bucket. Size: one bucket per occupied factor gamma of magnitude, about
// ln(max / min) / (2 alpha) per sign (alpha 0.005: 100 buckets per factor e, about 230 per
// decade). Counts are integers: merging in any order gives the same sketch.
class QuantileSketch {
 public:
  static constexpr double kDefaultAlpha = 0.005;
  // Throws std::invalid_argument unless 0 < alpha < 1.
  explicit QuantileSketch(double alpha = kDefaultAlpha);

  void add(double x);  // non-finite values are counted in nonFinite() and left out
  void merge(const QuantileSketch& other);  // throws std::invalid_argument when alpha differs
  double quantile(double q) const;           // q in [0, 1]; NaN when empty
  std::vector<double> quantiles(const std::vector<double>& qs) const;

  double alpha() const { return alpha_; }
  std::int64_t count() const { return count_; }  // finite values added
  std::int64_t nonFinite() const { return nonFinite_; }
  double min() const { return min_; }  // exact extremes (meaningful when count() > 0)
  double max() const { return max_; }

  // A flat form to send (MPI) or store: buckets as (key, count) pairs in ascending key (= value)
  // order: bucket k of a positive value has key k + offset (offset = 1 - floor(ln(DBL_MIN) /
  // ln(gamma)), so keys are >= 1), a negative value the opposite key, the zero bucket key 0.
  struct Flat {
    double alpha = kDefaultAlpha;
    std::int64_t count = 0, nonFinite = 0;
    double min = 0, max = 0;
    std::vector<std::pair<std::int64_t, std::int64_t>> buckets;  // ascending key
  };
  Flat flatten() const;
  static QuantileSketch fromFlat(const Flat& f);  // throws std::invalid_argument when malformed

 private:
  double alpha_, logGamma_;
  std::int64_t keyOffset_;
  std::map<std::int64_t, std::int64_t> buckets_;  // signed key (see Flat) -> count
  std::int64_t count_ = 0, nonFinite_ = 0;
  double min_ = 0, max_ = 0;
  std::int64_t keyOf(double x) const;
  double valueOf(std::int64_t key) const;
  double orderStatistic(std::int64_t rank) const;  // estimate of the rank-th smallest (0-based)
};

// ---- 4. Spearman rank correlation ------------------------------------------------------------

// Ranks 1 .. n of x[0 .. n) (finite values), ties given the average of the ranks they span.
std::vector<double> averageRanks(const double* x, std::int64_t n);
// Spearman's rho: the Pearson correlation of the average ranks of x and y (exact with ties).
// NaN when n < 2 or either set is constant (undefined; writers print it as null).
double spearman(const double* x, const double* y, std::int64_t n);
// rho[p][o] of each parameter p (parameters[p][world]) against each outcome o (outcomes[o][world]);
// every row must have the same length (std::invalid_argument otherwise). Spearman needs the
// values of all worlds together: the runner gathers them (parameters can be redrawn from their
// counters).
std::vector<std::vector<double>> spearmanMatrix(const std::vector<std::vector<double>>& parameters,
                                                const std::vector<std::vector<double>>& outcomes);

// ---- 5. Saltelli design and Sobol indices ----------------------------------------------------

// The Saltelli (2010) design for k parameters and N base rows: N (k + 2) worlds, base row by base
// row: world j is in base row r = j / (k + 2) and block b = j % (k + 2): b = 0 is row r of matrix
// A, b = 1 row r of B, b = 2 + i row r of AB_i (A with column i taken from B). Any prefix of whole
// base rows is itself a design (sequential runs and chunks keep their rows together).
//
// Drawing: A and B are two independent base samples. The runner draws parameter p of world j with
// the counter sampleIndex(j, p) = 2 r + (takes B's value ? 1 : 0), e.g.
// sampleVariation(v_p, seed, p, design.sampleIndex(j, p)): worlds of one base row that share a
// matrix get the same value, A and B differ.
struct SaltelliDesign {
  int parameters = 0;         // k >= 1
  std::int64_t baseRows = 0;  // N >= 1

  enum class Block { A, B, AB };
  struct Place {
    std::int64_t row;  // base row r
    Block block;
    int column;  // for Block::AB: i of AB_i; -1 otherwise
  };

  SaltelliDesign(int parameters, std::int64_t baseRows);  // throws std::invalid_argument unless both >= 1
  std::int64_t worlds() const { return baseRows * (parameters + 2); }
  Place place(std::int64_t world) const;            // throws std::out_of_range outside [0, worlds())
  bool takesB(std::int64_t world, int parameter) const;  // block B, or AB_i with i == parameter
  std::int64_t sampleIndex(std::int64_t world, int parameter) const {
    return 2 * place(world).row + (takesB(world, parameter) ? 1 : 0);
  }
  std::int64_t worldOf(std::int64_t row, Block block, int column = -1) const;  // inverse of place
};

struct SobolIndices {
  std::int64_t rows = 0;  // base rows used (a row with any flagged world is left out whole)
  double variance = 0;    // V: of the A and B values together, 2 per row (n - 1 denominator)
  std::vector<double> first, total;               // S_i, ST_i [parameter]
  std::vector<double> firstLow, firstHigh;        // 95% bootstrap percentile interval of S_i
  std::vector<double> totalLow, totalHigh;        // and of ST_i
  int resamples = 0;
  std::uint64_t seed = 0;
};

// Sobol indices of one outcome from its values y[0 .. design.worlds()) in design order (status as
// blockMoments: a base row with any flagged world is left out). With V the variance of the A and B
// values together and f_A, f_B, f_ABi the values of a base row, means over the healthy rows:
//   first-order (Saltelli 2010):  S_i  = mean(f_B (f_ABi - f_A)) / V
//   total (Jansen 1999):          ST_i = mean((f_A - f_ABi)^2) / (2 V)
// Confidence intervals: percentile bootstrap over base rows, `resamples` resamples; resample b
// draws its rows with a counter-based hash of (seed, b, draw), so the intervals are reproducible
// and independent of threads or ranks (resamples run on OpenMP threads; a resample with no
// variance is left out). Cost: O(resamples N k). Throws std::invalid_argument when resamples < 0
// or fewer than 2 rows are healthy; indices and intervals are NaN when V = 0, as for an outcome
// that takes one value only (no intervals when resamples = 0).
SobolIndices sobolIndices(const SaltelliDesign& design, const double* y, const std::int32_t* status = nullptr,
                          int resamples = 1000, std::uint64_t seed = 1);

// ---- 6. sequential stopping -----------------------------------------------------------------

struct StoppingDecision {
  bool stop = false;
  double halfWidth = 0;            // the current 95% half-width, Moments::halfWidth95
  std::int64_t expectedCount = 0;  // ceil((z sigma / target)^2), z = 1.959964, sigma the stddev so far
};
// Stop when at least minCount values are in and the 95% confidence half-width of the mean is at or
// below targetHalfWidth (> 0, else std::invalid_argument). expectedCount is the closed-form count
// the normal approximation needs for that half-width with the current standard deviation (at
// least minCount), for planning the next batch.
StoppingDecision shouldStop(const Moments& m, double targetHalfWidth, std::int64_t minCount = 30);

}  // namespace lockstep
