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

// Runs f(model, pack, w0, lanes, ws) for every pack of worlds [w0, w0 + lanes), statically
// scheduled: each thread owns a LaneWorlds and a scalar workspace (for per-world resets).
template <class T, class F>
void forPacks(const BackendContext<T>& ctx, F f) {
  constexpr int W = Pack<T>::kWidth;
  const std::int64_t nPacks = (ctx.batch.nWorlds + W - 1) / W;
  const int threads = static_cast<int>(std::min<std::int64_t>(cpuThreads(), std::max<std::int64_t>(nPacks, 1)));
  const LaneModel<T> model(ctx.model);
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{ctx.layout, {ctx.scratch + static_cast<std::int64_t>(omp_get_thread_num()) * ctx.layout.total, 1}};
    LaneWorlds<T> pack(ctx.batch, ctx.model.sizes, ctx.layout);
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < nPacks; ++k) {
      const std::int64_t w0 = k * W;
      f(model.view, pack, w0, static_cast<int>(std::min<std::int64_t>(W, ctx.batch.nWorlds - w0)), ws);
    }
  }
}

// advanceWorld for the worlds of each pack.
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
    int nActive = 0;
    for (int l = 0; l < W; ++l) {
      active[l] = l < lanes && batch.status[w0 + l] == kStatusOk;
      nActive += active[l];
    }
    if (nActive == 0) return;
    pack.gather(w0, lanes, active);
    for (int step = 0; step < settings.nSteps && nActive > 0; ++step) {
      const PackBits<T> status = stepWorld<Pack<T>, kConstraints>(model, pack.view(), pack.workspace(), laneSettings);
      if (!anyLane(failed(status))) continue;
      for (int l = 0; l < W; ++l) {
        if (!active[l] || status.lane(l) == kStatusOk) continue;
        // As advanceWorld: the world keeps its state from before the failed step.
        pack.scatterState(l);
        const WorldView<T> w = batch.world(w0 + l);
        if (settings.autoReset) {
          w.lastFailure[0] = status.lane(l);
          w.resetCount[0] += 1;
          resetWorldState(ctx.model, w, ws);
        } else {
          w.status[0] |= status.lane(l);
        }
        active[l] = false;
        --nActive;
      }
    }
    if (nActive == 0) return;
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
  template void cpuSetStates<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t, const T*, const T*);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
