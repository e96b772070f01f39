// The CPU backend's pack code: worlds stepped a SIMD pack at a time (lanes.h). This file is
// compiled once per instruction set (cmake/LockstepTargets.cmake: plain x86-64, AVX2 with FMA,
// AVX-512), each copy with its own pack types (lanes.h's inline namespace, chosen by the flags) and
// one entry point (LOCKSTEP_CPU_COPY_FUNCTION, cpu_pack_copies.h): the backend operations
// (backend.h) on its packs. cpu_backend.cpp picks a batch's copy (CpuOptions::isa).
//
// Worlds [k W, (k+1) W) share every instruction, W = kLanes<T>. A pack gathers its worlds' state and
// per-world parameters into lane order, steps, and scatters the state back; a world that fails in a
// step leaves the pack there (its state restored, flagged or reset exactly as advanceWorld does)
// while the others go on. Where the physics branches on values (the constraint solver's
// iterations, line searches), each lane follows its own branch under a mask.
//
// The last n mod W worlds of a batch, when they are few (at most max(1, W/8): one in double with
// AVX2, two in float with AVX-512, where a full pack costs about as much as that many single
// worlds), are stepped one at a time on one-lane packs (Pack<T, 1>): the same code, the same operations in the same order as a
// lane of a full pack, so their bits are those they would have in a full pack (tested:
// tests/test_cpu_isa.cpp), and a batch of 1 costs one world's work, not a pack's. Otherwise they
// share a full pack padded with copies of one of them.
//
// Threads: worlds are independent and each thread owns its packs and workspace, so which thread
// runs which pack changes no bits. A call with little work stays on one thread, with no parallel
// region (threadsFor); larger ones hand packs out dynamically, so that a thread whose core is
// busy with other work does not hold the others up, and run on one thread instead where the
// batch's recent calls ran faster that way (ThreadChoice, thread_loop.h: a machine busy with other
// work).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "lane_worlds.h"
// after lanes.h (lane_worlds.h)
#include "cpu_pack_copies.h"
#include "thread_loop.h"

#if LOCKSTEP_LANE_BYTES != LOCKSTEP_CPU_EXPECTED_LANE_BYTES
#error "cpu_packs.cpp: the compiler flags do not select the instruction set this copy is built for"
#endif

namespace lockstep {
namespace {

// Work per thread below which a parallel region does not pay, in body-evaluations (worlds x bodies
// x forward-dynamics evaluations): about 0.25 ms of one core (chain-7 on AVX-512 packs takes about
// 0.03 us per body-evaluation in double), some ten times a region's cost on an idle machine. On a
// machine busy with other work a region can wait milliseconds for a descheduled thread: there the
// batch's ThreadChoice finds one thread faster and keeps to it (bench/README.md, "Threads under load").
constexpr std::int64_t kWorkPerThread = 8192;

// The pack type a model view of packs is made of.
template <class V>
struct PackOfView;
template <class P>
struct PackOfView<ModelView<P>> {
  using type = P;
};
template <class V>
using PackOf = typename PackOfView<std::remove_cv_t<std::remove_reference_t<V>>>::type;

// The work of a call, in body-evaluations.
template <class T>
std::int64_t workOf(const BackendContext<T>& ctx, std::int64_t worlds, std::int64_t evaluationsPerWorld) {
  return worlds * std::max(1, ctx.model.sizes.nb) * evaluationsPerWorld;
}

// The most threads a call of `work` over `packs` packs may use: at most the batch's, and no more
// than have kWorkPerThread each.
template <class T>
int threadsFor(const BackendContext<T>& ctx, std::int64_t work, std::int64_t packs) {
  const std::int64_t byWork = std::min<std::int64_t>(work / kWorkPerThread, packs);
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(ctx.cpu.threads, byWork)));
}

// Packs of one width for every thread, ready for a context: remade when the batch's storage or
// parameter layout differs from what they were made for; otherwise only the shared parameters'
// values are broadcast again (no allocation).
template <class T, int W>
struct PackSet {
  ModelView<T> model{};
  BatchView<T> batch{};
  std::int64_t layoutTotal = -1;
  std::unique_ptr<LaneModel<T, W>> laneModel;
  std::vector<std::unique_ptr<LaneWorlds<T, W>>> packs;  // one per thread

  bool madeFor(const BackendContext<T>& ctx) const {
    const ModelView<T>& m = ctx.model;
    const BatchView<T>& b = ctx.batch;
    bool same = laneModel && layoutTotal == ctx.layout.total && std::memcmp(&model.sizes, &m.sizes, sizeof(Sizes)) == 0 &&
                batch.nWorlds == b.nWorlds;
#define LOCKSTEP_X(kind, type, name, count, doc) same = same && model.name == m.name;
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
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

  void prepare(const BackendContext<T>& ctx, int threads) {
    if (!madeFor(ctx)) {
      packs.clear();
      laneModel = std::make_unique<LaneModel<T, W>>(ctx.model);
      model = ctx.model;
      batch = ctx.batch;
      layoutTotal = ctx.layout.total;
    }
    while (static_cast<int>(packs.size()) < threads)
      packs.push_back(std::make_unique<LaneWorlds<T, W>>(ctx.batch, ctx.model.sizes, ctx.layout));
    for (int t = 0; t < threads; ++t) packs[t]->refreshShared();
  }
};

// The kinds of call, each with a ThreadChoice of its own: their seconds per unit of work differ
// (a step's soft solve against a reset that starts a few worlds of each pack), so one kind's
// figures say nothing of the other's. Shared, a Humanoid-v5 step that its resets' cheap calls
// outran on one thread stepped on one thread for up to 1,024 calls (2026-11-29: its step ran
// 1.5x, not 1.9x, on two threads).
enum CallKind { kCallAdvance, kCallEvaluate, kCallAssemble, kCallStart, kCallKinds };

template <class T>
struct Cache {
  static constexpr int W = kLanes<T>;
  PackSet<T, W> full;
  PackSet<T, 1> one;
  ThreadChoice choice[kCallKinds];  // of the batch's calls of each kind with work for several threads
};

// A thread's one-lane pack, and the observation of world w on it (world.h's startWorld and
// settleFailedWorld with it: a reset or given state is observed by this copy's code, as an
// evaluation would observe it).
template <class T>
struct OnePack {
  const ModelView<Pack<T, 1>>& model;
  LaneWorlds<T, 1>& pack;

  struct Observe {
    const OnePack& one;
    std::int64_t w;
    void operator()() const {
      one.pack.gather(w, 1);
      observeWorld<Pack<T, 1>>(one.model, one.pack.view(), one.pack.workspace());
      const bool keep[1] = {true};
      one.pack.scatterObservations(keep);
    }
  };
  Observe observing(std::int64_t w) const { return {*this, w}; }
};

// The batch's cache for this copy (made for it by cpu_backend.cpp before the call), else `local`.
template <class T>
Cache<T>& cacheOf(const BackendContext<T>& ctx, Cache<T>& local) {
  return ctx.cpuCache ? *static_cast<Cache<T>*>(ctx.cpuCache->packs) : local;
}

// Runs body(thread, k) for every k in [0, items), on one thread or `most` (packs prepared for
// `most`) as the cache's ThreadChoice says, and tells it what the call took per unit of work.
template <class T, class F>
void forItems(Cache<T>& cache, CallKind kind, int most, std::int64_t work, std::int64_t items, F body) {
  ThreadChoice& choice = cache.choice[kind];
  const int threads = choice.threads(most);
  const std::int64_t chunk = std::max<std::int64_t>(1, items / (std::int64_t(threads) * 8));
  if (most <= 1) return forItemsOnThreads(1, items, chunk, body);
  const auto t0 = std::chrono::steady_clock::now();
  forItemsOnThreads(threads, items, chunk, body);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  choice.record(threads, took.count() / double(work));
}

// Runs f(model, pack, w0, lanes, one) for every pack of worlds [w0, w0 + lanes): the full packs, then
// the rest (see the top of the file) on one-lane packs or on one padded full pack. Each thread
// owns its packs and a one-lane pack (for per-world resets). With a cache nothing is allocated.
template <class T, class F>
void forPacks(const BackendContext<T>& ctx, CallKind kind, std::int64_t evaluationsPerWorld, F f) {
  constexpr int W = kLanes<T>;
  const std::int64_t n = ctx.batch.nWorlds;
  const std::int64_t nFull = n / W;
  const int rest = static_cast<int>(n - nFull * W);
  const bool oneByOne = rest > 0 && rest <= std::max(1, W / 8);
  const std::int64_t nWide = nFull + ((rest > 0 && !oneByOne) ? 1 : 0);
  const std::int64_t items = nWide + (oneByOne ? rest : 0);
  const std::int64_t work = workOf(ctx, n, evaluationsPerWorld);
  const int most = threadsFor(ctx, work, items);
  Cache<T> local;
  Cache<T>& cache = cacheOf(ctx, local);
  if (nWide > 0) cache.full.prepare(ctx, most);
  cache.one.prepare(ctx, most);  // also for the worlds a failed step resets
  forItems(cache, kind, most, work, items, [&](int t, std::int64_t k) {
    OnePack<T> one{cache.one.laneModel->view, *cache.one.packs[t]};
    if (k < nWide) {
      const std::int64_t w0 = k * W;
      f(cache.full.laneModel->view, *cache.full.packs[t], w0, static_cast<int>(std::min<std::int64_t>(W, n - w0)), one);
    } else {
      f(cache.one.laneModel->view, *cache.one.packs[t], nFull * W + (k - nWide), 1, one);
    }
  });
}

// advanceWorld for the worlds of each pack: the same step loop (stepLanes); a world that fails
// leaves the pack with its state from before the failed step and is settled as advanceWorld
// settles it (settleFailedWorld), while the others go on.
template <class T, int kFeatures>
void advanceLanes(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  const BatchView<T>& batch = ctx.batch;
  const std::int64_t evaluations =
      std::int64_t(settings.nSteps) * (settings.integrator == Integrator::RK4 ? 4 : 1);
  forPacks(ctx, kCallAdvance, evaluations, [&](const auto& model, auto& pack, std::int64_t w0, int lanes,
                                                 OnePack<T> one) {
    using P = PackOf<decltype(model)>;
    constexpr int W = P::kWidth;
    const StepSettings<P> laneSettings{P(settings.dt), settings.nSteps, settings.integrator,
                                       P(settings.constraintTolerance), settings.maxProjectionIterations,
                                       settings.observe, settings.autoReset};
    bool active[W];
    PackMask<T, W> activeLanes(false);
    for (int l = 0; l < W; ++l) {
      active[l] = l < lanes && batch.status[w0 + l] == kStatusOk;
      activeLanes.setLane(l, active[l]);
    }
    if (!anyLane(activeLanes)) return;
    pack.gather(w0, lanes, active);
    auto settle = [&](PackMask<T, W> failedNow, PackBits<T, W> status) {
      for (int l = 0; l < W; ++l) {
        if (!failedNow.lane(l)) continue;
        pack.scatterState(l);
        settleFailedWorld(ctx.model.sizes, batch.world(w0 + l), status.lane(l), settings.autoReset,
                          one.observing(w0 + l));
      }
    };
    activeLanes = stepLanes<P, kFeatures>(model, pack.view(), pack.workspace(), laneSettings, activeLanes, settle);
    if (!anyLane(activeLanes)) return;
    for (int l = 0; l < W; ++l) active[l] = activeLanes.lane(l);
    pack.scatterState(active);
    if (settings.observe) {
      observeWorld<P>(model, pack.view(), pack.workspace(), settings.nSteps > 0 ? Observed::kStep : Observed::kState);
      pack.scatterObservations(active);
    }
  });
}

template <class T>
void advance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    advanceLanes<T, decltype(features)::flags>(ctx, settings);
  });
}

// evaluateWorld for the worlds of each pack.
template <class T, int kFeatures>
void evaluateLanes(const BackendContext<T>& ctx) {
  forPacks(ctx, kCallEvaluate, 1, [&](const auto& model, auto& pack, std::int64_t w0, int lanes, OnePack<T>) {
    using P = PackOf<decltype(model)>;
    constexpr int W = P::kWidth;
    pack.gather(w0, lanes);
    const PackBits<T, W> status = evaluateOutputs<P, kFeatures>(model, pack.view(), pack.workspace());
    bool real[W];
    for (int l = 0; l < W; ++l) real[l] = l < lanes;
    pack.scatterEvaluation(real);
    pack.scatterObservations(real);
    for (int l = 0; l < lanes; ++l) ctx.batch.status[w0 + l] |= status.lane(l);
  });
}

template <class T>
void evaluate(const BackendContext<T>& ctx) {
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) { evaluateLanes<T, decltype(features)::flags>(ctx); });
}

// assembleWorld and observeWorld for the worlds of each pack: the healthy ones are projected, all
// are observed.
template <class T>
void assemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  forPacks(ctx, kCallAssemble, std::max(1, maxIterations), [&](const auto& model, auto& pack, std::int64_t w0,
                                                                int lanes, OnePack<T>) {
    using P = PackOf<decltype(model)>;
    constexpr int W = P::kWidth;
    bool real[W], healthy[W];
    PackMask<T, W> project(false);
    for (int l = 0; l < W; ++l) {
      real[l] = l < lanes;
      healthy[l] = real[l] && ctx.batch.status[w0 + l] == kStatusOk;
      project.setLane(l, healthy[l]);
    }
    pack.gather(w0, lanes);
    const PackBits<T, W> status = projectConstraints<P>(model, pack.view(), pack.workspace(), P(tol), maxIterations, project);
    observeWorld<P>(model, pack.view(), pack.workspace());
    pack.scatterState(healthy);
    pack.scatterObservations(real);
    for (int l = 0; l < lanes; ++l)
      if (healthy[l]) ctx.batch.status[w0 + l] |= status.lane(l);
  });
}

// Starts the worlds w whose row(w) is not negative at their initial state, or at the given states
// q[row(w)], u[row(w)], a pack of worlds at a time: each started world's state is written
// (startWorld), then a pack that starts two or more worlds observes them together and scatters
// their observations (its other lanes are copies and are not written), and a pack that starts one
// observes it on a one-lane pack. The observations' bits are the same either way (a lane of a pack
// is a world alone).
template <class T, class Row>
void startPacks(const BackendContext<T>& ctx, Row row, const T* q, const T* u) {
  const Sizes& s = ctx.model.sizes;
  forPacks(ctx, kCallStart, 1, [&](const auto& model, auto& pack, std::int64_t w0, int lanes, OnePack<T> one) {
    bool use[kLanes<T>] = {};
    int started = 0;
    for (int l = 0; l < lanes; ++l) {
      const std::int64_t w = w0 + l, i = row(w);
      if (i < 0) continue;
      use[l] = true;
      ++started;
      const WorldView<T> world = ctx.batch.world(w);
      const auto written = [] {};  // observed below, with its pack
      if (q)
        startWorld(s, world, Strided<const T>{q + i * s.nq, 1}, Strided<const T>{u + i * s.nu, 1}, written);
      else
        resetWorldState(s, world, written);
    }
    if (started == 0) return;
    if (started == 1) {
      for (int l = 0; l < lanes; ++l)
        if (use[l]) one.observing(w0 + l)();
      return;
    }
    pack.gather(w0, lanes, use);
    observeWorld(model, pack.view(), pack.workspace());
    pack.scatterObservations(use);
  });
}

// Starts the listed worlds (indices, or those where mask is set, or all) at their initial state, or
// at the given states (q[count][nq], u[count][nu]): startWorld. A mask, or a list of at least a
// quarter of the batch, a pack of worlds at a time (startPacks; a world listed twice starts once, from
// its last row); a shorter list's worlds each observed on a one-lane pack.
template <class T>
void start(const BackendContext<T>& ctx, const std::int64_t* indices, const std::uint8_t* mask, std::int64_t count,
           const T* q, const T* u) {
  const std::int64_t n = ctx.batch.nWorlds;
  if (!indices)
    return startPacks(ctx, [&](std::int64_t w) { return mask && !mask[w] ? std::int64_t(-1) : w; }, q, u);
  if (4 * count >= n) {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n), -1);
    for (std::int64_t i = 0; i < count; ++i)
      if (indices[i] >= 0 && indices[i] < n) rows[static_cast<std::size_t>(indices[i])] = i;
    return startPacks(ctx, [&](std::int64_t w) { return rows[static_cast<std::size_t>(w)]; }, q, u);
  }
  const std::int64_t work = workOf(ctx, count, 1);
  const int most = threadsFor(ctx, work, count);
  Cache<T> local;
  Cache<T>& cache = cacheOf(ctx, local);
  cache.one.prepare(ctx, most);
  const Sizes& s = ctx.model.sizes;
  forItems(cache, kCallStart, most, work, count, [&](int t, std::int64_t i) {
    const OnePack<T> one{cache.one.laneModel->view, *cache.one.packs[t]};
    const std::int64_t w = indices ? indices[i] : i;
    if (mask && !mask[i]) return;
    const WorldView<T> world = ctx.batch.world(w);
    if (q)
      startWorld(s, world, Strided<const T>{q + i * s.nq, 1}, Strided<const T>{u + i * s.nu, 1}, one.observing(w));
    else
      resetWorldState(s, world, one.observing(w));
  });
}

template <class T>
void resetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  start<T>(ctx, indices, nullptr, count, nullptr, nullptr);
}
template <class T>
void resetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  start<T>(ctx, nullptr, mask, ctx.batch.nWorlds, nullptr, nullptr);
}
template <class T>
void setStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
               const T* u) {
  start<T>(ctx, indices, nullptr, count, q, u);
}

// Linearizations of models without sphere contacts, a pack of worlds at a time: the per-world
// templates on Dual<Pack<T>, kDualTangents> (dual.h), W worlds per instruction, each lane its own
// world (physics/derivatives.h's passes, as the scalar duals run them). Each thread keeps one dual
// world of packs; the lanes past the batch, and those of flagged worlds, compute a copy of a
// healthy world of their pack and are not stored. (Models with sphere contacts run on the
// backend's scalar duals, as their steps run on its scalar code.)
template <class T>
void linearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& r) {
  constexpr int W = kLanes<T>;
  using P = Pack<T>;
  using D = Dual<P, kDualTangents>;
  const Sizes& s = ctx.model.sizes;
  const ConvertedModel<D> duals(ctx.model, [](const Transform<T>& X) { return castTransform<D>(X); });
  const ModelView<D>& dualModel = duals.view;
  const StepSettings<D> settings{D(P(r.settings.dt.v)), 1, r.settings.integrator,
                                 D(P(r.settings.constraintTolerance.v)), r.settings.maxProjectionIterations, false, false};
  const std::int64_t worlds = ctx.batch.nWorlds, end = r.first + r.count, packs = (r.count + W - 1) / W;
  const int threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(ctx.cpu.threads, packs)));
  std::vector<std::vector<D>> scratch(threads, std::vector<D>(static_cast<std::size_t>(r.layout.total)));
  std::vector<std::int32_t> ints(static_cast<std::size_t>(threads * (r.layout.ints + 1)));
  const int count = r.dirs.count(), rows = jacobianRows(s, r.what);
  forItemsOnThreads(threads, packs, 1, [&](int t, std::int64_t p) {
    const DualWorld<D> d = dualWorldAt(s, r.layout, scratch[t].data(), ints.data() + t * (r.layout.ints + 1), 1);
    const std::int64_t w0 = r.first + p * W;
    const int lanes = static_cast<int>(std::min<std::int64_t>(W, end - w0));
    WorldView<T> source[W];
    bool use[W];
    int stand = -1;  // the first healthy world of the pack
    for (int l = 0; l < lanes; ++l) {
      use[l] = ctx.batch.world(w0 + l).status[0] == kStatusOk;
      if (use[l] && stand < 0) stand = l;
    }
    if (stand < 0) stand = 0;
    for (int l = 0; l < W; ++l) source[l] = ctx.batch.world(w0 + (l < lanes && use[l] ? l : stand));
    auto gather = [&](auto field, std::int64_t c) {
      P v;
      for (int l = 0; l < W; ++l) v.lane(l) = (source[l].*field)[c];
      return D(v);
    };
    auto load = [&](const auto& x) {  // generic: the int32 branch below is discarded, not compiled
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                               \
  for (std::int64_t c = 0, n = fieldCount(s, per, parts); c < n; ++c) {                     \
    if constexpr (std::is_same<type, std::int32_t>::value) x.w.name[c] = kStatusOk;         \
    else x.w.name[c] = gather(&WorldView<T>::name, c);                                      \
  }
      LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
      std::int64_t o = 0;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                                             \
  for (std::int64_t c = 0, n = fieldCount(s, per, parts); c < n; ++c) {                                  \
    P v;                                                                                                  \
    for (int l = 0; l < W; ++l) v.lane(l) = source[l].params.name[c];                                     \
    x.params[o + c] = D(v);                                                                               \
  }                                                                                                       \
  o += fieldCount(s, per, parts);
      LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    };
    auto store = [&](int k, int row, const P& value) {
      T* out = r.jacobian + (std::int64_t(row) * count + k) * worlds + w0;
      for (int l = 0; l < lanes; ++l) out[l] = value[l];
    };
    const PackBits<T> status =
        linearizePasses<P, kDualTangents, false>(dualModel, d, settings, r.dirs, r.what, load, store);
    const T nan = T(0) / T(0);
    for (int l = 0; l < lanes; ++l) {
      if (use[l] && status.lane(l) == kStatusOk) continue;
      for (std::int64_t c = 0; c < std::int64_t(rows) * count; ++c) r.jacobian[c * worlds + w0 + l] = nan;
    }
  });
}

template <class T>
int repeatEvaluation(const BackendContext<T>& ctx, std::int64_t repetitions) {
  const LaneModel<T> model(ctx.model);
  LaneWorlds<T> pack(ctx.batch, ctx.model.sizes, ctx.layout);
  pack.gather(0, static_cast<int>(std::min<std::int64_t>(kLanes<T>, ctx.batch.nWorlds)));
  PackBits<T> status = kStatusOk;
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    for (std::int64_t r = 0; r < repetitions; ++r) {
      status |= computeStateDerivative<Pack<T>, decltype(features)::flags>(model.view, pack.view(), pack.workspace());
      asm volatile("" ::: "memory");
    }
  });
  return status.lane(0);
}

template <class T>
void* makeCache() {
  return new Cache<T>();
}
template <class T>
void freeCache(void* cache) {
  delete static_cast<Cache<T>*>(cache);
}

template <class T>
constexpr CpuPackFunctions<T> functions() {
  return {LOCKSTEP_BACKEND_TABLE, &repeatEvaluation<T>, &makeCache<T>, &freeCache<T>, kLanes<T>};
}

}  // namespace

const CpuPackCopy& LOCKSTEP_CPU_COPY_FUNCTION() {
  static const CpuPackCopy copy{LOCKSTEP_CPU_COPY_NAME, functions<float>(), functions<double>()};
  return copy;
}

}  // namespace lockstep
