// What `lockstep study` writes about a study's statistics (PREFIX.json, PREFIX.csv), and what
// Python's run_study returns as its report: one text for both.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "lockstep/io/study_file.h"

namespace lockstep {

const char* distributionName(Distribution d) {
  return d == Distribution::Uniform ? "uniform" : d == Distribution::Normal ? "normal" : "lognormal";
}

namespace {

// A number for JSON, null when it is not finite (NaN: undefined, e.g. a constant outcome's rho).
nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace

std::string studyCsv(const StudySpec& spec, const StudyResult& r) {
  std::ostringstream out;
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
  return out.str();
}

std::string studyJson(const StudyFile& f, Backend backend, const StudyResult& r, bool sketched) {
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
  for (const OutputStats& s : r.outputs) {
    nlohmann::json o = {{"name", s.name}, {"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev},
                        {"min", s.min}, {"max", s.max}, {"standard_error", s.standardError},
                        {"ci95", {number(s.mean - s.ciHalfWidth), number(s.mean + s.ciHalfWidth)}},
                        {"ci95_half_width", number(s.ciHalfWidth)}, {"quantiles", s.quantiles},
                        {"histogram", s.histogram}};
    if (!s.undefined.empty()) o["reason"] = s.undefined;
    j["outputs"].push_back(o);
  }
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
    for (std::size_t o = 0; o < r.spearman[i].size(); ++o) {
      nlohmann::json e = {{"parameter", spec.vary[i].parameter}, {"output", spec.outputs[o]}, {"rho", number(r.spearman[i][o])}};
      if (!r.spearmanUndefined[i][o].empty()) e["reason"] = r.spearmanUndefined[i][o];
      j["spearman"].push_back(e);
    }
  if (spec.sensitivity == Sensitivity::Sobol) {
    j["sensitivity"] = {{"method", "sobol"},
                        {"base_rows", spec.worlds},
                        {"design_worlds", r.worlds},
                        {"bootstrap_resamples", spec.bootstrapResamples}};
    for (std::size_t o = 0; o < r.sobol.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        const SobolIndices& s = r.sobol[o];
        nlohmann::json e = {{"output", spec.outputs[o]},
                            {"parameter", spec.vary[i].parameter},
                            {"rows", s.rows},
                            {"first", number(s.first[i])},
                            {"first_ci95", {number(s.firstLow[i]), number(s.firstHigh[i])}},
                            {"total", number(s.total[i])},
                            {"total_ci95", {number(s.totalLow[i]), number(s.totalHigh[i])}}};
        if (!r.sobolUndefined[o][i].empty()) e["reason"] = r.sobolUndefined[o][i];
        j["sobol"].push_back(e);
      }
  }
  if (spec.sensitivity == Sensitivity::Derivative) {
    j["sensitivity"] = {{"method", "derivative"}, {"worlds", r.worlds}};
    for (std::size_t o = 0; o < r.dgsm.size(); ++o)
      for (std::size_t i = 0; i < spec.vary.size(); ++i) {
        nlohmann::json e = {{"output", spec.outputs[o]},
                            {"parameter", spec.vary[i].parameter},
                            {"dgsm", number(r.dgsm[o][i])},
                            {"total_index_bound", number(r.dgsmBound[o][i])}};
        if (!r.dgsmUndefined[o][i].empty()) e["reason"] = r.dgsmUndefined[o][i];
        j["dgsm"].push_back(e);
      }
  }
  return j.dump(2) + "\n";
}

}  // namespace lockstep
