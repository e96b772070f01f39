// The CUDA backend: thin kernels that find their world, check bounds and call the per-world
// physics, and host launchers that size the grid, launch on the batch's stream and check for
// launch errors. One thread per world; each world's workspace is strided across worlds in device
// memory so that consecutive threads touch consecutive addresses.
//
// Included by batch_kernels_float.cu and batch_kernels_double.cu, each of which instantiates one
// precision: the per-world code is the costliest to compile, and the two halves build in parallel.
#pragma once

#include "kernel_parameters.h"

namespace lockstep {

namespace {

using namespace kernels;

// kConstraints: one kernel per model kind (backend.h dispatchModelFeatures).
template <class T, int kFeatures>
__global__ void advanceKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                              WorkspaceLayout layout, T* __restrict__ scratch, StepSettings<T> settings) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w < batch.nWorlds)
    advanceWorld<T, kFeatures>(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w), settings);
}

template <class T, int kFeatures>
__global__ void evaluateKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                               WorkspaceLayout layout, T* __restrict__ scratch) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w < batch.nWorlds)
    evaluateWorld<T, kFeatures>(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w));
}

template <class T>
__global__ void assembleKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                               WorkspaceLayout layout, T* __restrict__ scratch, T tol, int maxIterations) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w >= batch.nWorlds) return;
  const WorldView<T> view = batch.world(w);
  const Workspace<T> ws = deviceWorkspace(layout, scratch, batch.nWorlds, w);
  assembleWorld(model, view, ws, tol, maxIterations);
  observeWorld(model, view, ws);
}

template <class T>
__global__ void resetIndicesKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                                   WorkspaceLayout layout, T* __restrict__ scratch,
                                   const std::int64_t* __restrict__ indices, std::int64_t count) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t i = threadIndex();
  if (i >= count) return;
  const std::int64_t w = indices[i];
  if (w >= 0 && w < batch.nWorlds)
    resetWorldState(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w));
}

template <class T>
__global__ void resetMaskKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                                WorkspaceLayout layout, T* __restrict__ scratch, const std::uint8_t* __restrict__ mask) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w < batch.nWorlds && mask[w])
    resetWorldState(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w));
}

template <class T>
__global__ void setStatesKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                                WorkspaceLayout layout, T* __restrict__ scratch,
                                const std::int64_t* __restrict__ indices, std::int64_t count,
                                const T* __restrict__ givenQ, const T* __restrict__ givenU) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t i = threadIndex();
  if (i >= count) return;
  const std::int64_t w = indices[i];
  if (w >= 0 && w < batch.nWorlds)
    setWorldState(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w), givenQ + i * sizes.nq,
                  givenU + i * sizes.nu);
}

// ---- the backend operations (backend.h): host launchers ----------------------------------------

template <class T>
void advance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    advanceKernel<T, decltype(features)::flags>
        <<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), settings);
  });
  checkCuda(cudaGetLastError(), "advanceKernel launch");
}

template <class T>
void evaluate(const BackendContext<T>& ctx) {
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    evaluateKernel<T, decltype(features)::flags>
        <<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx));
  });
  checkCuda(cudaGetLastError(), "evaluateKernel launch");
}

template <class T>
void assemble(const BackendContext<T>& ctx, T tol, int maxIterations) {
  assembleKernel<T><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), tol, maxIterations);
  checkCuda(cudaGetLastError(), "assembleKernel launch");
}

template <class T>
void resetIndices(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count) {
  if (count == 0) return;
  resetIndicesKernel<T><<<gridFor(count), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), indices, count);
  checkCuda(cudaGetLastError(), "resetIndicesKernel launch");
}

template <class T>
void resetMask(const BackendContext<T>& ctx, const std::uint8_t* mask) {
  resetMaskKernel<T><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), mask);
  checkCuda(cudaGetLastError(), "resetMaskKernel launch");
}

template <class T>
void setStates(const BackendContext<T>& ctx, const std::int64_t* indices, std::int64_t count, const T* q,
               const T* u) {
  if (count == 0) return;
  setStatesKernel<T><<<gridFor(count), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), indices, count, q, u);
  checkCuda(cudaGetLastError(), "setStatesKernel launch");
}

// Linearizations: their kernel and launcher are in linearize_kernels.cuh (compiled beside this file).
template <class T>
void linearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& request) {
  launchLinearize<T>(ctx, request);
}

}  // namespace

template <class T>
const BackendOps<T>& cudaBackend() {
  static const BackendOps<T> ops LOCKSTEP_BACKEND_TABLE;
  return ops;
}

}  // namespace lockstep
