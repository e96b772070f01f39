// The CUDA backend: thin kernels that find their world, check bounds and call the per-world
// physics, and host launchers that size the grid, launch on the batch's stream and check for
// launch errors. One thread per world; each world's workspace is strided across worlds in device
// memory so that consecutive threads touch consecutive addresses.
#include <cuda_runtime.h>

#include "lockstep/backend.h"
#include "lockstep/device.h"

namespace lockstep {

namespace {

constexpr int kBlock = 128;

__device__ __forceinline__ std::int64_t threadIndex() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <class T>
__device__ __forceinline__ Workspace<T> worldWorkspace(const BackendContext<T>& ctx, std::int64_t w) {
  return {ctx.layout, {ctx.scratch + w, ctx.batch.nWorlds}};
}

// kConstraints: one kernel per model kind, so that models without sphere contacts run a kernel
// without the constraint solver's registers and stack.
template <class T, bool kConstraints>
__global__ void advanceKernel(BackendContext<T> ctx, StepSettings<T> settings) {
  const std::int64_t w = threadIndex();
  if (w < ctx.batch.nWorlds)
    advanceWorld<T, kConstraints>(ctx.model, ctx.batch.world(w), worldWorkspace(ctx, w), settings);
}

template <class T, bool kConstraints>
__global__ void evaluateKernel(BackendContext<T> ctx) {
  const std::int64_t w = threadIndex();
  if (w < ctx.batch.nWorlds) evaluateWorld<T, kConstraints>(ctx.model, ctx.batch.world(w), worldWorkspace(ctx, w));
}

template <class T>
__global__ void assembleKernel(BackendContext<T> ctx, T tol, int maxIterations) {
  const std::int64_t w = threadIndex();
  if (w >= ctx.batch.nWorlds) return;
  const WorldView<T> view = ctx.batch.world(w);
  assembleWorld(ctx.model, view, worldWorkspace(ctx, w), tol, maxIterations);
  observeWorld(ctx.model, view, worldWorkspace(ctx, w));
}

template <class T>
__global__ void resetIndicesKernel(BackendContext<T> ctx, const std::int64_t* __restrict__ indices, std::int64_t count) {
  const std::int64_t i = threadIndex();
  if (i >= count) return;
  const std::int64_t w = indices[i];
  if (w >= 0 && w < ctx.batch.nWorlds) resetWorldState(ctx.model, ctx.batch.world(w), worldWorkspace(ctx, w));
}

template <class T>
__global__ void resetMaskKernel(BackendContext<T> ctx, const std::uint8_t* __restrict__ mask) {
  const std::int64_t w = threadIndex();
  if (w < ctx.batch.nWorlds && mask[w]) resetWorldState(ctx.model, ctx.batch.world(w), worldWorkspace(ctx, w));
}

template <class T>
__global__ void setStatesKernel(BackendContext<T> ctx, const std::int64_t* __restrict__ indices, std::int64_t count,
                                const T* __restrict__ q, const T* __restrict__ u) {
  const std::int64_t i = threadIndex();
  if (i >= count) return;
  const std::int64_t w = indices[i];
  const Sizes& s = ctx.model.sizes;
  if (w >= 0 && w < ctx.batch.nWorlds)
    setWorldState(ctx.model, ctx.batch.world(w), worldWorkspace(ctx, w), q + i * s.nq, u + i * s.nu);
}

unsigned gridFor(std::int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }
cudaStream_t streamOf(const void* s) { return static_cast<cudaStream_t>(const_cast<void*>(s)); }

}  // namespace

template <class T>
void cudaAdvance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  if (ctx.model.sizes.nc > 0)
    advanceKernel<T, true><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx, settings);
  else
    advanceKernel<T, false><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx, settings);
  checkCuda(cudaGetLastError(), "advanceKernel launch");
}

template <class T>
void cudaEvaluate(const BackendContext<T>& ctx) {
  if (ctx.model.sizes.nc > 0)
    evaluateKernel<T, true><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx);
  else
    evaluateKernel<T, false><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx);
  checkCuda(cudaGetLastError(), "evaluateKernel launch");
}

template <class T>
void cudaAssemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  assembleKernel<T><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx, tol, maxIterations);
  checkCuda(cudaGetLastError(), "assembleKernel launch");
}

template <class T>
void cudaResetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  if (count == 0) return;
  resetIndicesKernel<T><<<gridFor(count), kBlock, 0, streamOf(ctx.stream)>>>(ctx, indices, count);
  checkCuda(cudaGetLastError(), "resetIndicesKernel launch");
}

template <class T>
void cudaResetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  resetMaskKernel<T><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(ctx, mask);
  checkCuda(cudaGetLastError(), "resetMaskKernel launch");
}

template <class T>
void cudaSetStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
                   const T* u) {
  if (count == 0) return;
  setStatesKernel<T><<<gridFor(count), kBlock, 0, streamOf(ctx.stream)>>>(ctx, indices, count, q, u);
  checkCuda(cudaGetLastError(), "setStatesKernel launch");
}

#define LOCKSTEP_INSTANTIATE(T)                                                                                \
  template void cudaAdvance<T>(const BackendContext<T>&, const StepSettings<T>&);                             \
  template void cudaEvaluate<T>(const BackendContext<T>&);                                                     \
  template void cudaAssemble<T>(const BackendContext<T>&, T, int);                                             \
  template void cudaResetIndices<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t);              \
  template void cudaResetMask<T>(const BackendContext<T>&, const std::uint8_t*);                               \
  template void cudaSetStates<T>(const BackendContext<T>&, const std::int64_t*, std::int64_t, const T*, const T*);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
