#include "lockstep/study.h"

#include "lockstep/fields.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lockstep/statistics.h"

namespace lockstep {

namespace {

// splitmix64: a well-mixed 64-bit hash of a counter.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform number in (0, 1) for (seed, variation, world, draw).
double uniform01(std::uint64_t seed, int variation, std::int64_t world, int draw) {
  const std::uint64_t h = mix(mix(mix(seed) ^ (std::uint64_t(variation) * 0x632BE59BD9B4E019ull)) ^
                              (std::uint64_t(world) * 2 + std::uint64_t(draw)));
  return (double(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

[[noreturn]] void unknown(const char* what, const std::string& name) {
  throw std::invalid_argument(std::string("study: ") + what + " '" + name +
                              "' does not name anything in the model (see the names `lockstep info` lists and docs/study-format.md)");
}

// Where an output lives: a component of a world field (found by its public name in the field
// registry), or the sum of two components (energy.total).
struct OutputLocation {
  std::string field;
  std::int64_t component = 0;
  std::int64_t plusComponent = -1;
};

OutputLocation locateOutput(const Model& m, const std::string& name) {
  if (name == "energy.total") return {"energy", 0, 1};
  std::vector<FieldInfo> outcomes;  // what a run leaves in the world fields
  for (const FieldInfo& f : worldFields())
    if (!f.integer && (f.role == Role::State || f.role == Role::Evaluation || f.role == Role::Observation))
      outcomes.push_back(f);
  const std::optional<FieldComponent> c = findPublicName(m, outcomes, name);
  if (!c) unknown("output", name);
  return {c->field->name, c->component};
}

// A study input resolved once: a component of the initial state ("q.<coordinate>", "u.<speed>")
// or of a per-world parameter (the registry's public names).
struct StudyInput {
  bool initialState = false;
  FieldComponent component{};
};

StudyInput resolveInput(const Model& m, const std::string& name) {
  if (std::optional<FieldComponent> c = findPublicName(m, parameterFields(), name)) return {false, *c};
  for (const FieldInfo& f : worldFields()) {
    if (std::string(f.name) != "q" && std::string(f.name) != "u") continue;
    const std::vector<std::string> names = publicNames(m, f);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return {true, {&f, static_cast<std::int64_t>(i)}};
  }
  unknown("parameter", name);
}

template <class T>
void setInput(Batch<T>& batch, std::int64_t w, const StudyInput& in, double value) {
  if (!in.initialState) {
    batch.setParameter(w, in.component, value);
    return;
  }
  std::vector<double> q = batch.initialQ(w), u = batch.initialU(w);
  (std::string(in.component.field->name) == "q" ? q : u)[in.component.component] = value;
  batch.setInitialState(w, q, u);
  batch.setQ(w, q);
  batch.setU(w, u);
}

}  // namespace

Distribution parseDistribution(const std::string& s) {
  if (s == "uniform") return Distribution::Uniform;
  if (s == "normal") return Distribution::Normal;
  if (s == "lognormal" || s == "log-normal") return Distribution::LogNormal;
  throw std::invalid_argument("unknown distribution '" + s + "' (expected uniform, normal or lognormal)");
}

double sampleVariation(const Variation& v, std::uint64_t seed, int variationIndex, std::int64_t world) {
  const double u1 = uniform01(seed, variationIndex, world, 0);
  double x = 0;
  if (v.distribution == Distribution::Uniform) {
    x = v.a + (v.b - v.a) * u1;
  } else {
    // Box-Muller: a standard normal from two independent uniforms.
    const double u2 = uniform01(seed, variationIndex, world, 1);
    const double n = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    x = v.a + v.b * n;
    if (v.distribution == Distribution::LogNormal) x = std::exp(x);
  }
  return std::min(std::max(x, v.min), v.max);
}

template <class T>
void setNamedParameter(Batch<T>& batch, std::int64_t w, const std::string& name, double value) {
  setInput(batch, w, resolveInput(batch.model(), name), value);
}

void validateStudy(const std::shared_ptr<const Model>& modelPtr, const StudySpec& spec) {
  const Model& model = *modelPtr;
  if (spec.worlds < 1) throw std::invalid_argument("study: worlds: must be at least 1");
  if (spec.steps < 0) throw std::invalid_argument("study: steps: must be >= 0");
  if (!(spec.dt > 0) || !std::isfinite(spec.dt)) throw std::invalid_argument("study: dt: must be a positive number");
  if (spec.outputs.empty()) throw std::invalid_argument("study: outputs: name at least one output");
  if (spec.histogramBins < 1) throw std::invalid_argument("study: histogram bins: must be at least 1");
  for (double q : spec.quantiles)
    if (!(q >= 0 && q <= 1)) throw std::invalid_argument("study: quantiles: each must be in [0, 1]");
  for (const Variation& v : spec.vary) {
    if (!std::isfinite(v.a) || !std::isfinite(v.b))
      throw std::invalid_argument("study: variation '" + v.parameter + "': parameters must be finite");
    if (v.distribution == Distribution::Uniform && v.b < v.a)
      throw std::invalid_argument("study: variation '" + v.parameter + "': uniform needs low <= high");
    if (v.distribution != Distribution::Uniform && v.b < 0)
      throw std::invalid_argument("study: variation '" + v.parameter + "': standard deviation must be >= 0");
    if (v.min > v.max) throw std::invalid_argument("study: variation '" + v.parameter + "': min must be <= max");
    // Probe the name on a one-world batch: throws for unknown names.
    Batch<double> probe(modelPtr, 1);
    try {
      setNamedParameter(probe, 0, v.parameter, sampleVariation(v, spec.seed, 0, 0));
    } catch (const ModelError&) {
      // a valid name whose probe value is out of range: reported with the world at run time
    }
  }
  for (const std::string& o : spec.outputs) locateOutput(model, o);
}

OutputStats reduceValues(const std::string& name, const double* values, const std::int32_t* status, std::int64_t n,
                         const std::vector<double>& quantiles, int bins) {
  OutputStats s;
  s.name = name;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i)
    if (status[i] == 0) v.push_back(values[i]);
  std::sort(v.begin(), v.end());
  s.count = static_cast<std::int64_t>(v.size());
  s.histogram.assign(bins, 0);
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = sampleStddev(ss, s.count);
  s.min = v.front();
  s.max = v.back();
  for (double q : quantiles) {
    const QuantilePoint p = quantilePoint(q, s.count);
    s.quantiles.push_back(interpolateQuantile(p, v[p.lo], v[p.hi]));
  }
  for (double x : v) s.histogram[histogramBin(x, s.min, s.max - s.min, bins)] += 1;
  return s;
}

template <class T>
std::vector<double> outputValues(Batch<T>& batch, const std::string& output) {
  const OutputLocation loc = locateOutput(batch.model(), output);
  const FieldView f = batch.field(loc.field, MemorySpace::Host);
  const T* data = static_cast<const T*>(f.data);
  std::vector<double> out(batch.numWorlds());
  for (std::int64_t w = 0; w < batch.numWorlds(); ++w) {
    out[w] = double(data[w * f.worldStride + loc.component * f.componentStride]);
    if (loc.plusComponent >= 0) out[w] += double(data[w * f.worldStride + loc.plusComponent * f.componentStride]);
  }
  return out;
}

template <class T>
StudyResult runStudy(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                     const std::function<void(double, double)>& progress,
                     const std::function<void(Batch<T>&)>& setup) {
  validateStudy(model, spec);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  Batch<T> batch(model, spec.worlds, backend);
  if (setup) setup(batch);
  for (std::size_t i = 0; i < spec.vary.size(); ++i) {
    const Variation& v = spec.vary[i];
    const StudyInput input = resolveInput(*model, v.parameter);
    for (std::int64_t w = 0; w < spec.worlds; ++w) {
      const double x = sampleVariation(v, spec.seed, static_cast<int>(i), w);
      try {
        setInput(batch, w, input, x);
      } catch (const ModelError& e) {
        std::ostringstream os;
        os << "study: variation '" << v.parameter << "' drew " << x << " for world " << w << ": " << e.what()
           << " (bound the draws with min/max, or use a log-normal distribution for positive parameters)";
        throw ModelError(os.str());
      }
    }
  }
  batch.upload();
  if (!model->contacts().empty()) batch.assemble();
  const int chunk = std::max(1, spec.steps / 100);
  for (int done = 0; done < spec.steps;) {
    const int n = std::min(chunk, spec.steps - done);
    batch.step(spec.dt, n, spec.integrator);
    batch.synchronize();
    done += n;
    if (progress) progress(double(done) / spec.steps, elapsed());
  }
  batch.evaluate();
  batch.synchronize();

  StudyResult result;
  const bool device = backend == Backend::Cuda;
  const FieldView status = batch.field("status", device ? MemorySpace::Backend : MemorySpace::Host);
  if (!device) batch.download();
  for (const std::string& o : spec.outputs) {
    const OutputLocation loc = locateOutput(*model, o);
    if (device) {
      const FieldView f = batch.field(loc.field, MemorySpace::Backend);
      const T* base = static_cast<const T*>(f.data);
      result.outputs.push_back(reduceOnDevice(o, base + loc.component * f.componentStride,
                                              loc.plusComponent >= 0 ? base + loc.plusComponent * f.componentStride : nullptr,
                                              sizeof(T) == 4, static_cast<const std::int32_t*>(status.data),
                                              spec.worlds, spec.quantiles, spec.histogramBins));
    } else {
      const std::vector<double> values = outputValues(batch, o);
      result.outputs.push_back(reduceValues(o, values.data(), static_cast<const std::int32_t*>(status.data),
                                            spec.worlds, spec.quantiles, spec.histogramBins));
    }
  }
  if (device) batch.download();
  for (std::int64_t w = 0; w < spec.worlds; ++w) result.flaggedWorlds += batch.status(w) != 0;
  result.wallSeconds = elapsed();
  return result;
}

template void setNamedParameter<float>(Batch<float>&, std::int64_t, const std::string&, double);
template void setNamedParameter<double>(Batch<double>&, std::int64_t, const std::string&, double);
template std::vector<double> outputValues<float>(Batch<float>&, const std::string&);
template std::vector<double> outputValues<double>(Batch<double>&, const std::string&);
template StudyResult runStudy<float>(std::shared_ptr<const Model>, const StudySpec&, Backend,
                                     const std::function<void(double, double)>&,
                                     const std::function<void(Batch<float>&)>&);
template StudyResult runStudy<double>(std::shared_ptr<const Model>, const StudySpec&, Backend,
                                      const std::function<void(double, double)>&,
                                      const std::function<void(Batch<double>&)>&);

}  // namespace lockstep
