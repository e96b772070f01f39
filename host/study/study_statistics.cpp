#include "lockstep/study/study_statistics.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "splitmix64.h"

namespace lockstep {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ975 = 1.959963984540054;  // the 0.975 quantile of the standard normal

}  // namespace

// ---- 1. moments ----------------------------------------------------------------------------

void Moments::add(double x) {
  if (count == 0) {
    min = max = x;
  } else {
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ++count;
  const double delta = x - mean;
  mean += delta / double(count);
  M2 += delta * (x - mean);
}

void Moments::merge(const Moments& b) {
  if (b.count == 0) return;
  if (count == 0) {
    *this = b;
    return;
  }
  const double na = double(count), nb = double(b.count), n = na + nb;
  const double delta = b.mean - mean;
  mean += delta * (nb / n);
  M2 += b.M2 + delta * delta * (na * nb / n);
  count += b.count;
  min = std::min(min, b.min);
  max = std::max(max, b.max);
}

double Moments::variance() const { return count > 1 ? M2 / double(count - 1) : 0.0; }
double Moments::stddev() const { return sampleStddev(M2, count); }
double Moments::standardError() const { return count > 1 ? stddev() / std::sqrt(double(count)) : 0.0; }
double Moments::halfWidth95() const {
  return count > 1 ? studentT975(count - 1) * standardError() : std::numeric_limits<double>::infinity();
}

Moments blockMoments(const double* values, std::int64_t n, const std::int32_t* status) {
  Moments m;
  for (std::int64_t i = 0; i < n; ++i)
    if (!status || status[i] == 0) m.add(values[i]);
  return m;
}

Moments mergeBlocks(const std::vector<Moments>& blocks) {
  if (blocks.empty()) return {};
  std::vector<Moments> level = blocks;
  while (level.size() > 1) {
    std::vector<Moments> up;
    up.reserve((level.size() + 1) / 2);
    for (std::size_t i = 0; i < level.size(); i += 2) {
      Moments m = level[i];
      if (i + 1 < level.size()) m.merge(level[i + 1]);
      up.push_back(m);
    }
    level.swap(up);
  }
  return level.front();
}

Moments momentsOf(const double* values, std::int64_t n, const std::int32_t* status) {
  std::vector<Moments> blocks;
  blocks.reserve(static_cast<std::size_t>(momentBlockCount(n)));
  for (std::int64_t b = 0; b * kMomentBlock < n; ++b) {
    const std::int64_t first = b * kMomentBlock, size = std::min(kMomentBlock, n - first);
    blocks.push_back(blockMoments(values + first, size, status ? status + first : nullptr));
  }
  return mergeBlocks(blocks);
}

double studentT975(std::int64_t df) {
  static const double table[30] = {12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.5705818, 2.4469119,
                                   2.3646243,  2.3060041, 2.2621572, 2.2281389, 2.2009852, 2.1788128,
                                   2.1603687,  2.1447867, 2.1314495, 2.1199053, 2.1098156, 2.1009220,
                                   2.0930241,  2.0859634, 2.0796138, 2.0738731, 2.0686576, 2.0638986,
                                   2.0595386,  2.0555294, 2.0518305, 2.0484071, 2.0452296, 2.0422725};
  if (df < 1) throw std::invalid_argument("studentT975: degrees of freedom must be >= 1");
  if (df <= 30) return table[df - 1];
  // Cornish-Fisher expansion of the t quantile in powers of 1 / df (Abramowitz and Stegun 26.7.5).
  const double z = kZ975, z2 = z * z, v = double(df);
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / v) / v) / v) / v;
}

// ---- 2. histograms with fixed edges ---------------------------------------------------------

FixedHistogram::FixedHistogram(double lo_, double hi_, int bins) : lo(lo_), hi(hi_) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw std::invalid_argument("histogram: the edges must be finite with low < high");
  if (bins < 1) throw std::invalid_argument("histogram: bins must be at least 1");
  counts.assign(static_cast<std::size_t>(bins), 0);
}

void FixedHistogram::add(double x) {
  if (!std::isfinite(x)) {
    ++nonFinite;
  } else if (x < lo) {
    ++below;
  } else if (x > hi) {
    ++above;
  } else {
    ++counts[histogramBin(x, lo, hi - lo, static_cast<int>(counts.size()))];
  }
}

void FixedHistogram::merge(const FixedHistogram& o) {
  if (o.lo != lo || o.hi != hi || o.counts.size() != counts.size())
    throw std::invalid_argument("histogram: cannot merge histograms with different edges");
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  below += o.below;
  above += o.above;
  nonFinite += o.nonFinite;
}

std::int64_t FixedHistogram::total() const {
  return std::accumulate(counts.begin(), counts.end(), std::int64_t(0)) + below + above + nonFinite;
}

double FixedHistogram::edge(int i) const {
  const int bins = static_cast<int>(counts.size());
  return i >= bins ? hi : lo + (hi - lo) * (double(i) / double(bins));
}

// ---- 3. quantiles ---------------------------------------------------------------------------

std::vector<double> exactQuantiles(std::vector<double> v, const std::vector<double>& qs) {
  std::vector<double> out;
  out.reserve(qs.size());
  std::sort(v.begin(), v.end());
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  for (double q : qs) {
    if (n == 0) {
      out.push_back(kNaN);
      continue;
    }
    const QuantilePoint p = quantilePoint(q, n);
    out.push_back(interpolateQuantile(p, v[p.lo], v[p.hi]));
  }
  return out;
}

QuantileSketch::QuantileSketch(double alpha) : alpha_(alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("quantile sketch: alpha must be in (0, 1)");
  logGamma_ = std::log((1 + alpha) / (1 - alpha));
  keyOffset_ = 1 - static_cast<std::int64_t>(std::floor(std::log(DBL_MIN) / logGamma_));
}

std::int64_t QuantileSketch::keyOf(double x) const {
  const double a = std::abs(x);
  if (a < DBL_MIN) return 0;
  const std::int64_t k = static_cast<std::int64_t>(std::ceil(std::log(a) / logGamma_)) + keyOffset_;
  return x > 0 ? k : -k;
}

double QuantileSketch::valueOf(std::int64_t key) const {
  if (key == 0) return 0.0;
  const double k = double((key > 0 ? key : -key) - keyOffset_);
  const double gamma = (1 + alpha_) / (1 - alpha_);
  const double v = 2 * std::exp(k * logGamma_) / (gamma + 1);
  return key > 0 ? v : -v;
}

void QuantileSketch::add(double x) {
  if (!std::isfinite(x)) {
    ++nonFinite_;
    return;
  }
  if (count_ == 0) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  ++count_;
  ++buckets_[keyOf(x)];
}

void QuantileSketch::merge(const QuantileSketch& o) {
  if (o.alpha_ != alpha_) throw std::invalid_argument("quantile sketch: cannot merge sketches of different alpha");
  if (o.count_ > 0) {
    min_ = count_ > 0 ? std::min(min_, o.min_) : o.min_;
    max_ = count_ > 0 ? std::max(max_, o.max_) : o.max_;
  }
  for (const auto& [key, c] : o.buckets_) buckets_[key] += c;
  count_ += o.count_;
  nonFinite_ += o.nonFinite_;
}

double QuantileSketch::orderStatistic(std::int64_t rank) const {
  if (rank <= 0) return min_;  // the extremes are known exactly
  if (rank >= count_ - 1) return max_;
  // Keys ascend with the values: negative keys of large magnitude first, then 0, then positive.
  std::int64_t seen = 0;
  for (const auto& [key, c] : buckets_) {
    seen += c;
    if (seen > rank) return std::min(std::max(valueOf(key), min_), max_);
  }
  return max_;
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return kNaN;
  const QuantilePoint p = quantilePoint(q, count_);
  return interpolateQuantile(p, orderStatistic(p.lo), orderStatistic(p.hi));
}

std::vector<double> QuantileSketch::quantiles(const std::vector<double>& qs) const {
  std::vector<double> out;
  out.reserve(qs.size());
  for (double q : qs) out.push_back(quantile(q));
  return out;
}

QuantileSketch::Flat QuantileSketch::flatten() const {
  Flat f;
  f.alpha = alpha_;
  f.count = count_;
  f.nonFinite = nonFinite_;
  f.min = min_;
  f.max = max_;
  f.buckets.assign(buckets_.begin(), buckets_.end());
  return f;
}

QuantileSketch QuantileSketch::fromFlat(const Flat& f) {
  QuantileSketch s(f.alpha);
  if (f.count < 0 || f.nonFinite < 0) throw std::invalid_argument("quantile sketch: negative count");
  if (f.count > 0 && !(std::isfinite(f.min) && std::isfinite(f.max) && f.min <= f.max))
    throw std::invalid_argument("quantile sketch: min and max must be finite with min <= max");
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < f.buckets.size(); ++i) {
    const auto& [key, c] = f.buckets[i];
    if (i > 0 && key <= f.buckets[i - 1].first) throw std::invalid_argument("quantile sketch: bucket keys must ascend");
    if (c <= 0) throw std::invalid_argument("quantile sketch: bucket counts must be positive");
    s.buckets_.emplace_hint(s.buckets_.end(), key, c);
    sum += c;
  }
  if (sum != f.count) throw std::invalid_argument("quantile sketch: bucket counts do not add up to the count");
  s.count_ = f.count;
  s.nonFinite_ = f.nonFinite;
  s.min_ = f.min;
  s.max_ = f.max;
  return s;
}

// ---- 4. Spearman rank correlation ------------------------------------------------------------

std::vector<double> averageRanks(const double* x, std::int64_t n) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::stable_sort(order.begin(), order.end(), [x](std::int64_t a, std::int64_t b) { return x[a] < x[b]; });
  std::vector<double> rank(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n;) {
    std::int64_t j = i + 1;
    while (j < n && x[order[j]] == x[order[i]]) ++j;
    const double average = 0.5 * double(i + 1 + j);  // mean of the ranks i + 1 .. j
    for (std::int64_t t = i; t < j; ++t) rank[order[t]] = average;
    i = j;
  }
  return rank;
}

namespace {

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n < 2) return kNaN;
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= double(n);
  mb /= double(n);
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0 || sbb == 0) return kNaN;
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

double spearman(const double* x, const double* y, std::int64_t n) {
  return pearson(averageRanks(x, n), averageRanks(y, n));
}

std::vector<std::vector<double>> spearmanMatrix(const std::vector<std::vector<double>>& parameters,
                                                const std::vector<std::vector<double>>& outcomes) {
  const std::size_t n = !parameters.empty() ? parameters[0].size() : !outcomes.empty() ? outcomes[0].size() : 0;
  for (const auto& r : parameters)
    if (r.size() != n) throw std::invalid_argument("spearman: every parameter and outcome needs one value per world");
  for (const auto& r : outcomes)
    if (r.size() != n) throw std::invalid_argument("spearman: every parameter and outcome needs one value per world");
  std::vector<std::vector<double>> outcomeRanks;
  for (const auto& o : outcomes) outcomeRanks.push_back(averageRanks(o.data(), std::int64_t(n)));
  std::vector<std::vector<double>> rho;
  for (const auto& p : parameters) {
    const std::vector<double> pr = averageRanks(p.data(), std::int64_t(n));
    std::vector<double> row;
    for (const auto& orank : outcomeRanks) row.push_back(pearson(pr, orank));
    rho.push_back(row);
  }
  return rho;
}

// ---- 5. Saltelli design and Sobol indices ----------------------------------------------------

SaltelliDesign::SaltelliDesign(int k, std::int64_t n) : parameters(k), baseRows(n) {
  if (k < 1) throw std::invalid_argument("Saltelli design: at least one parameter");
  if (n < 1) throw std::invalid_argument("Saltelli design: at least one base row");
}

SaltelliDesign::Place SaltelliDesign::place(std::int64_t world) const {
  if (world < 0 || world >= worlds()) throw std::out_of_range("Saltelli design: world index outside the design");
  const std::int64_t row = world / (parameters + 2);
  const int b = static_cast<int>(world % (parameters + 2));
  if (b == 0) return {row, Block::A, -1};
  if (b == 1) return {row, Block::B, -1};
  return {row, Block::AB, b - 2};
}

bool SaltelliDesign::takesB(std::int64_t world, int parameter) const {
  const Place p = place(world);
  return p.block == Block::B || (p.block == Block::AB && p.column == parameter);
}

std::int64_t SaltelliDesign::worldOf(std::int64_t row, Block block, int column) const {
  if (row < 0 || row >= baseRows) throw std::out_of_range("Saltelli design: base row outside the design");
  if (block == Block::AB && (column < 0 || column >= parameters))
    throw std::out_of_range("Saltelli design: AB column outside the parameters");
  const int b = block == Block::A ? 0 : block == Block::B ? 1 : 2 + column;
  return row * (parameters + 2) + b;
}

namespace {

// The values of the healthy base rows: fA[r], fB[r], fAB[i][r].
struct SaltelliValues {
  std::vector<double> fA, fB;
  std::vector<std::vector<double>> fAB;
};

// S_i and ST_i from the rows rows[0 .. m) of v (with repetitions for a bootstrap resample).
void estimate(const SaltelliValues& v, const std::vector<std::int64_t>& rows, std::vector<double>& first,
              std::vector<double>& total, double* variance) {
  const std::size_t k = v.fAB.size();
  const double m = double(rows.size());
  double mean = 0;
  for (std::int64_t r : rows) mean += v.fA[r] + v.fB[r];
  mean /= 2 * m;
  double ss = 0;
  bool constant = true;  // then V is 0, though the rounded mean may differ from the value
  for (std::int64_t r : rows) {
    ss += (v.fA[r] - mean) * (v.fA[r] - mean) + (v.fB[r] - mean) * (v.fB[r] - mean);
    constant = constant && v.fA[r] == v.fA[rows[0]] && v.fB[r] == v.fA[rows[0]];
  }
  const double V = constant ? 0.0 : ss / (2 * m - 1);
  if (variance) *variance = V;
  first.assign(k, kNaN);
  total.assign(k, kNaN);
  if (!(V > 0)) return;
  for (std::size_t i = 0; i < k; ++i) {
    double s = 0, st = 0;
    for (std::int64_t r : rows) {
      const double d = v.fAB[i][r] - v.fA[r];
      s += (v.fB[r] - mean) * d;  // centred: the mean adds only noise (E[d] = 0)
      st += d * d;
    }
    first[i] = s / m / V;
    total[i] = st / (2 * m) / V;
  }
}

}  // namespace

SobolIndices sobolIndices(const SaltelliDesign& d, const double* y, const std::int32_t* status, int resamples,
                          std::uint64_t seed) {
  if (resamples < 0) throw std::invalid_argument("Sobol indices: resamples must be >= 0");
  const int k = d.parameters;
  SaltelliValues v;
  v.fAB.resize(k);
  for (std::int64_t r = 0; r < d.baseRows; ++r) {
    const std::int64_t first = d.worldOf(r, SaltelliDesign::Block::A);
    bool healthy = true;
    for (int b = 0; b < k + 2 && status; ++b) healthy = healthy && status[first + b] == 0;
    if (!healthy) continue;
    v.fA.push_back(y[first]);
    v.fB.push_back(y[first + 1]);
    for (int i = 0; i < k; ++i) v.fAB[i].push_back(y[first + 2 + i]);
  }
  const std::int64_t m = static_cast<std::int64_t>(v.fA.size());
  if (m < 2) throw std::invalid_argument("Sobol indices: fewer than 2 healthy base rows");
  SobolIndices s;
  s.rows = m;
  s.resamples = resamples;
  s.seed = seed;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(m));
  std::iota(rows.begin(), rows.end(), std::int64_t(0));
  estimate(v, rows, s.first, s.total, &s.variance);

  // Percentile bootstrap: resample b takes row floor(u m) for its draw t, u from hash(seed, b, t).
  // Resamples are independent of each other: threads share them out and store each in its place.
  std::vector<std::vector<double>> bootFirst(k, std::vector<double>(resamples)), bootTotal = bootFirst;
#pragma omp parallel
  {
    std::vector<std::int64_t> drawn(static_cast<std::size_t>(m));
    std::vector<double> f, t;
#pragma omp for schedule(static)
    for (int b = 0; b < resamples; ++b) {
      const std::uint64_t base = splitmix64(splitmix64(seed) ^ splitmix64(0x5A17E11Full + std::uint64_t(b)));
      for (std::int64_t draw = 0; draw < m; ++draw) {
        const std::uint64_t h = splitmix64(base ^ std::uint64_t(draw));
        drawn[draw] = static_cast<std::int64_t>(double(h >> 11) * (1.0 / 9007199254740992.0) * double(m));
      }
      estimate(v, drawn, f, t, nullptr);
      for (int i = 0; i < k; ++i) {
        bootFirst[i][b] = f[i];
        bootTotal[i][b] = t[i];
      }
    }
  }
  // A resample whose rows all have one value has no variance and no indices: left out.
  auto finite = [](std::vector<double> x) {
    x.erase(std::remove_if(x.begin(), x.end(), [](double a) { return !std::isfinite(a); }), x.end());
    return x;
  };
  s.firstLow.assign(k, kNaN);
  s.firstHigh.assign(k, kNaN);
  s.totalLow.assign(k, kNaN);
  s.totalHigh.assign(k, kNaN);
  if (resamples > 0 && s.variance > 0) {
    for (int i = 0; i < k; ++i) {
      const std::vector<double> fq = exactQuantiles(finite(bootFirst[i]), {0.025, 0.975});
      const std::vector<double> tq = exactQuantiles(finite(bootTotal[i]), {0.025, 0.975});
      s.firstLow[i] = fq[0];
      s.firstHigh[i] = fq[1];
      s.totalLow[i] = tq[0];
      s.totalHigh[i] = tq[1];
    }
  }
  return s;
}

// ---- 6. sequential stopping -----------------------------------------------------------------

StoppingDecision shouldStop(const Moments& m, double target, std::int64_t minCount) {
  if (!(target > 0) || !std::isfinite(target))
    throw std::invalid_argument("stopping rule: the target half-width must be a positive number");
  StoppingDecision d;
  d.halfWidth = m.halfWidth95();
  const double sigma = m.stddev();
  const double n = std::ceil((kZ975 * sigma / target) * (kZ975 * sigma / target));
  d.expectedCount = std::max<std::int64_t>(minCount, static_cast<std::int64_t>(n));
  d.stop = m.count >= minCount && d.halfWidth <= target;
  return d;
}

}  // namespace lockstep
