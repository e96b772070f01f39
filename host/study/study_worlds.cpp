// The worlds of a study: the names of its inputs and outputs (the field registry), its
// counter-based draws, its checks (validateStudy), and a piece of worlds run in chunks
// (runStudyWorlds).
#include "lockstep/study/study.h"
#include "lockstep/study/throughput.h"

#include "lockstep/engine/fields.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "lockstep/study/study_statistics.h"
#include "splitmix64.h"

namespace lockstep {

namespace {

// A uniform number in (0, 1) for (seed, variation, world, draw).
double uniform01(std::uint64_t seed, int variation, std::int64_t world, int draw) {
  const std::uint64_t h =
      splitmix64(splitmix64(splitmix64(seed) ^ (std::uint64_t(variation) * 0x632BE59BD9B4E019ull)) ^
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

bool sameInput(const StudyInput& a, const StudyInput& b) {
  return a.initialState == b.initialState && a.component.field == b.component.field &&
         a.component.component == b.component.component;
}

// A batch's message about its world `local` ("world 3 body 'link7': ...") without its leading
// "world <local>": the caller names the study's world.
std::string withoutLocalWorld(const std::string& message, std::int64_t local) {
  const std::string head = "world " + std::to_string(local);
  if (message.compare(0, head.size(), head) != 0) return message;
  std::size_t at = head.size();
  if (message.compare(at, 2, ": ") == 0) at += 2;
  else if (message.compare(at, 1, " ") == 0) at += 1;
  else return message;
  return message.substr(at);
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

// A derivative study's plan: where each varied value enters the derivatives of the state
// x = [q (tangent space, docs/derivatives.md); u] (a column of the linearization, or a row of the
// initial state), and which row of x each output is. -1: the derivatives do not reach it.
struct DerivativePlan {
  std::vector<std::string> params;  // the linearization's parameters: the varied per-world parameters
  std::vector<int> column;          // per variation: its index in params, or -1
  std::vector<int> initialRow;      // per variation: the row of x it starts, or -1
  std::vector<int> outputRow;       // per output: its row of x, or -1
};

// The row of x of coordinate c: its speed where qdot is u, a Free mobilizer's translation; -1 for a
// quaternion's coordinates.
int tangentRowOfCoordinate(const Model& m, int c) {
  for (const Body& b : m.bodies()) {
    const int k = c - b.qOffset;
    if (k < 0 || k >= b.nq) continue;
    if (mobilizerQdotIsU(b.mobilizer)) return b.uOffset + k;
    if (b.mobilizer == MobilizerType::Free && k >= 4) return b.uOffset + 3 + (k - 4);
    return -1;
  }
  return -1;
}

DerivativePlan derivativePlan(const Model& m, const StudySpec& spec, const std::vector<StudyInput>& inputs) {
  DerivativePlan plan;
  // The initial assembly onto sphere contacts is not differentiated: it moves the initial state,
  // and depends on the contacts' geometry.
  const bool assembles = !m.contacts().empty();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const StudyInput& in = inputs[i];
    int column = -1, row = -1;
    if (!in.initialState) {
      const std::string field = in.component.field->name;
      if (!(assembles && (field == "sphereCenters" || field == "sphereRadii" || field == "contactEnabled"))) {
        column = static_cast<int>(plan.params.size());
        plan.params.push_back(spec.vary[i].parameter);
      }
    } else if (!assembles) {
      const int c = static_cast<int>(in.component.component);
      row = std::string(in.component.field->name) == "q" ? tangentRowOfCoordinate(m, c) : m.nu() + c;
    }
    plan.column.push_back(column);
    plan.initialRow.push_back(row);
  }
  const std::vector<std::string> qNames = publicNames(m, *findField("q")), uNames = publicNames(m, *findField("u"));
  for (const std::string& o : spec.outputs) {
    int row = -1;
    for (std::size_t c = 0; c < qNames.size() && row < 0; ++c)
      if (qNames[c] == o) row = tangentRowOfCoordinate(m, static_cast<int>(c));
    for (std::size_t c = 0; c < uNames.size() && row < 0; ++c)
      if (uNames[c] == o) row = m.nu() + static_cast<int>(c);
    plan.outputRow.push_back(row);
  }
  return plan;
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

std::int64_t studyWorldCount(const StudySpec& spec, std::int64_t baseWorlds) {
  return spec.sensitivity == Sensitivity::Sobol ? baseWorlds * std::int64_t(spec.vary.size() + 2) : baseWorlds;
}

double studyDraw(const StudySpec& spec, int variation, std::int64_t world) {
  const Variation& v = spec.vary[variation];
  if (spec.sensitivity != Sensitivity::Sobol) return sampleVariation(v, spec.seed, variation, world);
  const int k = static_cast<int>(spec.vary.size());
  const SaltelliDesign design(k, world / (k + 2) + 1);  // enough base rows to hold the world
  return sampleVariation(v, spec.seed, variation, design.sampleIndex(world, variation));
}

void StudyOutcomes::append(const StudyOutcomes& more) {
  if (more.size() == 0) return;
  if (size() == 0 && values.empty()) {
    *this = more;
    return;
  }
  if (more.first != first + size() || more.values.size() != values.size())
    throw std::invalid_argument("StudyOutcomes::append: worlds from " + std::to_string(more.first) +
                                " do not follow worlds [" + std::to_string(first) + ", " +
                                std::to_string(first + size()) + ")");
  for (std::size_t o = 0; o < values.size(); ++o) values[o].insert(values[o].end(), more.values[o].begin(), more.values[o].end());
  if (more.gradients.size() != gradients.size())
    throw std::invalid_argument("StudyOutcomes::append: the worlds that follow carry other derivatives");
  for (std::size_t g = 0; g < gradients.size(); ++g)
    gradients[g].insert(gradients[g].end(), more.gradients[g].begin(), more.gradients[g].end());
  status.insert(status.end(), more.status.begin(), more.status.end());
}

template <class T>
void setNamedParameter(Batch<T>& batch, std::int64_t w, const std::string& name, double value) {
  setInput(batch, w, resolveInput(batch.model(), name), value);
}

BatchMemory studyExtraBytesPerWorld(const Model& model, const StudySpec& spec, Precision precision, Backend backend) {
  BatchMemory extra;
  if (spec.sensitivity != Sensitivity::Derivative) return extra;
  const std::int64_t nx = 2 * std::int64_t(model.nu()), nv = static_cast<std::int64_t>(spec.vary.size());
  const std::int64_t jacobian = nx * (3 * std::int64_t(model.nu()) + nv) * (precision == Precision::Float ? 4 : 8);
  extra.hostBytes = jacobian + nx * nv * 8;
  if (backend == Backend::Cuda) extra.deviceBytes = jacobian;
  return extra;
}

std::int64_t studyWorldsThatFit(const Model& model, const StudySpec& spec, Precision precision, Backend backend,
                                int cpuThreads, const MemoryAvailable& available, double fraction) {
  const BatchMemory extra = studyExtraBytesPerWorld(model, spec, precision, backend);
  MemoryAvailable have = available;
  if (spec.sensitivity == Sensitivity::Derivative && backend == Backend::Cuda)
    have.deviceBytes = std::max<std::int64_t>(0, have.deviceBytes - (std::int64_t(1) << 30));  // the dual worlds
  // Each need is fixed + perWorld * worlds: solve for worlds in each memory.
  const BatchMemory one = batchMemory(model, precision, 1, backend, cpuThreads);
  const BatchMemory two = batchMemory(model, precision, 2, backend, cpuThreads);
  auto most = [fraction](std::int64_t oneWorld, std::int64_t twoWorlds, std::int64_t perWorldExtra, std::int64_t bytes) {
    const double perWorld = double(twoWorlds - oneWorld) + double(perWorldExtra);
    const double fixed = double(oneWorld) - double(twoWorlds - oneWorld);
    const double n = perWorld > 0 ? std::floor((fraction * double(bytes) - fixed) / perWorld) : 9.3e18;
    return n < 1 ? std::int64_t(0) : n > 9e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(n);
  };
  std::int64_t n = most(one.hostBytes, two.hostBytes, extra.hostBytes, have.hostBytes);
  if (backend == Backend::Cuda) n = std::min(n, most(one.deviceBytes, two.deviceBytes, extra.deviceBytes, have.deviceBytes));
  return n;
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
  if (spec.chunk < 0) throw std::invalid_argument("study: chunk: must be >= 0 (0: one batch)");
  if (!spec.until.output.empty()) {
    const StoppingRule& u = spec.until;
    if (std::find(spec.outputs.begin(), spec.outputs.end(), u.output) == spec.outputs.end())
      throw std::invalid_argument("study: until: output '" + u.output + "' is not one of the study's outputs");
    if (!(u.ciHalfWidth > 0) || !std::isfinite(u.ciHalfWidth))
      throw std::invalid_argument("study: until: ci_half_width must be a positive number");
    if (u.maxWorlds < spec.worlds)
      throw std::invalid_argument("study: until: max_worlds must be at least the study's worlds (" +
                                  std::to_string(spec.worlds) + ")");
    if (u.every < 0) throw std::invalid_argument("study: until: every must be >= 1");
    if (spec.sensitivity == Sensitivity::Sobol)
      throw std::invalid_argument("study: until: a Sobol study runs its whole design (leave out \"until\")");
  }
  if (spec.sensitivity == Sensitivity::Sobol && spec.vary.empty())
    throw std::invalid_argument("study: sensitivity: a Sobol study needs at least one variation");
  if (spec.sensitivity == Sensitivity::Derivative && spec.vary.empty())
    throw std::invalid_argument("study: sensitivity: a derivative study needs at least one variation");
  if (spec.bootstrapResamples < 1) throw std::invalid_argument("study: bootstrap resamples: must be at least 1");
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
      // A non-finite draw is the run's to report, with its world; the probe checks the name.
      const double x = sampleVariation(v, spec.seed, 0, 0);
      setNamedParameter(probe, 0, v.parameter, std::isfinite(x) ? x : 0.0);
    } catch (const ModelError&) {
      // a valid name whose probe value is out of range: reported with the world at run time
    }
  }
  for (const std::string& o : spec.outputs) locateOutput(model, o);
  // A value varied twice would take the later draws only, while both were reported.
  for (std::size_t i = 0; i < spec.vary.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (sameInput(resolveInput(model, spec.vary[i].parameter), resolveInput(model, spec.vary[j].parameter)))
        throw std::invalid_argument("study: vary[" + std::to_string(i) + "] ('" + spec.vary[i].parameter +
                                    "') varies the value vary[" + std::to_string(j) + "] ('" + spec.vary[j].parameter +
                                    "') already varies");
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
StudyOutcomes runStudyWorlds(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                             std::int64_t first, std::int64_t count, const std::function<void(double, double)>& progress,
                             const StudySetup<T>& setup) {
  validateStudy(model, spec);
  if (first < 0 || count < 0) throw std::invalid_argument("runStudyWorlds: first and count must be >= 0");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::vector<StudyInput> inputs;
  for (const Variation& v : spec.vary) inputs.push_back(resolveInput(*model, v.parameter));
  std::vector<OutputLocation> outputs;
  for (const std::string& o : spec.outputs) outputs.push_back(locateOutput(*model, o));

  const bool derivatives = spec.sensitivity == Sensitivity::Derivative;
  const DerivativePlan plan = derivatives ? derivativePlan(*model, spec, inputs) : DerivativePlan{};

  StudyOutcomes out;
  out.first = first;
  out.values.assign(spec.outputs.size(), {});
  if (derivatives) out.gradients.assign(spec.outputs.size() * spec.vary.size(), {});
  for (std::vector<double>& v : out.values) v.reserve(static_cast<std::size_t>(count));
  out.status.reserve(static_cast<std::size_t>(count));
  const std::int64_t chunk = spec.chunk > 0 ? std::min(spec.chunk, count) : count;
  for (std::int64_t done = 0; done < count;) {
    // One chunk: worlds [w0, w0 + n) of the study in a batch of its own (freed before the next).
    const std::int64_t n = std::min(chunk, count - done), w0 = first + done;
    Batch<T> batch(model, n, backend, CpuOptions{spec.cpuThreads});
    if (setup) setup(batch, w0);
    for (std::size_t i = 0; i < spec.vary.size(); ++i) {
      for (std::int64_t w = 0; w < n; ++w) {
        const double x = studyDraw(spec, static_cast<int>(i), w0 + w);
        try {
          setInput(batch, w, inputs[i], x);
        } catch (const std::invalid_argument& e) {  // a value the model refuses (ModelError), or a non-finite state
          std::ostringstream os;
          os << "study: variation '" << spec.vary[i].parameter << "' drew " << x << " for world " << w0 + w << ": "
             << withoutLocalWorld(e.what(), w) << " (bound the draws with min/max, or use a log-normal distribution for positive parameters)";
          throw ModelError(os.str());
        }
      }
    }
    batch.upload();
    if (!model->contacts().empty()) batch.assemble();
    const int piece = progress ? std::max(1, spec.steps / 100) : std::max(1, spec.steps);  // steps per call
    // A derivative study: each world's S = d x / d (varied values), 2nu x vary, from its initial
    // rows, carried step by step: S <- A S + C (A, C of the step's linearization).
    const int nx = 2 * model->nu(), nv = static_cast<int>(spec.vary.size());
    std::vector<double> S;
    if (derivatives) {
      S.assign(static_cast<std::size_t>(n) * nx * nv, 0.0);
      for (std::int64_t w = 0; w < n; ++w)
        for (int v = 0; v < nv; ++v)
          if (plan.initialRow[v] >= 0) S[(std::size_t(w) * nx + plan.initialRow[v]) * nv + v] = 1.0;
    }
    std::vector<double> next(static_cast<std::size_t>(nx) * nv);
    for (int steps = 0; steps < spec.steps;) {
      const int k = derivatives ? 1 : std::min(piece, spec.steps - steps);
      if (derivatives) {
        batch.linearize(spec.dt, spec.integrator, plan.params);
        const FieldView J = batch.jacobianView(MemorySpace::Host);
        const T* jac = static_cast<const T*>(J.data);
        const int columns = batch.jacobianShape().columns, nu = model->nu();
        for (std::int64_t w = 0; w < n; ++w) {
          double* Sw = &S[std::size_t(w) * nx * nv];
          auto entry = [&](int r, int c) { return double(jac[(std::int64_t(r) * columns + c) * n + w]); };
          for (int r = 0; r < nx; ++r)
            for (int v = 0; v < nv; ++v) {
              double x = plan.column[v] >= 0 ? entry(r, 3 * nu + plan.column[v]) : 0.0;
              for (int c = 0; c < nx; ++c) x += entry(r, c) * Sw[c * nv + v];
              next[std::size_t(r) * nv + v] = x;
            }
          std::copy(next.begin(), next.end(), Sw);
        }
      }
      batch.step(spec.dt, k, spec.integrator);
      batch.synchronize();
      steps += k;
      if (progress && (!derivatives || steps % piece == 0 || steps == spec.steps))
        progress((double(done) + double(n) * steps / spec.steps) / double(count), elapsed());
    }
    batch.evaluate();
    batch.synchronize();
    batch.download();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const std::vector<double> v = outputValues(batch, spec.outputs[o]);
      out.values[o].insert(out.values[o].end(), v.begin(), v.end());
    }
    for (std::int64_t w = 0; w < n; ++w) out.status.push_back(batch.status(w));
    if (derivatives) {
      for (std::size_t o = 0; o < outputs.size(); ++o)
        for (int v = 0; v < nv; ++v) {
          std::vector<double>& g = out.gradients[o * nv + v];
          const int row = plan.outputRow[o];
          const bool reached = row >= 0 && (plan.column[v] >= 0 || plan.initialRow[v] >= 0);
          for (std::int64_t w = 0; w < n; ++w)
            g.push_back(reached ? S[(std::size_t(w) * nx + row) * nv + v] : std::numeric_limits<double>::quiet_NaN());
        }
    }
    done += n;
    if (progress && spec.steps == 0) progress(double(done) / double(count), elapsed());
  }
  return out;
}

template void setNamedParameter<float>(Batch<float>&, std::int64_t, const std::string&, double);
template void setNamedParameter<double>(Batch<double>&, std::int64_t, const std::string&, double);
template std::vector<double> outputValues<float>(Batch<float>&, const std::string&);
template std::vector<double> outputValues<double>(Batch<double>&, const std::string&);
template StudyOutcomes runStudyWorlds<float>(std::shared_ptr<const Model>, const StudySpec&, Backend, std::int64_t,
                                             std::int64_t, const std::function<void(double, double)>&,
                                             const StudySetup<float>&);
template StudyOutcomes runStudyWorlds<double>(std::shared_ptr<const Model>, const StudySpec&, Backend, std::int64_t,
                                              std::int64_t, const std::function<void(double, double)>&,
                                              const StudySetup<double>&);

}  // namespace lockstep
