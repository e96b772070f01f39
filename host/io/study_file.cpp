#include "lockstep/io/study_file.h"

#include <algorithm>
#include <filesystem>

#include "json_node.h"
#include "text_file.h"

namespace lockstep {

namespace {

using io::JsonNode;

std::string directoryOf(const std::string& path) {
  const std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

Variation readVariation(const JsonNode& n) {
  Variation v;
  v.parameter = n.at("parameter").string();
  const std::string kind = n.at("distribution").string();
  if (kind == "uniform") {
    n.expectObject({"parameter", "distribution", "low", "high", "min", "max"});
    v.distribution = Distribution::Uniform;
    v.a = n.at("low").number();
    v.b = n.at("high").number();
    if (v.b < v.a) n.at("high").fail("must be >= low");
  } else if (kind == "normal") {
    n.expectObject({"parameter", "distribution", "mean", "sd", "min", "max"});
    v.distribution = Distribution::Normal;
    v.a = n.at("mean").number();
    v.b = n.at("sd").nonNegative();
  } else if (kind == "lognormal") {
    n.expectObject({"parameter", "distribution", "mu", "sigma", "min", "max"});
    v.distribution = Distribution::LogNormal;
    v.a = n.at("mu").number();
    v.b = n.at("sigma").nonNegative();
  } else {
    n.at("distribution").fail("unknown distribution '" + kind + "' (expected uniform, normal or lognormal)" +
                              io::didYouMean(kind, {"uniform", "normal", "lognormal"}));
  }
  if (auto m = n.find("min")) v.min = m->number();
  if (auto m = n.find("max")) v.max = m->number();
  if (v.min > v.max) n.at("max").fail("must be >= min");
  return v;
}

// Reads the study object `s` (keys of a study file, "scene" excepted) onto a scene's defaults.
void readStudy(const JsonNode& s, StudyFile& f) {
  StudySpec& spec = f.spec;
  spec.worlds = f.scene.simulation.worlds;
  spec.steps = f.scene.simulation.steps;
  spec.dt = f.scene.simulation.dt;
  spec.integrator = f.scene.simulation.integrator;
  f.precision = "double";
  if (auto n = s.find("worlds")) spec.worlds = n->integer(1, std::int64_t(1) << 40);
  if (auto n = s.find("steps")) spec.steps = static_cast<int>(n->integer(0, 1 << 30));
  if (auto n = s.find("dt")) spec.dt = n->positive();
  if (auto n = s.find("integrator")) {
    const std::string i = n->string();
    if (i != "rk4" && i != "euler") n->fail("must be \"rk4\" or \"euler\"");
    spec.integrator = i == "rk4" ? Integrator::RK4 : Integrator::SemiImplicitEuler;
  }
  if (auto n = s.find("precision")) {
    f.precision = n->string();
    if (f.precision != "float" && f.precision != "double") n->fail("must be \"float\" or \"double\"");
  }
  if (auto n = s.find("seed")) spec.seed = static_cast<std::uint64_t>(n->integer(0, std::int64_t(1) << 62));
  if (auto n = s.find("vary"))
    for (const JsonNode& v : n->elements()) spec.vary.push_back(readVariation(v));
  const JsonNode outputs = s.at("outputs");
  for (const JsonNode& o : outputs.elements()) spec.outputs.push_back(o.string());
  if (spec.outputs.empty()) outputs.fail("name at least one output");
  if (auto n = s.find("quantiles")) {
    spec.quantiles.clear();
    for (const JsonNode& q : n->elements()) {
      const double x = q.number();
      if (x < 0 || x > 1) q.fail("must be in [0, 1]");
      spec.quantiles.push_back(x);
    }
  }
  if (auto n = s.find("histogram_bins")) spec.histogramBins = static_cast<int>(n->integer(1, 100000));
  if (auto n = s.find("until")) {
    n->expectObject({"output", "ci_half_width", "max_worlds", "every"});
    StoppingRule& u = spec.until;
    u.output = n->at("output").string();
    if (std::find(spec.outputs.begin(), spec.outputs.end(), u.output) == spec.outputs.end())
      n->at("output").fail("'" + u.output + "' is not one of the study's outputs" + io::didYouMean(u.output, spec.outputs));
    u.ciHalfWidth = n->at("ci_half_width").positive();
    u.maxWorlds = n->at("max_worlds").integer(1, std::int64_t(1) << 40);
    if (u.maxWorlds < spec.worlds)
      n->at("max_worlds").fail("must be at least the study's worlds (" + std::to_string(spec.worlds) + ")");
    if (auto e = n->find("every")) u.every = e->integer(1, std::int64_t(1) << 40);
  }
  if (auto n = s.find("sensitivity")) {
    const std::string kind = n->string();
    if (kind != "sobol" && kind != "derivative" && kind != "none")
      n->fail("must be \"sobol\", \"derivative\" or \"none\"" + io::didYouMean(kind, {"sobol", "derivative", "none"}));
    spec.sensitivity = kind == "sobol" ? Sensitivity::Sobol : kind == "derivative" ? Sensitivity::Derivative : Sensitivity::None;
    if (spec.sensitivity == Sensitivity::Derivative && spec.vary.empty())
      n->fail("a derivative study needs at least one variation in \"vary\"");
    if (spec.sensitivity == Sensitivity::Sobol && spec.vary.empty()) n->fail("a Sobol study needs at least one variation in \"vary\"");
    if (spec.sensitivity == Sensitivity::Sobol && s.has("until"))
      n->fail("a Sobol study runs its whole design: leave out \"until\"");
  }
  if (auto n = s.find("bootstrap_resamples")) spec.bootstrapResamples = static_cast<int>(n->integer(1, 1000000));
  // Names are checked against the model, each reported where it stands in the file: the outputs
  // first (each variation is probed with outputs[0]), then each variation, which must not repeat
  // an earlier one.
  StudySpec probe = spec;
  probe.until = {};
  probe.sensitivity = Sensitivity::None;
  probe.vary.clear();
  for (std::size_t i = 0; i < spec.outputs.size(); ++i) {
    probe.outputs = {spec.outputs[i]};
    try {
      validateStudy(f.scene.model, probe);
    } catch (const std::invalid_argument& e) {
      outputs.elements()[i].fail(e.what());
    }
  }
  probe.outputs = {spec.outputs[0]};
  for (std::size_t i = 0; i < spec.vary.size(); ++i) {
    const JsonNode parameter = s.at("vary").elements()[i].at("parameter");
    probe.vary = {spec.vary[i]};
    try {
      validateStudy(f.scene.model, probe);
    } catch (const std::invalid_argument& e) {
      parameter.fail(e.what());
    }
    for (std::size_t j = 0; j < i; ++j) {
      probe.vary = {spec.vary[j], spec.vary[i]};
      try {
        validateStudy(f.scene.model, probe);
      } catch (const std::invalid_argument&) {
        parameter.fail("'" + spec.vary[i].parameter + "' is already varied by vary[" + std::to_string(j) +
                       "]: vary each parameter once");
      }
    }
  }
}

}  // namespace

std::vector<Variation> parseVariations(const std::string& json, const std::string& source) {
  const nlohmann::json document = io::parseDocument(json, source);
  const JsonNode root(document, "", source);
  std::vector<Variation> vary;
  for (const JsonNode& v : root.elements()) vary.push_back(readVariation(v));
  return vary;
}

StudyFile parseStudy(const std::string& json, const std::string& source, const std::string& baseDirectory,
                     const SceneOptions& options) {
  const nlohmann::json document = io::parseDocument(json, source);
  const JsonNode root(document, "", source);
  StudyFile f;
  f.source = source;
  if (root.isObject() && root.has("study")) {
    // A scene file carrying its study.
    f.scene = parseScene(json, source, baseDirectory, options);
    const JsonNode s = root.at("study");
    s.expectObject({"worlds", "steps", "dt", "integrator", "precision", "seed", "vary", "outputs", "quantiles",
                    "histogram_bins", "until", "sensitivity", "bootstrap_resamples"});
    readStudy(s, f);
    return f;
  }
  root.expectObject({"scene", "worlds", "steps", "dt", "integrator", "precision", "seed", "vary", "outputs",
                     "quantiles", "histogram_bins", "until", "sensitivity", "bootstrap_resamples"});
  if (auto scene = root.find("scene")) {
    const std::string path = scene->string();
    const std::string resolved = std::filesystem::path(path).is_absolute()
                                     ? path
                                     : (std::filesystem::path(baseDirectory) / path).string();
    f.scene = loadSceneFile(resolved, options);
  } else {
    f.scene = loadBuiltinScene();
  }
  readStudy(root, f);
  return f;
}

StudyFile loadStudyFile(const std::string& path, const SceneOptions& options) {
  return parseStudy(io::readTextFile(path), path, directoryOf(path), options);
}

}  // namespace lockstep
