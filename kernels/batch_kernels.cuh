// The CUDA backend: thin kernels that find their world, check bounds and call the per-world
// physics, and host launchers that size the grid, launch on the batch's stream and check for
// launch errors. One thread per world; each world's workspace is strided across worlds in device
// memory so that consecutive threads touch consecutive addresses.
//
// Included by batch_kernels_float.cu and batch_kernels_double.cu, each of which instantiates one
// precision: the per-world code is the costliest to compile, and the two halves build in parallel.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernel_parameters.h"

namespace lockstep {

namespace {

using namespace kernels;

// kFeatures: one kernel per model kind (backend.h dispatchModelFeatures). kMinBlocks: the blocks of
// kBlock threads ptxas must let reside on one SM, i.e. at most 65,536 / (kBlock * kMinBlocks)
// registers a thread (1: no cap below the 255 of the ISA). More resident warps hide more of the
// memory latency; fewer registers spill more to local memory. Which wins is measured, not guessed
// (bench/README.md, "GPU figures on one H200"): advance picks stepMinBlocks.
template <class T, int kFeatures, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    advanceKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS, WorkspaceLayout layout,
                  T* __restrict__ scratch, StepSettings<T> settings) {
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

// The step kernel's occupancy: the resident blocks of kBlock threads per SM asked of ptxas. Measured
// on one H200 (bench/README.md, "GPU figures on one H200"): without constraints, 4 blocks (128
// registers, 16 warps per SM) in double and 6 (80 registers, 24 warps) in float beat ptxas's own
// choice of 255 registers (8 warps) though they spill more (chain-7 double: 4.6e7 to 5.4e7
// world-steps/s);
// with constraints, ptxas's own: 3 and 4 blocks were slower for Ant and Humanoid under MuJoCo's law
// and for chain-7-seed in double (their frames are twice as large, and capped registers spill into
// them).
template <class T, int kFeatures>
constexpr int stepMinBlocks() {
  if (kFeatures != 0) return 1;
  return std::is_same<T, double>::value ? 4 : 6;
}

// LOCKSTEP_CUDA_STEP_MIN_BLOCKS, read once: another occupancy for the step kernel, among those a
// build with LOCKSTEP_CUDA_OCCUPANCY_VARIANTS compiled (the GPU check's pack: scripts/gpu-check.sh),
// to measure them side by side on one card. 0 when unset.
inline int stepMinBlocksAsked() {
  static const int asked = [] {
    const char* text = std::getenv("LOCKSTEP_CUDA_STEP_MIN_BLOCKS");
    return text && *text ? std::atoi(text) : 0;
  }();
  return asked;
}

template <class T, int kFeatures, int kMinBlocks>
void launchAdvance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  advanceKernel<T, kFeatures, kMinBlocks>
      <<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), settings);
}

template <class T>
void advance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
    constexpr int kFeatures = decltype(features)::flags;
    constexpr int kOwn = stepMinBlocks<T, kFeatures>();
    const int asked = stepMinBlocksAsked();
    if (asked == 0 || asked == kOwn) return launchAdvance<T, kFeatures, kOwn>(ctx, settings);
#ifdef LOCKSTEP_CUDA_OCCUPANCY_VARIANTS
    switch (asked) {
      case 1: return launchAdvance<T, kFeatures, 1>(ctx, settings);
      case 3: return launchAdvance<T, kFeatures, 3>(ctx, settings);
      case 4: return launchAdvance<T, kFeatures, 4>(ctx, settings);
      case 6:
        if constexpr (kFeatures == 0) return launchAdvance<T, kFeatures, 6>(ctx, settings);
        break;
      default: break;
    }
#endif
    throw std::invalid_argument("LOCKSTEP_CUDA_STEP_MIN_BLOCKS=" + std::to_string(asked) +
                                ": this build has no step kernel for that occupancy (it has " + std::to_string(kOwn) +
#ifdef LOCKSTEP_CUDA_OCCUPANCY_VARIANTS
                                ", and 1, 3, 4 (and 6 for models without constraints)"
#else
                                "; configure with -DLOCKSTEP_CUDA_OCCUPANCY_VARIANTS=ON for others"
#endif
                                ")");
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
