// The CPU backend: the same per-world code as the CUDA kernels. Each thread owns one workspace
// (stride 1); worlds are independent, so results do not depend on the number of threads or on
// which thread ran which world.
//
// Steps, evaluations and projections run on SIMD packs of worlds (lanes.h) by the pack code of
// host/backends/cpu_packs.cpp, compiled once per instruction set (cpu_pack_copies.h); this file,
// compiled for plain x86-64, picks a batch's copy when its options are set (resolveCpuOptions):
// the one CpuOptions::isa names, by default the one LOCKSTEP_CPU_ISA names or the best the
// processor supports. Resets and given states run on the copy too (one-lane packs); with
// CpuOptions::lanes false everything runs here one world at a time on the scalar code.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_pack_copies.h"
#include "thread_loop.h"
#include "lockstep/backends/backend.h"
#include "lockstep/backends/cpu_isa.h"

namespace lockstep {

namespace {

// Runs f(i, world view, workspace) for every index i in [0, count), world = index(i) (none where
// it is negative).
template <class T, class Index, class F>
void forWorlds(const BackendContext<T>& ctx, std::int64_t count, Index index, F f) {
  // No more threads than worlds: a parallel region waits for its slowest thread.
  const int threads = static_cast<int>(std::min<std::int64_t>(ctx.cpu.threads, std::max<std::int64_t>(count, 1)));
  const std::int64_t chunk = std::max<std::int64_t>(1, count / (std::int64_t(threads) * 8));
  forItemsOnThreads(threads, count, chunk, [&](int t, std::int64_t i) {
    const Workspace<T> ws{ctx.layout, {ctx.scratch + static_cast<std::int64_t>(t) * ctx.layout.total, 1}};
    const std::int64_t w = index(i);
    if (w >= 0) f(i, ctx.batch.world(w), ws);
  });
}
auto identity = [](std::int64_t i) { return i; };

// ---- the instruction set ------------------------------------------------------------------------

// The copies compiled in, best first, and whether this processor runs each. A copy's own function
// is called only where it is supported: it is compiled for its instruction set.
struct IsaEntry {
  const char* name;
  const CpuPackCopy& (*copy)();
  bool (*supported)();
};
const IsaEntry kIsas[] = {
#ifdef LOCKSTEP_CPU_AVX512
    {"avx512", &cpuPackCopyAvx512,
     [] {
       __builtin_cpu_init();
       return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma");
     }},
#endif
    {"avx2", &cpuPackCopyAvx2,
     [] {
       __builtin_cpu_init();
       return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
     }},
    {"generic", &cpuPackCopyGeneric, [] { return true; }},
};

std::string supportedList() {
  std::string s;
  for (const std::string& n : cpuIsasSupported()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const CpuPackCopy& findIsa(const std::string& name, const char* origin) {
  std::string known;
  for (const IsaEntry& e : kIsas) {
    if (name == e.name) {
      if (!e.supported())
        throw std::invalid_argument(std::string(origin) + ": this processor cannot run the CPU backend's \"" + name +
                                    "\" copy (supported here: " + supportedList() + ")");
      return e.copy();
    }
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  throw std::invalid_argument(std::string(origin) + ": unknown CPU instruction set \"" + name + "\" (this build has: " +
                              known + ")");
}

const CpuPackCopy& bestIsa() {
  for (const IsaEntry& e : kIsas)
    if (e.supported()) return e.copy();
  return cpuPackCopyGeneric();
}

// The default copy: LOCKSTEP_CPU_ISA's, else the best (a bad name throws).
const CpuPackCopy& defaultIsa() {
  const char* env = std::getenv("LOCKSTEP_CPU_ISA");
  if (!env || !*env || std::string(env) == "auto") return bestIsa();
  return findIsa(env, "LOCKSTEP_CPU_ISA");
}

const CpuPackCopy& copyOf(const CpuRun& run) { return run.copy ? *run.copy : defaultIsa(); }

// The pack code of the context's instruction set, with the batch's cache made for it.
template <class T>
const BackendOps<T>& packs(const BackendContext<T>& ctx) {
  const CpuPackCopy& copy = copyOf(ctx.cpu);
  if (ctx.cpuCache) ctx.cpuCache->forCopy(copy);
  return packFunctions<T>(copy).ops;
}
}  // namespace

int defaultCpuThreads() { return omp_get_max_threads(); }

CpuRun resolveCpuOptions(const CpuOptions& options) {
  if (options.threads < 0)
    throw std::invalid_argument("CPU threads: must be >= 0 (0: all cores), not " + std::to_string(options.threads));
  // More threads than cores only add waiting; far more can fail to start (OpenMP then ends the
  // process): at most kMaxCpuThreadsPerCore per core.
  const int most = kMaxCpuThreadsPerCore * omp_get_num_procs();
  if (options.threads > most)
    throw std::invalid_argument("CPU threads: at most " + std::to_string(most) + " (" +
                                std::to_string(kMaxCpuThreadsPerCore) + " per core of this machine), not " +
                                std::to_string(options.threads));
  CpuRun run;
  run.threads = options.threads > 0 ? options.threads : defaultCpuThreads();
  run.lanes = options.lanes;
  run.copy = (options.isa.empty() || options.isa == "auto") ? &defaultIsa() : &findIsa(options.isa, "CPU isa");
  return run;
}
std::string cpuIsaOf(const CpuRun& run) { return copyOf(run).name; }
std::string defaultCpuIsa() { return defaultIsa().name; }

std::vector<std::string> cpuIsasSupported() {
  std::vector<std::string> names;
  for (const IsaEntry& e : kIsas)
    if (e.supported()) names.push_back(e.name);
  return names;
}
int cpuPackWidth(bool doublePrecision, const std::string& isa) {
  const CpuPackCopy& copy = (isa.empty() || isa == "auto") ? defaultIsa() : findIsa(isa, "CPU isa");
  return doublePrecision ? copy.d.lanes : copy.f.lanes;
}

std::string describeCpuIsa() {
  const CpuPackCopy& copy = defaultIsa();
  return std::string(copy.name) + ": " + std::to_string(copy.f.lanes) + " float or " + std::to_string(copy.d.lanes) +
         " double worlds per pack (this processor runs " + supportedList() + "; LOCKSTEP_CPU_ISA picks one)";
}

template <class T>
void CpuBackendCacheDeleter<T>::operator()(CpuBackendCache<T>* cache) const {
  delete cache;
}
template <class T>
CpuBackendCacheHandle<T> makeCpuBackendCache() {
  return CpuBackendCacheHandle<T>(new CpuBackendCache<T>());
}

template <class T>
int cpuRepeatPackEvaluation(const BackendContext<T>& ctx, std::int64_t repetitions) {
  return packFunctions<T>(copyOf(ctx.cpu)).repeatEvaluation(ctx, repetitions);
}

// ---- the operations: on the packs of the batch's copy, or here one world at a time -------------

namespace {

template <class T>
void advance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  if (ctx.cpu.lanes) return packs(ctx).advance(ctx, settings);
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
      advanceWorld<T, decltype(features)::flags>(ctx.model, w, ws, settings);
    });
  });
}

template <class T>
void evaluate(const BackendContext<T>& ctx) {
  if (ctx.cpu.lanes) return packs(ctx).evaluate(ctx);
  forWorlds(ctx, ctx.batch.nWorlds, identity,
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { evaluateWorld(ctx.model, w, ws); });
}

template <class T>
void assemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  if (ctx.cpu.lanes) return packs(ctx).assemble(ctx, tol, maxIterations);
  forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
    assembleWorld(ctx.model, w, ws, tol, maxIterations);
    observeWorld(ctx.model, w, ws);
  });
}

// Resets and given states: on the copy's one-lane packs (observed as its evaluation would observe
// them), or here on the scalar code.
template <class T>
void resetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  if (ctx.cpu.lanes) return packs(ctx).resetIndices(ctx, indices, count);
  forWorlds(ctx, count, [&](std::int64_t i) { return indices[i]; },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void resetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  if (ctx.cpu.lanes) return packs(ctx).resetMask(ctx, mask);
  forWorlds(ctx, ctx.batch.nWorlds, [&](std::int64_t i) { return mask[i] ? i : std::int64_t(-1); },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void setStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
               const T* u) {
  if (ctx.cpu.lanes) return packs(ctx).setStates(ctx, indices, count, q, u);
  const Sizes& s = ctx.model.sizes;
  forWorlds(ctx, count, [&](std::int64_t i) { return indices[i]; },
            [&](std::int64_t i, const WorldView<T>& w, const Workspace<T>& ws) {
              setWorldState(ctx.model, w, ws, q + i * s.nq, u + i * s.nu);
            });
}

// Linearizations: on the copy's packs of duals (cpu_packs.cpp) for models without sphere contacts
// or MuJoCo's law; else, and with CpuOptions::lanes false, here one world at a time on the scalar
// code instantiated on duals: thread t uses dual world t, contiguous in the request's scratch. (The
// soft solve on packs of duals would be compiled once more for every instruction set, and GCC 12
// stops with an internal compiler error on softBoxPair<Dual<Pack<double, 2>, 8>>: gimple-isel.cc:281.)
template <class T>
void linearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& r) {
  const Sizes& s = ctx.model.sizes;
  if (ctx.cpu.lanes && s.nc == 0 && !s.mujocoStepping) return packs(ctx).linearize(ctx, r);
  const ModelView<T>& m = ctx.model;
  const ModelView<DualOf<T>> dualModel = m.withFrames(r.X_PF, r.X_MB);
  const std::int64_t worlds = ctx.batch.nWorlds;
  const int threads = static_cast<int>(std::min<std::int64_t>({ctx.cpu.threads, r.slots, std::max<std::int64_t>(r.count, 1)}));
  const std::int64_t chunk = std::max<std::int64_t>(1, r.count / (std::int64_t(threads) * 8));
  forItemsOnThreads(threads, r.count, chunk, [&](int t, std::int64_t i) {
    const std::int64_t w = r.first + i;
    const DualWorld<DualOf<T>> d =
        dualWorldAt(s, r.layout, r.dualScratch + t * r.layout.total, r.dualInts + t * r.layout.ints, 1);
    const Strided<T> J{r.jacobian + w, worlds};
    dispatchModelFeatures(s, [&](auto features) {
      linearizeWorld<T, kDualTangents, decltype(features)::flags>(dualModel, ctx.batch.world(w), d, r.settings,
                                                                  r.dirs, r.what, J);
    });
  });
}

}  // namespace

template <class T>
const BackendOps<T>& cpuBackend() {
  static const BackendOps<T> ops LOCKSTEP_BACKEND_TABLE;
  return ops;
}

#define LOCKSTEP_INSTANTIATE(T)                                             \
  template const BackendOps<T>& cpuBackend<T>();                            \
  template struct CpuBackendCacheDeleter<T>;                                \
  template CpuBackendCacheHandle<T> makeCpuBackendCache<T>();               \
  template int cpuRepeatPackEvaluation<T>(const BackendContext<T>&, std::int64_t);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
