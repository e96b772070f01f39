// The CUDA backend's linearizations (physics/derivatives.h): the per-world code on dual numbers,
// one thread per world, each world's dual world strided across the worlds of a launch in the
// request's scratch; launched in pieces of as many worlds as the request has dual worlds. Files of
// their own: its four kernels (float and double, with and without the constraint solve) are the
// costliest code to compile. Included by linearize_kernels_float.cu and linearize_kernels_double.cu,
// each of which instantiates one precision, so that they build in parallel with each other and with
// batch_kernels_*.cu.
#pragma once

#include <algorithm>

#include "kernel_parameters.h"

namespace lockstep {
namespace kernels {

namespace {

// Worlds w0 .. w0 + request.slots - 1, one thread each, its dual world in the request's scratch
// (world innermost); the Jacobian of world w is strided across all the batch's worlds.
template <class T, int kFeatures>
__global__ void linearizeKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                                LinearizeRequest<T> request, std::int64_t w0) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t i = threadIndex(), w = w0 + i;
  if (i >= request.slots || w >= request.first + request.count) return;
  const ModelView<DualOf<T>> dualModel = model.withFrames(request.X_PF, request.X_MB);
  const DualWorld<DualOf<T>> d =
      dualWorldAt(sizes, request.layout, request.dualScratch + i, request.dualInts + i, request.slots);
  linearizeWorld<T, kDualTangents, kFeatures>(dualModel, batch.world(w), d, request.settings, request.dirs,
                                                 request.what, Strided<T>{request.jacobian + w, batch.nWorlds});
}

}  // namespace

template <class T>
void launchLinearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& request) {
  const std::int64_t end = request.first + request.count;
  for (std::int64_t w0 = request.first; w0 < end; w0 += request.slots) {
    const std::int64_t n = std::min<std::int64_t>(request.slots, end - w0);
    dispatchModelFeatures(ctx.model.sizes, [&](auto features) {
      linearizeKernel<T, decltype(features)::flags><<<gridFor(n), kBlock, 0, streamOf(ctx.stream)>>>(
          LOCKSTEP_MODEL_ARGUMENTS_OF_CTX, LOCKSTEP_DATA_ARGUMENTS_OF_CTX, request, w0);
    });
    checkCuda(cudaGetLastError(), "linearizeKernel launch");
  }
}

}  // namespace kernels
}  // namespace lockstep
