// lockstep_opcount: counts the arithmetic and the per-world memory accesses of one world's forward
// dynamics and RK4 step, stage by stage, by running the engine's own per-world code (the same
// templates the CUDA kernels and the CPU backend instantiate) on a counting scalar, and from them
// the bytes a world-step moves through device memory (the bytes model, bench/README.md).
//
//   lockstep_opcount [--budget FILE] [scene ...]
//       scenes of bench_scenes.h, scenes of scenes/ by name (humanoid, ant, ...) or scene files;
//       default chain-7 chain-32 chain-7-seed. --budget FILE (bench/bytes_budget.txt): exit 1 when
//       today's bytes per world-step of a scene and precision exceed its budget.
//
// The scalar F holds a double and counts every +, -, *, / and every sqrt, sin/cos and atan2 it is
// given; unary minus and comparisons are not counted (they fold into other instructions).
// Memory: every access through a Strided<F> view (Strided is specialized for F below) is classified
// by the address it touches:
//   scratch  the world's workspace (WorkspaceLayout; in global memory on the GPU, strided by worlds)
//   fields   the world's state, inputs and outputs (LOCKSTEP_WORLD_FIELDS)
//   params   the parameters, shared by all worlds here (one broadcast address per warp on the GPU)
// A write is an assignment (=, +=, ...) to a scalar of one of these regions; every other access is a
// read. The model's constant arrays (topology, X_PF, X_BM) are read through plain pointers and not
// counted; they are the same for every world. The counts are those of the source: a compiler may
// merge repeated loads of one address where it can prove no store intervenes, so they bound the
// memory instructions from above.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/physics/layout.h"

// ---- the counting scalar -------------------------------------------------------------------------

namespace lockstep::opcount {

struct Counts {
  std::int64_t add = 0, mul = 0, div = 0, sqrt = 0, sincos = 0, atan2 = 0;
  std::int64_t read[3] = {0, 0, 0}, write[3] = {0, 0, 0};  // scratch, fields, params
  std::int64_t flops() const { return add + mul + div + sqrt; }
  Counts operator-(const Counts& b) const {
    Counts r;
    r.add = add - b.add;
    r.mul = mul - b.mul;
    r.div = div - b.div;
    r.sqrt = sqrt - b.sqrt;
    r.sincos = sincos - b.sincos;
    r.atan2 = atan2 - b.atan2;
    for (int i = 0; i < 3; ++i) {
      r.read[i] = read[i] - b.read[i];
      r.write[i] = write[i] - b.write[i];
    }
    return r;
  }
};
Counts g;

// Memory regions whose accesses are counted: [begin, end) of scalars.
struct Region {
  const void* begin = nullptr;
  const void* end = nullptr;
};
Region gRegion[3];
enum { kScratch = 0, kFields = 1, kParams = 2 };

int regionOf(const void* p) {
  for (int r = 0; r < 3; ++r)
    if (p >= gRegion[r].begin && p < gRegion[r].end) return r;
  return -1;
}

// Which scalars of each region were read (bit 1) or written (bit 2) since the last reset: the
// distinct footprint of a call.
std::vector<unsigned char> gTouched[3];
void touch(int r, const void* p, unsigned char bit);
// C++17 evaluates the right side of an assignment first, so the last reference a view handed out
// before F::operator= runs is the one assigned to: its read is taken back.
void untouchLastRead(const void* p);

struct F;
void noteWrite(const F* p);
void noteAssign(const F* p);

struct F {
  double v;
  F() = default;
  constexpr F(double x) : v(x) {}
  F(const F&) = default;
  // Needed where the engine calls a float/double-only helper (Rotation's epsilonOf).
  operator double() const { return v; }
  F& operator=(const F& b) {
    noteAssign(this);
    v = b.v;
    return *this;
  }
  F& operator+=(F b) {
    noteWrite(this);
    ++g.add;
    v += b.v;
    return *this;
  }
  F& operator-=(F b) {
    noteWrite(this);
    ++g.add;
    v -= b.v;
    return *this;
  }
  F& operator*=(F b) {
    noteWrite(this);
    ++g.mul;
    v *= b.v;
    return *this;
  }
  F& operator/=(F b) {
    noteWrite(this);
    ++g.div;
    v /= b.v;
    return *this;
  }
};

// Compound assignments read (counted by the view that handed out the reference) and write.
void noteWrite(const F* p) {
  const int r = regionOf(p);
  if (r >= 0) {
    ++g.write[r];
    touch(r, p, 2);
  }
}
// A plain assignment only writes: the view counted a read when it handed out the reference.
void noteAssign(const F* p) {
  const int r = regionOf(p);
  if (r >= 0) {
    ++g.write[r];
    --g.read[r];
    untouchLastRead(p);
    touch(r, p, 2);
  }
}

inline F operator+(F a, F b) {
  ++g.add;
  return a.v + b.v;
}
inline F operator-(F a, F b) {
  ++g.add;
  return a.v - b.v;
}
inline F operator*(F a, F b) {
  ++g.mul;
  return a.v * b.v;
}
inline F operator/(F a, F b) {
  ++g.div;
  return a.v / b.v;
}
inline F operator-(F a) { return -a.v; }
inline bool operator<(F a, F b) { return a.v < b.v; }
inline bool operator>(F a, F b) { return a.v > b.v; }
inline bool operator<=(F a, F b) { return a.v <= b.v; }
inline bool operator>=(F a, F b) { return a.v >= b.v; }
inline bool operator==(F a, F b) { return a.v == b.v; }
inline bool operator!=(F a, F b) { return a.v != b.v; }
#define LOCKSTEP_OPCOUNT_MIXED(op, ret)                                      \
  template <class A, class = std::enable_if_t<std::is_arithmetic<A>::value>> \
  inline ret operator op(F a, A b) {                                         \
    return a op F(double(b));                                                \
  }                                                                          \
  template <class A, class = std::enable_if_t<std::is_arithmetic<A>::value>> \
  inline ret operator op(A a, F b) {                                         \
    return F(double(a)) op b;                                                \
  }
LOCKSTEP_OPCOUNT_MIXED(+, F)
LOCKSTEP_OPCOUNT_MIXED(-, F)
LOCKSTEP_OPCOUNT_MIXED(*, F)
LOCKSTEP_OPCOUNT_MIXED(/, F)
LOCKSTEP_OPCOUNT_MIXED(<, bool)
LOCKSTEP_OPCOUNT_MIXED(>, bool)
LOCKSTEP_OPCOUNT_MIXED(<=, bool)
LOCKSTEP_OPCOUNT_MIXED(>=, bool)
LOCKSTEP_OPCOUNT_MIXED(==, bool)
LOCKSTEP_OPCOUNT_MIXED(!=, bool)
#undef LOCKSTEP_OPCOUNT_MIXED

// Found by argument-dependent lookup from the engine's templates.
inline F sqrtT(F x) {
  ++g.sqrt;
  return std::sqrt(x.v);
}
inline F sinT(F x) {
  ++g.sincos;
  return std::sin(x.v);
}
inline F cosT(F x) {
  ++g.sincos;
  return std::cos(x.v);
}
inline F atan2T(F y, F x) {
  ++g.atan2;
  return std::atan2(y.v, x.v);
}
inline F absT(F x) { return std::fabs(x.v); }
inline bool isFiniteT(F x) { return std::isfinite(x.v); }

// A view handed out a reference to *p: a read, unless F::operator= turns it into a write (the
// footprint then records a read that did not happen only if the scalar was never read otherwise;
// fetching a line to write part of it costs the same on a GPU).
inline void noteRead(const F* p) {
  const int r = regionOf(p);
  if (r >= 0) {
    ++g.read[r];
    touch(r, p, 1);
  }
}

struct LastRead {
  const void* p = nullptr;
  int region = -1;
  unsigned char before = 0;
};
LastRead gLastRead;

void touch(int r, const void* p, unsigned char bit) {
  const std::size_t i = static_cast<std::size_t>(static_cast<const F*>(p) - static_cast<const F*>(gRegion[r].begin));
  if (gTouched[r].size() <= i) gTouched[r].resize(i + 1, 0);
  if (bit == 1) gLastRead = {p, r, gTouched[r][i]};
  gTouched[r][i] |= bit;
}

void untouchLastRead(const void* p) {
  if (gLastRead.p != p) return;
  const int r = gLastRead.region;
  const std::size_t i = static_cast<std::size_t>(static_cast<const F*>(p) - static_cast<const F*>(gRegion[r].begin));
  gTouched[r][i] = gLastRead.before;
  gLastRead.p = nullptr;
}

}  // namespace lockstep::opcount

// ---- strided views of counted scalars --------------------------------------------------------------

namespace lockstep {

template <>
struct Strided<const opcount::F> {
  const opcount::F* p;
  std::int64_t stride;
  const opcount::F& operator[](std::int64_t i) const {
    opcount::noteRead(p + i * stride);
    return p[i * stride];
  }
  Strided operator+(std::int64_t k) const { return {p + k * stride, stride}; }
};

// A mutable view hands out plain references (the engine returns them as T&), so every access is
// counted as a read here and a plain assignment (F::operator=) turns it into a write.
template <>
struct Strided<opcount::F> {
  opcount::F* p;
  std::int64_t stride;
  opcount::F& operator[](std::int64_t i) const {
    opcount::noteRead(p + i * stride);
    return p[i * stride];
  }
  Strided operator+(std::int64_t k) const { return {p + k * stride, stride}; }
  operator Strided<const opcount::F>() const { return {p, stride}; }
};

}  // namespace lockstep

#include "bench_scenes.h"
#include "lockstep/io/scene.h"
#include "lockstep/physics/world.h"

namespace lockstep::opcount {
namespace {

// One world of a scene in counted scalars: fields, parameters and workspace in three regions.
struct CountedWorld {
  explicit CountedWorld(const bench::BenchScene& scene) : source(scene.model, 1, Backend::Cpu) {
    source.setAllStates(scene.q0, scene.u0);
    if (scene.assemble) source.assemble();
    const Sizes s = source.sizes();
    layout = WorkspaceLayout::of(s);
    const BatchView<double> src = source.hostView();

    std::int64_t nFields = 0, nParams = 0;
    using T = F;  // the field lists name their scalar type T
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) nFields += std::is_same<type, F>::value ? (fieldCount(s, per, parts)) : 0;
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) nParams += (fieldCount(s, per, parts));
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    fields.reserve(nFields + 1);
    params.reserve(nParams + 1);
    status.assign(1, 0);
    view.nWorlds = 1;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) view.name = take(src.name, (fieldCount(s, per, parts)));
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) view.name = {takeParam(src.name.data, (fieldCount(s, per, parts))), 0, 1};
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    scratch.assign(layout.total + 1, F(0.0));

    const ModelView<double> m = source.hostModelView();
    for (int b = 0; b < s.nb; ++b) {
      X_PF.push_back(castTransform<F>(m.X_PF[b]));
      X_MB.push_back(castTransform<F>(m.X_MB[b]));
    }
    model = m.withFrames(X_PF.data(), X_MB.data());

    gRegion[kScratch] = {scratch.data(), scratch.data() + scratch.size()};
    gRegion[kFields] = {fields.data(), fields.data() + fields.size()};
    gRegion[kParams] = {params.data(), params.data() + params.size()};
  }

  F* take(const double* src, std::int64_t n) {
    F* p = fields.data() + fields.size();
    for (std::int64_t i = 0; i < n; ++i) fields.push_back(F(src[i]));
    return p;
  }
  std::int32_t* take(const std::int32_t*, std::int64_t) { return status.data(); }
  const F* takeParam(const double* src, std::int64_t n) {
    const F* p = params.data() + params.size();
    for (std::int64_t i = 0; i < n; ++i) params.push_back(F(src[i]));
    return p;
  }

  Workspace<F> workspace() { return {layout, {scratch.data(), 1}}; }
  WorldView<F> world() { return view.world(0); }

  Batch<double> source;
  WorkspaceLayout layout;
  std::vector<F> fields, params, scratch;
  std::vector<std::int32_t> status;
  std::vector<Transform<F>> X_PF, X_MB;
  BatchView<F> view;
  ModelView<F> model;
};

// Distinct scalars of each region a call read and wrote.
struct Footprint {
  std::int64_t read[3] = {0, 0, 0}, written[3] = {0, 0, 0}, touched[3] = {0, 0, 0};
};

struct Row {
  std::string what;
  Counts c;
  Footprint f;
};

// NVIDIA H100 SXM5 80 GB datasheet rates (non-tensor): the floors below use these. The workplace's
// H100 measured about 3.0 TB/s on a device-to-device copy (.library/device/KINDS.md).
constexpr double kH100Fp32FlopsPerSecond = 67e12;
constexpr double kH100Fp64FlopsPerSecond = 34e12;
constexpr double kH100BytesPerSecond = 3.35e12;

void print(const std::string& scene, const CountedWorld& w, const std::vector<Row>& rows) {
  std::printf("\n%s: nb %d, nq %d, nu %d, nc %d; workspace %lld scalars per world\n", scene.c_str(), w.model.sizes.nb,
              w.model.sizes.nq, w.model.sizes.nu, w.model.sizes.nc, static_cast<long long>(w.layout.total));
  std::printf("%-34s %7s %7s %5s %5s %6s %5s %8s | %7s %7s %7s %7s %6s %6s | %s\n", "stage", "add/sub", "mul", "div",
              "sqrt", "sincos", "atan2", "flops", "scr rd", "scr wr", "fld rd", "fld wr", "par rd", "par wr",
              "distinct scr rd/wr, fld rd/wr, par rd");
  for (const Row& r : rows) {
    const Counts& c = r.c;
    std::printf("%-34s %7lld %7lld %5lld %5lld %6lld %5lld %8lld | %7lld %7lld %7lld %7lld %6lld %6lld", r.what.c_str(),
                (long long)c.add, (long long)c.mul, (long long)c.div, (long long)c.sqrt, (long long)c.sincos,
                (long long)c.atan2, (long long)c.flops(), (long long)c.read[kScratch], (long long)c.write[kScratch],
                (long long)c.read[kFields], (long long)c.write[kFields], (long long)c.read[kParams],
                (long long)c.write[kParams]);
    const Footprint& f = r.f;
    if (f.touched[kScratch] + f.touched[kFields] + f.touched[kParams] > 0)
      std::printf(" | %lld/%lld, %lld/%lld, %lld", (long long)f.read[kScratch], (long long)f.written[kScratch],
                  (long long)f.read[kFields], (long long)f.written[kFields], (long long)f.read[kParams]);
    std::printf("\n");
  }
}

Footprint gFootprint;

template <class Fn>
Counts count(Fn&& fn) {
  for (auto& t : gTouched) t.assign(t.size(), 0);
  const Counts before = g;
  fn();
  gFootprint = {};
  for (int r = 0; r < 3; ++r)
    for (unsigned char t : gTouched[r]) {
      gFootprint.read[r] += (t & 1) != 0;
      gFootprint.written[r] += (t & 2) != 0;
      gFootprint.touched[r] += t != 0;
    }
  return g - before;
}

template <class Fn>
Row measure(std::string what, Fn&& fn) {
  Row r{std::move(what), count(fn), {}};
  r.f = gFootprint;
  return r;
}

// The bytes one world moves through device memory in one RK4 step (observations, written once per
// step call, apart), for one scalar size; see "The bytes model" in bench/README.md.
struct BytesModel {
  double stateOnly = 0;   // the state the step reads and writes, once: the floor of any design
  double today = 0;       // today's design: every stage fetches and writes back its own footprint
  double perWorldParams = 0;  // what today's design adds when every parameter differs per world
  double everyAccess = 0;     // every access of the source from device memory: the upper bound
};

// A scene and precision's budget of today's bytes per world-step (bench/bytes_budget.txt).
struct Budget {
  std::string scene, precision;
  double bytes = 0;
};

struct SceneResult {
  std::string name;
  std::int64_t flops = 0;
  BytesModel bytes[2];  // float, double
};

SceneResult countScene(const std::string& name, const bench::BenchScene& scene, double dt) {
  CountedWorld w(scene);
  const Workspace<F> ws = w.workspace();
  const WorldView<F> world = w.world();
  const Sizes& s = w.model.sizes;
  const Strided<F> ydot = ws.ydot();
  std::vector<Row> stages;

  // The stages of one evaluation, in the order computeStateDerivative runs them; each is a pass
  // over the workspace in device memory today (one thread per world, nothing kept between stages).
  stages.push_back(measure("kinematics", [&] { computeKinematics<F>(w.model, world.params, world.q, world.u, ws); }));
  stages.push_back(
      measure("forces", [&] { computeForces<F>(w.model, world, world.u, ws, ydot + (s.nq + s.nu)); }));
  stages.push_back(
      measure("sweep: factor (IA, U, D^-1)", [&] { factorArticulatedInertias<F>(w.model, world.params, ws); }));
  stages.push_back(measure("sweep: solve (pA, udot, A)", [&] {
    solveArticulated<F>(w.model, ws, ws.Fb(), ws.tauTotal(), true, ydot + s.nq, ws.A_GB());
  }));
  stages.push_back(
      measure("constraints", [&] { solveConstraints<F>(w.model, world.params, ws, ydot + s.nq, ws.lambda()); }));
  stages.push_back(measure("qdot", [&] {
    computeQdot(w.model, Strided<const F>(world.q), Strided<const F>(world.u), ydot);
  }));
  std::vector<Row> rows = stages;
  const Row fd = measure("= one evaluation (fd)", [&] { computeStateDerivative<F>(w.model, world, ws); });
  Counts staged;
  for (const Row& r : stages) staged = staged - (Counts{} - r.c);
  rows.push_back({"(rest of the evaluation)", fd.c - staged, {}});
  rows.push_back(fd);
  // One step without the observations, which Batch::step writes once per call (counted apart).
  const StepSettings<F> settings{F(dt), 1, Integrator::RK4, F(1e-10), 20, false, false};
  const Row step = measure("= one RK4 step", [&] { advanceWorld<F>(w.model, world, ws, settings); });
  Counts fourFd;
  for (int k = 0; k < 4; ++k) fourFd = fourFd - (Counts{} - fd.c);
  const Counts integrator = step.c - fourFd;
  rows.push_back({"integrator, projection (step - 4 fd)", integrator, {}});
  rows.push_back(step);
  rows.push_back(measure("observations (once per step call)", [&] { observeWorld<F>(w.model, world, ws); }));
  print(name, w, rows);
  const Footprint& f = step.f;
  std::printf(
      "distinct scalars of one RK4 step: scratch %lld touched (%lld read, %lld written); fields %lld read, "
      "%lld written; params %lld read\n",
      (long long)f.touched[kScratch], (long long)f.read[kScratch], (long long)f.written[kScratch],
      (long long)f.read[kFields], (long long)f.written[kFields], (long long)f.read[kParams]);

  // The bytes model (scalars, then bytes; the status word is 4 bytes read once per step):
  //   state only     each field the step reads fetched once, each it changes written once
  //   today          4 evaluations x the sum over their stages of each stage's distinct workspace and
  //                  field scalars read and written (a stage fetches what it reads and writes back
  //                  what it writes; nothing stays on chip from one stage to the next), plus every
  //                  access of the integrator and the projection (short loops touching each scalar
  //                  about once)
  //   params         the same for the parameters, were every one per world (today the scenes share
  //                  their defaults: one broadcast address per warp, 0 bytes per world)
  //   every access   every access of the source goes to device memory (no cache hits)
  std::int64_t stageScalars = 0, stageParams = 0;
  for (const Row& r : stages) {
    stageScalars += r.f.read[kScratch] + r.f.written[kScratch] + r.f.read[kFields] + r.f.written[kFields];
    stageParams += r.f.read[kParams];
  }
  const std::int64_t stateScalars = f.read[kFields] + f.written[kFields];
  const std::int64_t todayScalars = 4 * stageScalars + integrator.read[kScratch] + integrator.write[kScratch] +
                                    integrator.read[kFields] + integrator.write[kFields];
  const std::int64_t paramScalars = 4 * stageParams + integrator.read[kParams];
  const std::int64_t everyScalars =
      step.c.read[kScratch] + step.c.write[kScratch] + step.c.read[kFields] + step.c.write[kFields];
  SceneResult result{name, step.c.flops(), {}};
  std::printf("bytes per world-step through device memory (bench/README.md \"The bytes model\"), beside %lld flops:\n",
              (long long)step.c.flops());
  std::printf("  %-7s %11s %11s %13s %12s | %10s %10s %10s   %s\n", "", "state only", "today", "+ per-world", "every access",
              "flop/byte", "floor", "floor", "aim (issue 37)");
  std::printf("  %-7s %11s %11s %13s %12s | %10s %10s %10s\n", "", "(floor)", "(stages)", "parameters", "(bound)",
              "today", "compute", "today mem");
  for (int size : {4, 8}) {
    BytesModel& b = result.bytes[size == 8];
    b.stateOnly = double(stateScalars * size + 4);
    b.today = double(todayScalars * size + 4);
    b.perWorldParams = double(paramScalars * size);
    b.everyAccess = double(everyScalars * size + 4);
    const double peak = size == 4 ? kH100Fp32FlopsPerSecond : kH100Fp64FlopsPerSecond;
    const bool humanoid = name == "humanoid";
    std::printf("  %-7s %11.0f %11.0f %13.0f %12.0f | %10.2f %10.3g %10.3g   %s\n", size == 4 ? "float" : "double",
                b.stateOnly, b.today, b.perWorldParams, b.everyAccess, double(step.c.flops()) / b.today,
                peak / double(step.c.flops()), kH100BytesPerSecond / b.today,
                name == "chain-7" ? "<= 2048" : humanoid ? "<= 8192" : "-");
  }
  std::printf("  (floors in world-steps/s on an H100 SXM: FP32 67, FP64 34 TFLOP/s, 3.35 TB/s)\n");

  for (Precision p : {Precision::Float, Precision::Double}) {
    const std::int64_t n = std::int64_t(1) << 20;
    const BatchMemory m = batchMemory(*scene.model, p, n, Backend::Cuda);
    std::printf("CUDA batch memory, %s: %.0f bytes per world on the device (%.2f GiB for 2^20 worlds)\n",
                precisionName(p), double(m.deviceBytes) / double(n), double(m.deviceBytes) / double(1ull << 30));
  }
  if (w.status[0] != kStatusOk) std::printf("  (the world was flagged: %s)\n", describeStatus(w.status[0]).c_str());
  return result;
}

std::vector<Budget> readBudgets(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the budget file '" + path + "'");
  std::vector<Budget> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    Budget b;
    if (!(words >> b.scene)) continue;
    if (!(words >> b.precision >> b.bytes) || (b.precision != "float" && b.precision != "double"))
      throw std::runtime_error(path + ":" + std::to_string(n) + ": expected 'scene float|double bytes'");
    out.push_back(b);
  }
  return out;
}

// A scene of bench_scenes.h by name, else a scene file: NAME.json in the scenes folder, or a path.
bench::BenchScene sceneNamed(const std::string& name, double* dt) {
  *dt = 1e-3;
  for (const bench::BenchScene& s : bench::benchScenes())
    if (s.name == name) return s;
  const char* dir = std::getenv("LOCKSTEP_SCENES_DIR");
  const std::string path = name.find('/') != std::string::npos || name.find('.') != std::string::npos
                               ? name
                               : std::string(dir ? dir : LOCKSTEP_SOURCE_SCENES_DIR) + "/" + name + ".json";
  const Scene scene = loadSceneFile(path);
  *dt = scene.simulation.dt;
  return {scene.name, scene.model, scene.q0, scene.u0, !scene.model->contacts().empty()};
}

}  // namespace
}  // namespace lockstep::opcount

int main(int argc, char** argv) {
  std::vector<std::string> names;
  std::string budgetFile;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--budget" && i + 1 < argc) {
      budgetFile = argv[++i];
    } else if (a == "-h" || a == "--help" || (!a.empty() && a[0] == '-')) {
      std::fprintf(stderr,
                   "usage: lockstep_opcount [--budget FILE] [scene ...]\n"
                   "  scenes: the benchmark scenes (chain-7, chain-32, chain-7-seed, free-bushing-grid-4/16, panda,\n"
                   "  ur5, solo12), a scene of scenes/ by name (humanoid, ant, ...) or a scene file's path;\n"
                   "  default chain-7 chain-32 chain-7-seed. --budget FILE: fail (exit 1) when today's bytes per\n"
                   "  world-step of a scene and precision exceed its line 'scene float|double bytes' in FILE.\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    } else {
      names.push_back(a);
    }
  }
  if (names.empty()) names = {"chain-7", "chain-32", "chain-7-seed"};
  using namespace lockstep::opcount;
  std::vector<SceneResult> results;
  std::vector<Budget> budgets;
  try {
    if (!budgetFile.empty()) budgets = readBudgets(budgetFile);
    for (const std::string& n : names) {
      double dt = 1e-3;
      const lockstep::bench::BenchScene scene = sceneNamed(n, &dt);
      results.push_back(countScene(n, scene, dt));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockstep_opcount: %s\n", e.what());
    return 1;
  }
  std::printf(
      "\nflops = add/sub + mul + div + sqrt (a fused multiply-add is 2); sin/cos and atan2 apart.\n"
      "Accesses are scalars: multiply by 4 (float) or 8 (double) for bytes.\n");
  if (budgetFile.empty()) return 0;
  int over = 0, checked = 0;
  std::printf("\nbytes per world-step, today's design, against %s:\n", budgetFile.c_str());
  for (const SceneResult& r : results)
    for (int d = 0; d < 2; ++d) {
      const char* precision = d ? "double" : "float";
      for (const Budget& b : budgets)
        if (b.scene == r.name && b.precision == precision) {
          const bool ok = r.bytes[d].today <= b.bytes;
          std::printf("  %-4s %-14s %-6s %8.0f bytes, budget %8.0f\n", ok ? "ok" : "OVER", r.name.c_str(), precision,
                      r.bytes[d].today, b.bytes);
          over += !ok;
          ++checked;
        }
    }
  if (checked == 0) {
    std::printf("  no budget line names a scene counted here\n");
    return 1;
  }
  std::printf("%d of %d within budget\n", checked - over, checked);
  return over ? 1 : 0;
}
