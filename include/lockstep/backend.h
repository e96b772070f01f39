// Lockstep backends: the entry points through which a Batch runs the per-world physics on the CPU
// (OpenMP over worlds, host/backends/cpu_backend.cpp) or on a CUDA device (one thread per world,
// kernels/batch_kernels.cu). Both take the same context and run the same per-world functions.
#pragma once

#include <cstdint>
#include <memory>

#include "lockstep/world.h"

namespace lockstep {

// What the CPU backend keeps across calls, so that a step allocates nothing: the model broadcast
// into packs and each thread's pack of worlds (lanes.h). Made on first use, remade when the batch's
// storage or parameter layout changes (a parameter becoming per-world changes the gather). A Batch
// owns one (makeCpuBackendCache) and passes it in its context; opaque outside cpu_backend.cpp.
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

template <class T>
struct BackendContext {
  ModelView<T> model;    // pointers in the backend's memory
  BatchView<T> batch;    // likewise
  WorkspaceLayout layout;
  T* scratch;            // CPU: one workspace per thread; CUDA: one per world, strided across worlds
  void* stream;          // CUDA: the cudaStream_t to launch on; CPU: unused
  CpuBackendCache<T>* cpuCache = nullptr;  // CPU: kept by the batch across calls; null: made per call
};

// Indices, masks and states passed to resets live in the backend's memory (device pointers for
// CUDA). Given states are row-major: q[count][nq], u[count][nu].
#define LOCKSTEP_BACKEND_FUNCTIONS(prefix)                                                                   \
  template <class T>                                                                                       \
  void prefix##Advance(const BackendContext<T>& ctx, const StepSettings<T>& settings);                    \
  template <class T>                                                                                       \
  void prefix##Evaluate(const BackendContext<T>& ctx);                                                     \
  template <class T>                                                                                       \
  void prefix##Assemble(const BackendContext<T>& ctx, T tol, int maxIterations);                           \
  template <class T>                                                                                       \
  void prefix##ResetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count); \
  template <class T>                                                                                       \
  void prefix##ResetMask(const BackendContext<T>& ctx, const std::uint8_t* mask);                          \
  template <class T>                                                                                       \
  void prefix##SetStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count,     \
                         const T* q, const T* u);

LOCKSTEP_BACKEND_FUNCTIONS(cpu)
LOCKSTEP_BACKEND_FUNCTIONS(cuda)
#undef LOCKSTEP_BACKEND_FUNCTIONS

// Threads the CPU backend uses (OpenMP); 0 restores the default (all cores).
void setCpuThreads(int n);
int cpuThreads();
// Whether the CPU backend steps a SIMD pack of worlds at a time (lanes.h; the default) or one
// world at a time (for comparisons).
void setCpuLanes(bool on);
bool cpuLanes();

}  // namespace lockstep
