// The statistics of a study from its outcomes: reduceValues and reduceStudy (everything gathered
// on rank 0), the rule of a sequential study (nextRoundWorlds), and the pieces of a reduction on
// the ranks (OutputShare, MomentsAssembly). Every result depends only on the outcomes in world
// order (study_statistics.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lockstep/study/study.h"
#include "lockstep/study/study_statistics.h"

namespace lockstep {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The one value every element of x has, if there is one (and x is not empty).
std::optional<double> onlyValue(const std::vector<double>& x) {
  if (x.empty() || std::any_of(x.begin(), x.end(), [&](double a) { return a != x.front(); })) return std::nullopt;
  return x.front();
}

std::string text(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// Base rows of the design whose worlds are all healthy (those the Sobol indices are over).
std::int64_t healthyRows(const SaltelliDesign& d, const std::int32_t* status) {
  std::int64_t rows = 0;
  for (std::int64_t r = 0; r < d.baseRows; ++r) {
    const std::int64_t first = d.worldOf(r, SaltelliDesign::Block::A);
    bool healthy = true;
    for (int b = 0; b < d.parameters + 2; ++b) healthy = healthy && status[first + b] == 0;
    rows += healthy;
  }
  return rows;
}

}  // namespace

OutputStats withoutHealthyWorlds(OutputStats s, std::int64_t worlds, std::size_t quantiles) {
  s.count = 0;
  s.undefined = "no healthy world: all " + std::to_string(worlds) + " worlds were flagged";
  s.mean = s.stddev = s.min = s.max = s.standardError = s.ciHalfWidth = kNaN;
  s.quantiles.assign(quantiles, kNaN);
  return s;
}

OutputStats reduceValues(const std::string& name, const double* values, const std::int32_t* status, std::int64_t n,
                         const std::vector<double>& quantiles, int bins) {
  OutputStats s;
  s.name = name;
  s.histogram.assign(bins, 0);
  const Moments m = momentsOf(values, n, status);  // fixed blocks, fixed tree: the same bits however run
  s.count = m.count;
  if (m.count == 0) return withoutHealthyWorlds(s, n, quantiles.size());
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(m.count));
  for (std::int64_t i = 0; i < n; ++i)
    if (!status || status[i] == 0) v.push_back(values[i]);
  s.mean = m.mean;
  s.stddev = m.stddev();
  s.min = m.min;
  s.max = m.max;
  s.standardError = m.standardError();
  s.ciHalfWidth = m.halfWidth95();
  for (double x : v) s.histogram[histogramBin(x, s.min, s.max - s.min, bins)] += 1;
  s.quantiles = exactQuantiles(std::move(v), quantiles);
  return s;
}

namespace {

constexpr double kPi = 3.14159265358979323846;

// A derivative study's measures (StudyResult::dgsm): over the healthy worlds, nu = mean of the
// squared derivative, and the bound C nu / Var(output) on the total Sobol index.
void reduceDerivatives(const StudySpec& spec, const StudyOutcomes& all, StudyResult& r) {
  const std::size_t nv = spec.vary.size(), no = spec.outputs.size();
  r.dgsm.assign(no, std::vector<double>(nv, kNaN));
  r.dgsmBound.assign(no, std::vector<double>(nv, kNaN));
  r.dgsmUndefined.assign(no, std::vector<std::string>(nv));
  for (std::size_t o = 0; o < no; ++o) {
    const Moments m = momentsOf(all.values[o].data(), all.size(), all.status.data());
    const double variance = m.count > 1 ? m.variance() : kNaN;
    for (std::size_t v = 0; v < nv; ++v) {
      const std::vector<double>& g = all.gradients[o * nv + v];
      double sum = 0;
      std::int64_t count = 0;
      bool reached = true;
      for (std::int64_t w = 0; w < all.size(); ++w) {
        if (all.status[w] != 0) continue;
        if (std::isnan(g[w])) reached = false;
        sum += g[w] * g[w];
        ++count;
      }
      std::string& why = r.dgsmUndefined[o][v];
      const Variation& var = spec.vary[v];
      if (count == 0) {
        why = "no healthy world";
        continue;
      }
      if (!reached) {
        why = "the derivatives do not reach d '" + spec.outputs[o] + "' / d '" + var.parameter +
              "' (outputs: q and u components; varied values: per-world parameters, and the initial q and u "
              "of models without sphere contacts; docs/derivatives.md)";
        continue;
      }
      const double nu = sum / double(count);
      r.dgsm[o][v] = nu;
      if (var.distribution == Distribution::LogNormal) {
        why = "a log-normal distribution has no Poincare constant: no bound on the total index";
        continue;
      }
      if (!(variance > 0)) {
        why = m.count < 2 ? "fewer than 2 healthy worlds" : "output '" + spec.outputs[o] + "' is constant";
        continue;
      }
      const double poincare =
          var.distribution == Distribution::Uniform ? (var.b - var.a) * (var.b - var.a) / (kPi * kPi) : var.b * var.b;
      r.dgsmBound[o][v] = poincare * nu / variance;
    }
  }
}

}  // namespace

StudyResult reduceStudy(const StudySpec& spec, const StudyOutcomes& all) {
  if (all.first != 0) throw std::invalid_argument("reduceStudy: the outcomes must start at world 0");
  const std::int64_t n = all.size();
  StudyResult r;
  r.worlds = n;
  for (std::int32_t s : all.status) r.flaggedWorlds += s != 0;
  // The worlds the summary is over: every world, or a Sobol design's A and B worlds (independent
  // draws; the AB worlds repeat their values). Left-out worlds are marked as not healthy.
  std::vector<std::int32_t> status = all.status;
  std::unique_ptr<SaltelliDesign> design;
  if (spec.sensitivity == Sensitivity::Sobol) {
    const int k = static_cast<int>(spec.vary.size());
    design = std::make_unique<SaltelliDesign>(k, std::max<std::int64_t>(1, n / (k + 2)));
    if (design->worlds() != n)
      throw std::invalid_argument("reduceStudy: a Sobol study's outcomes must be whole base rows of its design");
    for (std::int64_t w = 0; w < n; ++w)
      if (design->place(w).block == SaltelliDesign::Block::AB) status[w] = status[w] ? status[w] : -1;
  }
  for (std::size_t o = 0; o < spec.outputs.size(); ++o)
    r.outputs.push_back(reduceValues(spec.outputs[o], all.values[o].data(), status.data(), n, spec.quantiles,
                                     spec.histogramBins));
  // Spearman's rho of each variation against each output over the same healthy worlds; the Sobol
  // indices over the healthy base rows. Both are undefined for a parameter or output that takes
  // one value only.
  std::vector<std::vector<double>> x(spec.vary.size()), y(spec.outputs.size());
  for (std::int64_t w = 0; w < n; ++w) {
    if (status[w] != 0) continue;
    for (std::size_t i = 0; i < spec.vary.size(); ++i) x[i].push_back(studyDraw(spec, static_cast<int>(i), w));
    for (std::size_t o = 0; o < spec.outputs.size(); ++o) y[o].push_back(all.values[o][w]);
  }
  std::vector<std::string> parameterConstant(spec.vary.size()), outputConstant(spec.outputs.size());
  for (std::size_t i = 0; i < spec.vary.size(); ++i)
    if (const auto v = onlyValue(x[i])) parameterConstant[i] = "parameter '" + spec.vary[i].parameter + "' does not vary (every draw is " + text(*v) + ")";
  for (std::size_t o = 0; o < spec.outputs.size(); ++o)
    if (const auto v = onlyValue(y[o])) outputConstant[o] = "output '" + spec.outputs[o] + "' is constant (" + text(*v) + ")";
  if (!spec.vary.empty()) {
    r.spearman = spearmanMatrix(x, y);
    r.spearmanUndefined.assign(spec.vary.size(), std::vector<std::string>(spec.outputs.size()));
    for (std::size_t i = 0; i < spec.vary.size(); ++i)
      for (std::size_t o = 0; o < spec.outputs.size(); ++o)
        if (std::isnan(r.spearman[i][o]))
          r.spearmanUndefined[i][o] = x[i].size() < 2                 ? "fewer than 2 healthy worlds"
                                      : !parameterConstant[i].empty() ? parameterConstant[i]
                                                                      : outputConstant[o];
  }
  if (design) {
    const std::int64_t rows = healthyRows(*design, all.status.data());
    for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
      std::vector<std::string> undefined(spec.vary.size());
      SobolIndices s;
      if (rows >= 2) {
        s = sobolIndices(*design, all.values[o].data(), all.status.data(), spec.bootstrapResamples, spec.seed);
      } else {
        s.first = s.total = s.firstLow = s.firstHigh = s.totalLow = s.totalHigh =
            std::vector<double>(spec.vary.size(), kNaN);
        s.rows = rows;
        s.resamples = spec.bootstrapResamples;
        s.seed = spec.seed;
      }
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        undefined[i] = rows < 2                        ? "fewer than 2 healthy base rows"
                       : !parameterConstant[i].empty() ? parameterConstant[i]
                       : !(s.variance > 0)             ? (!outputConstant[o].empty()
                                                              ? outputConstant[o]
                                                              : "output '" + spec.outputs[o] +
                                                                    "' is constant over the healthy base rows")
                                                       : "";
        if (undefined[i].empty()) continue;
        s.first[i] = s.total[i] = s.firstLow[i] = s.firstHigh[i] = s.totalLow[i] = s.totalHigh[i] = kNaN;
      }
      r.sobol.push_back(std::move(s));
      r.sobolUndefined.push_back(std::move(undefined));
    }
  }
  if (spec.sensitivity == Sensitivity::Derivative) reduceDerivatives(spec, all, r);
  return r;
}

std::int64_t nextRoundWorlds(const StudySpec& spec, const StudyOutcomes& all) {
  const StoppingRule& u = spec.until;
  if (u.output.empty() || all.size() >= u.maxWorlds) return 0;
  const std::size_t o = std::find(spec.outputs.begin(), spec.outputs.end(), u.output) - spec.outputs.begin();
  if (o == spec.outputs.size()) throw std::invalid_argument("study: until: output '" + u.output + "' is not an output");
  return nextRoundWorlds(spec, all.size(), momentsOf(all.values[o].data(), all.size(), all.status.data()));
}

std::int64_t nextRoundWorlds(const StudySpec& spec, std::int64_t worlds, const Moments& m) {
  const StoppingRule& u = spec.until;
  if (u.output.empty() || worlds >= u.maxWorlds || shouldStop(m, u.ciHalfWidth).stop) return 0;
  return std::min(u.every > 0 ? u.every : spec.worlds, u.maxWorlds - worlds);
}

void OutputShare::add(std::int64_t first, const double* values, const std::int32_t* status, std::int64_t n) {
  for (std::int64_t i = 0; i < n;) {
    const std::int64_t w = first + i, block = w / kMomentBlock;
    const std::int64_t blockEnd = (block + 1) * kMomentBlock;  // first world of the next block
    const std::int64_t inBlock = std::min(blockEnd, first + n) - w;
    if (w % kMomentBlock == 0 && inBlock == kMomentBlock) {
      blocks.push_back({block, blockMoments(values + i, inBlock, status + i)});
    } else {
      for (std::int64_t k = 0; k < inBlock; ++k) loose.push_back({w + k, values[i + k], status[i + k]});
    }
    for (std::int64_t k = 0; k < inBlock; ++k)
      if (status[i + k] == 0) sketch.add(values[i + k]);
    i += inBlock;
  }
}

void OutputShare::encode(std::vector<double>& out) const {
  out.push_back(double(blocks.size()));
  for (const auto& [b, m] : blocks) out.insert(out.end(), {double(b), double(m.count), m.mean, m.M2, m.min, m.max});
  out.push_back(double(loose.size()));
  for (const Loose& l : loose) out.insert(out.end(), {double(l.world), l.value, double(l.status)});
  const QuantileSketch::Flat f = sketch.flatten();
  out.insert(out.end(), {f.alpha, double(f.count), double(f.nonFinite), f.min, f.max, double(f.buckets.size())});
  for (const auto& [key, count] : f.buckets) out.insert(out.end(), {double(key), double(count)});
}

OutputShare OutputShare::decode(const std::vector<double>& in, std::size_t& at) {
  auto next = [&]() {
    if (at >= in.size()) throw std::invalid_argument("OutputShare::decode: the data ends early");
    return in[at++];
  };
  auto whole = [&]() { return static_cast<std::int64_t>(next()); };
  OutputShare s;
  for (std::int64_t i = 0, n = whole(); i < n; ++i) {
    const std::int64_t b = whole();
    Moments m;
    m.count = whole();
    m.mean = next();
    m.M2 = next();
    m.min = next();
    m.max = next();
    s.blocks.push_back({b, m});
  }
  for (std::int64_t i = 0, n = whole(); i < n; ++i) {
    Loose l;
    l.world = whole();
    l.value = next();
    l.status = static_cast<std::int32_t>(whole());
    s.loose.push_back(l);
  }
  QuantileSketch::Flat f;
  f.alpha = next();
  f.count = whole();
  f.nonFinite = whole();
  f.min = next();
  f.max = next();
  for (std::int64_t i = 0, n = whole(); i < n; ++i) {
    const std::int64_t key = whole();
    f.buckets.push_back({key, whole()});
  }
  s.sketch = QuantileSketch::fromFlat(f);
  return s;
}

void MomentsAssembly::add(const OutputShare& share) {
  for (const auto& [b, m] : share.blocks) whole_[b] = m;
  for (const OutputShare::Loose& l : share.loose) loose_[l.world / kMomentBlock].push_back(l);
}

Moments MomentsAssembly::total(std::int64_t worlds) const {
  std::vector<Moments> blocks;
  for (std::int64_t b = 0; b < momentBlockCount(worlds); ++b) {
    if (const auto w = whole_.find(b); w != whole_.end()) {
      blocks.push_back(w->second);
      continue;
    }
    // A block run in parts: its worlds in world order, reduced as one block.
    std::vector<OutputShare::Loose> l = loose_.count(b) ? loose_.at(b) : std::vector<OutputShare::Loose>{};
    std::sort(l.begin(), l.end(), [](const auto& x, const auto& y) { return x.world < y.world; });
    const std::int64_t expected = std::min(worlds, (b + 1) * kMomentBlock) - b * kMomentBlock;
    if (std::int64_t(l.size()) != expected)
      throw std::logic_error("MomentsAssembly: block " + std::to_string(b) + " has " + std::to_string(l.size()) +
                             " of its " + std::to_string(expected) + " worlds");
    std::vector<double> v;
    std::vector<std::int32_t> st;
    for (const auto& x : l) {
      v.push_back(x.value);
      st.push_back(x.status);
    }
    blocks.push_back(blockMoments(v.data(), expected, st.data()));
  }
  return mergeBlocks(blocks);
}

}  // namespace lockstep
