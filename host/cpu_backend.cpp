// The CPU backend: the same per-world code as the CUDA kernels, one world at a time on each core.
// Each thread owns one workspace (stride 1); worlds are independent and scheduled statically, so
// results do not depend on the number of threads or on which thread ran which world.
#include <omp.h>

#include <algorithm>

#include "lockstep/backend.h"

namespace lockstep {

namespace {
int gCpuThreads = 0;

// Runs f(world view, workspace) for every world index i in [0, count), world = index(i).
template <class T, class Index, class F>
void forWorlds(const BackendContext<T>& ctx, std::int64_t count, Index index, F f) {
  // No more threads than worlds: a parallel region waits for its slowest thread.
  const int threads = static_cast<int>(std::min<std::int64_t>(cpuThreads(), std::max<std::int64_t>(count, 1)));
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{ctx.layout, {ctx.scratch + static_cast<std::int64_t>(omp_get_thread_num()) * ctx.layout.total, 1}};
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t w = index(i);
      if (w >= 0) f(i, ctx.batch.world(w), ws);
    }
  }
}
auto identity = [](std::int64_t i) { return i; };
}  // namespace

void setCpuThreads(int n) { gCpuThreads = n < 0 ? 0 : n; }
int cpuThreads() { return gCpuThreads > 0 ? gCpuThreads : omp_get_max_threads(); }

template <class T>
void cpuAdvance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  if (ctx.model.sizes.nc > 0) {
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
  forWorlds(ctx, ctx.batch.nWorlds, identity,
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { evaluateWorld(ctx.model, w, ws); });
}

template <class T>
void cpuAssemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
    assembleWorld(ctx.model, w, ws, tol, maxIterations);
    observeWorld(ctx.model, w, ws);
  });
}

template <class T>
void cpuResetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  forWorlds(ctx, count, [&](std::int64_t i) { return indices[i]; },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void cpuResetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  forWorlds(ctx, ctx.batch.nWorlds, [&](std::int64_t i) { return mask[i] ? i : std::int64_t(-1); },
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { resetWorldState(ctx.model, w, ws); });
}

template <class T>
void cpuSetStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
                  const T* u) {
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
  template void cpuSetStates<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t, const T*, const T*);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
