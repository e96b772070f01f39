// Lockstep backends: the operations through which a Batch runs the per-world physics, declared
// once (LOCKSTEP_BACKEND_OPERATIONS), and the table of them that each backend fills: the CPU
// (threads over SIMD packs of worlds, or one world at a time; host/backends/cpu_backend.cpp) and
// CUDA (one thread per world; kernels/batch_kernels.cuh). Both take the same context and run the
// same per-world functions (world.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/physics/derivatives.h"
#include "lockstep/physics/world.h"

namespace lockstep {

// What the CPU backend keeps across calls, so that a step allocates nothing: the model broadcast
// into packs and each thread's pack of worlds (host/backends/lane_worlds.h). Made on first use,
// remade when the batch's storage or parameter layout changes (a parameter becoming per-world
// changes the gather). A batch's CPU backend object (host/batch/cpu_batch_backend.cpp) owns one
// (makeCpuBackendCache) and passes it in its context; opaque outside the backend.
template <class T>
struct CpuBackendCache;
template <class T>
struct CpuBackendCacheDeleter {
  void operator()(CpuBackendCache<T>* cache) const;
};
template <class T>
using CpuBackendCacheHandle = std::unique_ptr<CpuBackendCache<T>, CpuBackendCacheDeleter<T>>;
template <class T>
CpuBackendCacheHandle<T> makeCpuBackendCache();

// How the CPU backend runs a batch's calls: an option of each Batch (Batch::setCpuOptions), so
// that batches in one process may differ. CUDA batches ignore it.
struct CpuOptions {
  int threads = 0;    // OpenMP threads; 0: all cores (omp_get_max_threads())
  bool lanes = true;  // worlds a SIMD pack at a time (lanes.h), or one at a time on the scalar code (for comparisons)
  std::string isa;    // the packs' instruction set (cpu_isa.h); "" or "auto": LOCKSTEP_CPU_ISA if set, else the best

  CpuOptions(int threads_ = 0, bool lanes_ = true, std::string isa_ = "")
      : threads(threads_), lanes(lanes_), isa(std::move(isa_)) {}
};

// The threads of CpuOptions::threads 0: all cores (omp_get_max_threads()).
int defaultCpuThreads();
// CpuOptions::threads above this many per core are refused.
constexpr int kMaxCpuThreadsPerCore = 8;

// One instruction set's copy of the CPU backend's pack code (host/backends/cpu_pack_copies.h).
struct CpuPackCopy;

// CpuOptions as the CPU backend runs them (resolveCpuOptions, cpu_isa.h).
struct CpuRun {
  int threads = 1;
  bool lanes = true;
  const CpuPackCopy* copy = nullptr;  // null: the default ("auto")
};

template <class T>
struct BackendContext {
  ModelView<T> model;    // pointers in the backend's memory
  BatchView<T> batch;    // likewise
  WorkspaceLayout layout;
  T* scratch;            // CPU: one workspace per thread (cpu.threads of them); CUDA: one per world, strided across worlds
  void* stream;          // CUDA: the cudaStream_t to launch on; CPU: unused
  CpuBackendCache<T>* cpuCache = nullptr;  // CPU: kept by the batch across calls; null: made per call
  CpuRun cpu{};                            // CPU: the batch's options
};

// A model view over another scalar type T (a pack's, a dual's) in host memory: the frame arrays
// (views.h LOCKSTEP_MODEL_ARRAYS, kind Frames) converted from a view over S by convert(frame), the
// topology arrays shared with that view. Owns the converted frames; `view` points into them.
template <class T>
struct ConvertedModel {
#define LOCKSTEP_X(kind, type, name, count, doc) LOCKSTEP_CONVERTED_##kind(type, name, count)
#define LOCKSTEP_CONVERTED_Topology(type, name, count)
#define LOCKSTEP_CONVERTED_Frames(type, name, count) std::vector<type> name;
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_CONVERTED_Frames
#undef LOCKSTEP_CONVERTED_Topology
  ModelView<T> view{};

  template <class S, class Convert>
  ConvertedModel(const ModelView<S>& m, Convert convert) {
    view.sizes = m.sizes;
#define LOCKSTEP_CONVERTED_Topology(type, name, count) view.name = m.name;
#define LOCKSTEP_CONVERTED_Frames(type, name, count)                             \
  for (std::int64_t i = 0; i < m.sizes.count; ++i) name.push_back(convert(m.name[i])); \
  view.name = name.data();
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_CONVERTED_Frames
#undef LOCKSTEP_CONVERTED_Topology
  }
  ConvertedModel(const ConvertedModel&) = delete;  // view points into this object
  ConvertedModel& operator=(const ConvertedModel&) = delete;
#undef LOCKSTEP_X
};

// The compile-time choices of the per-world code for a model (template arguments of the step, the
// evaluation and the linearization: forward.h's ModelFeature bits), so that a model without sphere
// contacts or soft constraints runs code without their solves' registers and stack.
// dispatchModelFeatures is the one place they are chosen from the model: it calls
// f(ModelFeatures<...>{}) with the model's.
template <int kFlags>
struct ModelFeatures {
  static constexpr int flags = kFlags;
};
template <class F>
decltype(auto) dispatchModelFeatures(const Sizes& sizes, F&& f) {
  // (A model has not both: ModelBuilder::build refuses it, and no kernel is compiled for it.)
  if (sizes.nc > 0) return f(ModelFeatures<kFeatureSphereContacts>{});
  if (sizes.mujocoStepping) return f(ModelFeatures<kFeatureSoftConstraints>{});
  return f(ModelFeatures<0>{});
}

// The dual scalar of a batch of T: kDualTangents directions per pass (physics/derivatives.h).
template <class T>
using DualOf = Dual<T, kDualTangents>;

// A linearization (physics/derivatives.h) as a backend runs it; every pointer in the backend's memory.
template <class T>
struct LinearizeRequest {
  Linearization what;
  StepSettings<DualOf<T>> settings;  // one step, as step() takes it (Step only)
  Directions dirs;                   // dirs.param: the parameters' flat indices
  T* jacobian;                       // [rows * dirs.count()][worlds], world innermost
  const Transform<DualOf<T>>* X_PF;  // the model's constant frames as duals
  const Transform<DualOf<T>>* X_MB;
  DualWorldLayout layout;
  DualOf<T>* dualScratch;            // `slots` dual worlds of layout.total scalars
  std::int32_t* dualInts;            // and layout.ints int32 each
  std::int64_t slots;                // CPU: one per thread, each contiguous; CUDA: worlds per launch, world innermost
  std::int64_t first, count;         // the worlds [first, first + count) are linearized; the others' Jacobians kept
};

// The backend operations, each declared once: X(name, parameters). Every list of them (the table
// below, each backend's entries) is generated from this one. Indices, masks and states passed to
// resets live in the backend's memory (device pointers for CUDA); given states are row-major:
// q[count][nq], u[count][nu].
#define LOCKSTEP_BACKEND_OPERATIONS(X)                                                                    \
  X(advance, (const BackendContext<T>& ctx, const StepSettings<T>& settings))                             \
  X(evaluate, (const BackendContext<T>& ctx))                                                             \
  X(assemble, (const BackendContext<T>& ctx, T tol, int maxIterations))                                   \
  X(resetIndices, (const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count))        \
  X(resetMask, (const BackendContext<T>& ctx, const std::uint8_t* mask))                                  \
  X(setStates, (const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q, \
                const T* u))                                                                              \
  X(linearize, (const BackendContext<T>& ctx, const LinearizeRequest<T>& request))

// One backend's entry points: a Batch runs everything through the table of its backend.
template <class T>
struct BackendOps {
#define LOCKSTEP_X(name, parameters) void(*name) parameters;
  LOCKSTEP_BACKEND_OPERATIONS(LOCKSTEP_X)
#undef LOCKSTEP_X
};

// The initializer of a table from the functions advance<T>, evaluate<T>, ... found where it is
// expanded (each backend's own, with T in scope): `static const BackendOps<T> ops LOCKSTEP_BACKEND_TABLE;`.
#define LOCKSTEP_BACKEND_ENTRY(name, parameters) &name<T>,
#define LOCKSTEP_BACKEND_TABLE \
  { LOCKSTEP_BACKEND_OPERATIONS(LOCKSTEP_BACKEND_ENTRY) }

template <class T>
const BackendOps<T>& cpuBackend();
template <class T>
const BackendOps<T>& cudaBackend();

}  // namespace lockstep
