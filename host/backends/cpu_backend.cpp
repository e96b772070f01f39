// The CPU backend: the same per-world code as the CUDA kernels. Each thread owns one workspace
// (stride 1); worlds are independent, so results do not depend on the number of threads or on
// which thread ran which world.
//
// Steps, evaluations and projections run on SIMD packs of worlds (lanes.h) by the pack code of
// host/backends/cpu_packs.cpp, compiled once per instruction set (cpu_pack_copies.h); this file, compiled
// for plain x86-64, picks the copy once, at first use: the best the processor supports, or the one
// LOCKSTEP_CPU_ISA (generic, avx2, avx512) or setCpuIsa names. Resets and given states run on the
// copy too (one-lane packs); with setCpuLanes(false) everything runs here one world at a time on
// the scalar code.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_pack_copies.h"
#include "thread_loop.h"
#include "lockstep/backend.h"
#include "lockstep/cpu_isa.h"

namespace lockstep {

namespace {
int gCpuThreads = 0;
bool gCpuLanes = true;

// Runs f(world view, workspace) for every world index i in [0, count), world = index(i).
template <class T, class Index, class F>
void forWorlds(const BackendContext<T>& ctx, std::int64_t count, Index index, F f) {
  // No more threads than worlds: a parallel region waits for its slowest thread.
  const int threads = static_cast<int>(std::min<std::int64_t>(cpuThreads(), std::max<std::int64_t>(count, 1)));
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

std::mutex gIsaMutex;
const CpuPackCopy* gIsa = nullptr;

const CpuPackCopy* findIsa(const std::string& name, const char* origin) {
  std::string known;
  for (const IsaEntry& e : kIsas) {
    if (name == e.name) {
      if (!e.supported())
        throw std::invalid_argument(std::string(origin) + ": this processor cannot run the CPU backend's \"" + name +
                                    "\" copy (supported here: " + [] {
                                      std::string s;
                                      for (const std::string& n : cpuIsasSupported()) s += (s.empty() ? "" : ", ") + n;
                                      return s;
                                    }() + ")");
      return &e.copy();
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

const CpuPackCopy& activeIsa() {
  std::lock_guard<std::mutex> lock(gIsaMutex);
  if (!gIsa) {
    const char* env = std::getenv("LOCKSTEP_CPU_ISA");
    gIsa = (env && *env && std::string(env) != "auto") ? findIsa(env, "LOCKSTEP_CPU_ISA") : &bestIsa();
  }
  return *gIsa;
}

template <class T>
const CpuPackFunctions<T>& packFunctions(const CpuPackCopy& copy) {
  if constexpr (sizeof(T) == 4)
    return copy.f;
  else
    return copy.d;
}
}  // namespace

void setCpuThreads(int n) { gCpuThreads = n < 0 ? 0 : n; }
int cpuThreads() { return gCpuThreads > 0 ? gCpuThreads : omp_get_max_threads(); }
void setCpuLanes(bool on) { gCpuLanes = on; }
bool cpuLanes() { return gCpuLanes; }

std::vector<std::string> cpuIsasSupported() {
  std::vector<std::string> names;
  for (const IsaEntry& e : kIsas)
    if (e.supported()) names.push_back(e.name);
  return names;
}
std::string cpuIsa() { return activeIsa().name; }
void setCpuIsa(const std::string& name) {
  const CpuPackCopy* copy = (name.empty() || name == "auto") ? &bestIsa() : findIsa(name, "setCpuIsa");
  std::lock_guard<std::mutex> lock(gIsaMutex);
  gIsa = copy;
}
int cpuPackWidth(bool doublePrecision) {
  const CpuPackCopy& copy = activeIsa();
  return doublePrecision ? copy.d.lanes : copy.f.lanes;
}

std::string describeCpuIsa() {
  const CpuPackCopy& copy = activeIsa();
  std::string supported;
  for (const std::string& n : cpuIsasSupported()) supported += (supported.empty() ? "" : ", ") + n;
  return std::string(copy.name) + ": " + std::to_string(copy.f.lanes) + " float or " + std::to_string(copy.d.lanes) +
         " double worlds per pack (this processor runs " + supported + "; LOCKSTEP_CPU_ISA picks one)";
}

// ---- packs of worlds ----------------------------------------------------------------------------

// The pack copy's own cache, made for the copy in use when it was made: a change of instruction
// set makes it again.
template <class T>
struct CpuBackendCache {
  const CpuPackCopy* copy = nullptr;
  void* packs = nullptr;

  ~CpuBackendCache() { release(); }
  void release() {
    if (packs) packFunctions<T>(*copy).freeCache(packs);
    packs = nullptr;
  }
  void* forCopy(const CpuPackCopy& c) {
    if (copy != &c) {
      release();
      copy = &c;
      packs = packFunctions<T>(c).makeCache();
    }
    return packs;
  }
};

template <class T>
void CpuBackendCacheDeleter<T>::operator()(CpuBackendCache<T>* cache) const {
  delete cache;
}
template <class T>
CpuBackendCacheHandle<T> makeCpuBackendCache() {
  return CpuBackendCacheHandle<T>(new CpuBackendCache<T>());
}

namespace {
template <class T>
void* packCache(const BackendContext<T>& ctx, const CpuPackCopy& copy) {
  return ctx.cpuCache ? ctx.cpuCache->forCopy(copy) : nullptr;
}
}  // namespace

template <class T>
void cpuAdvance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).advance(ctx, settings, packCache(ctx, copy));
  } else if (ctx.model.sizes.nc > 0) {
    forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
      advanceWorld<T, true>(ctx.model, w, ws, settings);
    });
  } else {
    forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
      advanceWorld<T, false>(ctx.model, w, ws, settings);
    });
  }
}

template <class T>
void cpuEvaluate(const BackendContext<T>& ctx) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).evaluate(ctx, packCache(ctx, copy));
    return;
  }
  forWorlds(ctx, ctx.batch.nWorlds, identity,
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { evaluateWorld(ctx.model, w, ws); });
}

template <class T>
void cpuAssemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).assemble(ctx, tol, maxIterations, packCache(ctx, copy));
    return;
  }
  forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
    assembleWorld(ctx.model, w, ws, tol, maxIterations);
    observeWorld(ctx.model, w, ws);
  });
}

template <class T>
int cpuRepeatPackEvaluation(const BackendContext<T>& ctx, std::int64_t repetitions) {
  return packFunctions<T>(activeIsa()).repeatEvaluation(ctx, repetitions);
}

// Resets and given states: on the chosen copy's one-lane packs (observed as its evaluation would
// observe them), or here on the scalar code with setCpuLanes(false).
template <class T>
void cpuResetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).start(ctx, indices, nullptr, count, nullptr, nullptr, packCache(ctx, copy));
    return;
  }
  forWorlds(ctx, count, [&](std::int64_t i) { return indices[i]; },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void cpuResetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).start(ctx, nullptr, mask, ctx.batch.nWorlds, nullptr, nullptr, packCache(ctx, copy));
    return;
  }
  forWorlds(ctx, ctx.batch.nWorlds, [&](std::int64_t i) { return mask[i] ? i : std::int64_t(-1); },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void cpuSetStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
                  const T* u) {
  if (cpuLanes()) {
    const CpuPackCopy& copy = activeIsa();
    packFunctions<T>(copy).start(ctx, indices, nullptr, count, q, u, packCache(ctx, copy));
    return;
  }
  const Sizes& s = ctx.model.sizes;
  forWorlds(ctx, count, [&](std::int64_t i) { return indices[i]; },
            [&](std::int64_t i, const WorldView<T>& w, const Workspace<T>& ws) {
              setWorldState(ctx.model, w, ws, q + i * s.nq, u + i * s.nu);
            });
}

#define LOCKSTEP_INSTANTIATE(T)                                                                               \
  template void cpuAdvance<T>(const BackendContext<T>&, const StepSettings<T>&);                             \
  template void cpuEvaluate<T>(const BackendContext<T>&);                                                     \
  template void cpuAssemble<T>(const BackendContext<T>&, T, int);                                             \
  template void cpuResetIndices<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t);              \
  template void cpuResetMask<T>(const BackendContext<T>&, const std::uint8_t*);                               \
  template void cpuSetStates<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t, const T*, const T*); \
  template struct CpuBackendCacheDeleter<T>;                                                                   \
  template CpuBackendCacheHandle<T> makeCpuBackendCache<T>();                                                  \
  template int cpuRepeatPackEvaluation<T>(const BackendContext<T>&, std::int64_t);                          
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
