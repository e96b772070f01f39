// The CUDA backend: thin kernels that find their world, check bounds and call the per-world
// physics, and host launchers that size the grid, launch on the batch's stream and check for
// launch errors. One thread per world; each world's workspace is strided across worlds in device
// memory so that consecutive threads touch consecutive addresses.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "lockstep/backends/backend.h"
#include "lockstep/backends/device.h"

namespace lockstep {

namespace {

constexpr int kBlock = 128;

// Kernel parameters, model then data, each array its own `__restrict__` parameter: the model's
// arrays, then every per-world field (`const` where the kernels only read it: the users' inputs and
// the initial states) and every per-world parameter (`const`), then the workspaces. The data lists
// are generated from the registry (views.h); a kernel puts them back into its BatchView.
#define LOCKSTEP_MODEL_PARAMETERS(T)                                                                          \
  Sizes sizes, const BodyTopology* __restrict__ body, const Transform<T>* __restrict__ X_PF,                  \
      const Transform<T>* __restrict__ X_MB, const ElementTopology* __restrict__ bushing,                     \
      const ElementTopology* __restrict__ spring, const ElementTopology* __restrict__ contact,                 \
      const ElementTopology* __restrict__ ground
#define LOCKSTEP_MODEL_ARGUMENTS(m) m.sizes, m.body, m.X_PF, m.X_MB, m.bushing, m.spring, m.contact, m.ground

__host__ __device__ constexpr bool readOnlyInKernels(Role role) { return role == Role::Input || role == Role::Reset; }
template <class P, bool kReadOnly>
using KernelPointer = std::conditional_t<kReadOnly, const P*, P*>;

#define LOCKSTEP_FIELD_PARAMETER(type, name, per, role, prefix, parts, doc) \
  , KernelPointer<type, readOnlyInKernels(role)> __restrict__ name
#define LOCKSTEP_PARAM_PARAMETER(type, name, per, role, prefix, parts, doc) \
  , const type* __restrict__ name##Data, ParamArray<type> name
#define LOCKSTEP_DATA_PARAMETERS \
  std::int64_t nWorlds LOCKSTEP_WORLD_FIELDS(LOCKSTEP_FIELD_PARAMETER) LOCKSTEP_PARAM_FIELDS(LOCKSTEP_PARAM_PARAMETER)
#define LOCKSTEP_FIELD_ARGUMENT(type, name, per, role, prefix, parts, doc) , ctx.batch.name
#define LOCKSTEP_PARAM_ARGUMENT(type, name, per, role, prefix, parts, doc) , ctx.batch.name.data, ctx.batch.name
#define LOCKSTEP_DATA_ARGUMENTS_OF_CTX \
  ctx.batch.nWorlds LOCKSTEP_WORLD_FIELDS(LOCKSTEP_FIELD_ARGUMENT) LOCKSTEP_PARAM_FIELDS(LOCKSTEP_PARAM_ARGUMENT)
// The kernel's ModelView `model` and BatchView `batch` from its parameters (the per-world code
// never writes a field that came in as const).
#define LOCKSTEP_FIELD_VIEW(type, name, per, role, prefix, parts, doc) batch.name = const_cast<type*>(name);
#define LOCKSTEP_PARAM_VIEW(type, name, per, role, prefix, parts, doc) \
  batch.name = name;                                                   \
  batch.name.data = name##Data;
#define LOCKSTEP_VIEWS_FROM_PARAMETERS(T)                                       \
  const ModelView<T> model{sizes, body, X_PF, X_MB, bushing, spring, contact, ground}; \
  BatchView<T> batch;                                                           \
  batch.nWorlds = nWorlds;                                                      \
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_FIELD_VIEW)                                    \
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_PARAM_VIEW)

__device__ __forceinline__ std::int64_t threadIndex() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}


// kConstraints: one kernel per model kind, so that models without sphere contacts run a kernel
// without the constraint solver's registers and stack.
template <class T, bool kConstraints>
__global__ void advanceKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                              WorkspaceLayout layout, T* __restrict__ scratch, StepSettings<T> settings) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w < batch.nWorlds)
    advanceWorld<T, kConstraints>(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w), settings);
}

template <class T, bool kConstraints>
__global__ void evaluateKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                               WorkspaceLayout layout, T* __restrict__ scratch) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t w = threadIndex();
  if (w < batch.nWorlds)
    evaluateWorld<T, kConstraints>(model, batch.world(w), deviceWorkspace(layout, scratch, batch.nWorlds, w));
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

// Worlds w0 .. w0 + request.slots - 1, one thread each, its dual world in the request's scratch
// (world innermost); the Jacobian of world w is strided across all the batch's worlds.
template <class T, bool kConstraints>
__global__ void linearizeKernel(LOCKSTEP_MODEL_PARAMETERS(T), LOCKSTEP_DATA_PARAMETERS,
                                LinearizeRequest<T> request, std::int64_t w0) {
  LOCKSTEP_VIEWS_FROM_PARAMETERS(T)
  const std::int64_t i = threadIndex(), w = w0 + i;
  if (i >= request.slots || w >= batch.nWorlds) return;
  const ModelView<DualOf<T>> dualModel{sizes, body, request.X_PF, request.X_MB, bushing, spring, contact, ground};
  const DualWorld<DualOf<T>> d =
      dualWorldAt(sizes, request.layout, request.dualScratch + i, request.dualInts + i, request.slots);
  linearizeWorld<T, kDualTangents, kConstraints>(dualModel, batch.world(w), d, request.settings, request.dirs,
                                                 request.what, Strided<T>{request.jacobian + w, batch.nWorlds});
}

// The arguments every kernel starts with, from the launcher's backend context `ctx`.
#define LOCKSTEP_CONTEXT_ARGUMENTS(ctx) \
  LOCKSTEP_MODEL_ARGUMENTS(ctx.model), LOCKSTEP_DATA_ARGUMENTS_OF_CTX, ctx.layout, ctx.scratch

unsigned gridFor(std::int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }
cudaStream_t streamOf(const void* s) { return static_cast<cudaStream_t>(const_cast<void*>(s)); }

// ---- the backend operations (backend.h): host launchers ----------------------------------------

template <class T>
void advance(const BackendContext<T>& ctx, const StepSettings<T>& settings) {
  if (ctx.model.sizes.nc > 0)
    advanceKernel<T, true><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), settings);
  else
    advanceKernel<T, false><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx), settings);
  checkCuda(cudaGetLastError(), "advanceKernel launch");
}

template <class T>
void evaluate(const BackendContext<T>& ctx) {
  if (ctx.model.sizes.nc > 0)
    evaluateKernel<T, true><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx));
  else
    evaluateKernel<T, false><<<gridFor(ctx.batch.nWorlds), kBlock, 0, streamOf(ctx.stream)>>>(LOCKSTEP_CONTEXT_ARGUMENTS(ctx));
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

// As many worlds per launch as the request has dual worlds.
template <class T>
void linearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& request) {
  for (std::int64_t w0 = 0; w0 < ctx.batch.nWorlds; w0 += request.slots) {
    const std::int64_t n = std::min<std::int64_t>(request.slots, ctx.batch.nWorlds - w0);
    if (ctx.model.sizes.nc > 0)
      linearizeKernel<T, true><<<gridFor(n), kBlock, 0, streamOf(ctx.stream)>>>(
          LOCKSTEP_MODEL_ARGUMENTS(ctx.model), LOCKSTEP_DATA_ARGUMENTS_OF_CTX, request, w0);
    else
      linearizeKernel<T, false><<<gridFor(n), kBlock, 0, streamOf(ctx.stream)>>>(
          LOCKSTEP_MODEL_ARGUMENTS(ctx.model), LOCKSTEP_DATA_ARGUMENTS_OF_CTX, request, w0);
    checkCuda(cudaGetLastError(), "linearizeKernel launch");
  }
}

}  // namespace

template <class T>
const BackendOps<T>& cudaBackend() {
  static const BackendOps<T> ops LOCKSTEP_BACKEND_TABLE;
  return ops;
}
template const BackendOps<float>& cudaBackend<float>();
template const BackendOps<double>& cudaBackend<double>();

}  // namespace lockstep
