// The CPU backend: the same per-world code as the CUDA kernels. Each thread owns one workspace
// (stride 1); worlds are independent and scheduled statically, so results do not depend on the
// number of threads or on which thread ran which world.
//
// Steps are taken a pack of worlds at a time (lanes.h): worlds [k W, (k+1) W) share every
// instruction, W = 4 in double and 8 in float with AVX2. A pack gathers its worlds' state and
// per-world parameters into lane order, steps, and scatters the state back; a world that fails in a
// step leaves the pack there (its state restored, flagged or reset exactly as advanceWorld does)
// while the others go on. Where the physics branches on values (the constraint solver's
// iterations, line searches), each lane follows its own branch under a mask.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "lockstep/backend.h"
#include "lockstep/lanes.h"

namespace lockstep {

namespace {
int gCpuThreads = 0;
bool gCpuLanes = true;

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
void setCpuLanes(bool on) { gCpuLanes = on; }
bool cpuLanes() { return gCpuLanes; }

// ---- packs of worlds ----------------------------------------------------------------------------

template <class T>
struct CpuBackendCache {
  // What the packs were made for; any change makes them again.
  ModelView<T> model{};
  BatchView<T> batch{};
  std::int64_t layoutTotal = -1;
  std::unique_ptr<LaneModel<T>> laneModel;
  std::vector<std::unique_ptr<LaneWorlds<T>>> packs;  // one per thread

  bool madeFor(const BackendContext<T>& ctx) const {
    const ModelView<T>& m = ctx.model;
    const BatchView<T>& b = ctx.batch;
    bool same = laneModel && layoutTotal == ctx.layout.total && model.body == m.body && model.X_PF == m.X_PF &&
                model.X_MB == m.X_MB && model.bushing == m.bushing && model.spring == m.spring &&
                model.contact == m.contact && model.ground == m.ground && std::memcmp(&model.sizes, &m.sizes, sizeof(Sizes)) == 0 &&
                batch.nWorlds == b.nWorlds;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) same = same && batch.name == b.name;
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                                            \
  same = same && batch.name.data == b.name.data && batch.name.worldStride == b.name.worldStride && \
         batch.name.compStride == b.name.compStride;
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return same;
  }

  // Packs for `threads` threads, ready for ctx: made again if ctx differs from what they were made
  // for; otherwise only the shared parameters' values are broadcast again (no allocation).
  void prepare(const BackendContext<T>& ctx, int threads) {
    if (!madeFor(ctx)) {
      packs.clear();
      laneModel = std::make_unique<LaneModel<T>>(ctx.model);
      model = ctx.model;
      batch = ctx.batch;
      layoutTotal = ctx.layout.total;
    }
    while (static_cast<int>(packs.size()) < threads)
      packs.push_back(std::make_unique<LaneWorlds<T>>(ctx.batch, ctx.model.sizes, ctx.layout));
    for (int t = 0; t < threads; ++t) packs[t]->refreshShared();
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

// Runs f(model, pack, w0, lanes, ws) for every pack of worlds [w0, w0 + lanes), statically
// scheduled: each thread owns a LaneWorlds and a scalar workspace (for per-world resets). The packs
// come from the batch's cache (ctx.cpuCache) when it has one, so that nothing is allocated.
template <class T, class F>
void forPacks(const BackendContext<T>& ctx, F f) {
  constexpr int W = Pack<T>::kWidth;
  const std::int64_t nPacks = (ctx.batch.nWorlds + W - 1) / W;
  const int threads = static_cast<int>(std::min<std::int64_t>(cpuThreads(), std::max<std::int64_t>(nPacks, 1)));
  CpuBackendCache<T> local;
  CpuBackendCache<T>& cache = ctx.cpuCache ? *ctx.cpuCache : local;
  cache.prepare(ctx, threads);
  const ModelView<Pack<T>>& model = cache.laneModel->view;
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{ctx.layout, {ctx.scratch + static_cast<std::int64_t>(omp_get_thread_num()) * ctx.layout.total, 1}};
    LaneWorlds<T>& pack = *cache.packs[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < nPacks; ++k) {
      const std::int64_t w0 = k * W;
      f(model, pack, w0, static_cast<int>(std::min<std::int64_t>(W, ctx.batch.nWorlds - w0)), ws);
    }
  }
}

// advanceWorld for the worlds of each pack: the same step loop (stepLanes); a world that fails
// leaves the pack with its state from before the failed step and is settled as advanceWorld
// settles it (settleFailedWorld), while the others go on.
template <class T, bool kConstraints>
void advanceLanes(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  constexpr int W = Pack<T>::kWidth;
  const BatchView<T>& batch = ctx.batch;
  const StepSettings<Pack<T>> laneSettings{Pack<T>(settings.dt), settings.nSteps, settings.integrator,
                                           Pack<T>(settings.constraintTolerance), settings.maxProjectionIterations,
                                           settings.observe, settings.autoReset};
  forPacks(ctx, [&](const ModelView<Pack<T>>& model, LaneWorlds<T>& pack, std::int64_t w0, int lanes,
                    const Workspace<T>& ws) {
    bool active[W];
    PackMask<T> activeLanes(false);
    for (int l = 0; l < W; ++l) {
      active[l] = l < lanes && batch.status[w0 + l] == kStatusOk;
      activeLanes.v[l] = active[l] ? -1 : 0;
    }
    if (!anyLane(activeLanes)) return;
    pack.gather(w0, lanes, active);
    auto settle = [&](PackMask<T> failedNow, PackBits<T> status) {
      for (int l = 0; l < W; ++l) {
        if (!failedNow.lane(l)) continue;
        pack.scatterState(l);
        settleFailedWorld(ctx.model, batch.world(w0 + l), ws, status.lane(l), settings.autoReset);
      }
    };
    activeLanes =
        stepLanes<Pack<T>, kConstraints>(model, pack.view(), pack.workspace(), laneSettings, activeLanes, settle);
    if (!anyLane(activeLanes)) return;
    for (int l = 0; l < W; ++l) active[l] = activeLanes.lane(l);
    pack.scatterState(active);
    if (settings.observe) {
      observeWorld<Pack<T>>(model, pack.view(), pack.workspace());
      pack.scatterObservations(active);
    }
  });
}

template <class T>
void cpuAdvance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  const bool constraints = ctx.model.sizes.nc > 0;
  if (cpuLanes()) {
    if (constraints)
      advanceLanes<T, true>(ctx, settings);
    else
      advanceLanes<T, false>(ctx, settings);
  } else if (constraints) {
    forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
      advanceWorld<T, true>(ctx.model, w, ws, settings);
    });
  } else {
    forWorlds(ctx, ctx.batch.nWorlds, identity, [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) {
      advanceWorld<T, false>(ctx.model, w, ws, settings);
    });
  }
}

// evaluateWorld for the worlds of each pack.
template <class T, bool kConstraints>
void evaluateLanes(const BackendContext<T>& ctx) {
  constexpr int W = Pack<T>::kWidth;
  forPacks(ctx, [&](const ModelView<Pack<T>>& model, LaneWorlds<T>& pack, std::int64_t w0, int lanes,
                    const Workspace<T>&) {
    pack.gather(w0, lanes);
    const PackBits<T> status = evaluateOutputs<Pack<T>, kConstraints>(model, pack.view(), pack.workspace());
    bool real[W];
    for (int l = 0; l < W; ++l) real[l] = l < lanes;
    pack.scatterEvaluation(real);
    pack.scatterObservations(real);
    for (int l = 0; l < lanes; ++l) ctx.batch.status[w0 + l] |= status.lane(l);
  });
}

template <class T>
void cpuEvaluate(const BackendContext<T>& ctx) {
  if (cpuLanes()) {
    if (ctx.model.sizes.nc > 0)
      evaluateLanes<T, true>(ctx);
    else
      evaluateLanes<T, false>(ctx);
    return;
  }
  forWorlds(ctx, ctx.batch.nWorlds, identity,
            [&](std::int64_t, const WorldView<T>& w, const Workspace<T>& ws) { evaluateWorld(ctx.model, w, ws); });
}

// assembleWorld and observeWorld for the worlds of each pack: the healthy ones are projected, all
// are observed.
template <class T>
void assembleLanes(const BackendContext<T>& ctx, T tol, int maxIterations) {
  constexpr int W = Pack<T>::kWidth;
  forPacks(ctx, [&](const ModelView<Pack<T>>& model, LaneWorlds<T>& pack, std::int64_t w0, int lanes,
                    const Workspace<T>&) {
    bool real[W], healthy[W];
    PackMask<T> project(false);
    for (int l = 0; l < W; ++l) {
      real[l] = l < lanes;
      healthy[l] = real[l] && ctx.batch.status[w0 + l] == kStatusOk;
      project.v[l] = healthy[l] ? -1 : 0;
    }
    pack.gather(w0, lanes);
    const PackBits<T> status =
        projectConstraints<Pack<T>>(model, pack.view(), pack.workspace(), Pack<T>(tol), maxIterations, project);
    observeWorld<Pack<T>>(model, pack.view(), pack.workspace());
    pack.scatterState(healthy);
    pack.scatterObservations(real);
    for (int l = 0; l < lanes; ++l)
      if (healthy[l]) ctx.batch.status[w0 + l] |= status.lane(l);
  });
}

template <class T>
void cpuAssemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  if (cpuLanes()) {
    assembleLanes(ctx, tol, maxIterations);
    return;
  }
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
  template void cpuSetStates<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t, const T*, const T*); \
  template struct CpuBackendCacheDeleter<T>;                                                                   \
  template CpuBackendCacheHandle<T> makeCpuBackendCache<T>();
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
