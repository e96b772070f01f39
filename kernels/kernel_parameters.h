// What every kernel of the CUDA backend shares: its parameters, generated from the field registry,
// the views it makes of them, its thread's index and the launch geometry. Private to kernels/.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "lockstep/backends/backend.h"
#include "lockstep/backends/device.h"

namespace lockstep {
namespace kernels {

constexpr int kBlock = 128;

// Kernel parameters, model then data, each array its own `__restrict__` parameter: the model's
// arrays, then every per-world field (`const` where the kernels only read it: the users' inputs and
// the initial states) and every per-world parameter (`const`), then the workspaces. The data lists
// are generated from the registry (views.h); a kernel puts them back into its BatchView.
// The model's arrays (views.h LOCKSTEP_MODEL_ARRAYS) each its own parameter, with T in scope.
#define LOCKSTEP_MODEL_ARRAY_PARAMETER(kind, type, name, count, doc) , const type* __restrict__ name
#define LOCKSTEP_MODEL_ARRAY_ARGUMENT(kind, type, name, count, doc) , ctx.model.name
#define LOCKSTEP_MODEL_ARRAY_VIEW(kind, type, name, count, doc) model.name = name;
#define LOCKSTEP_MODEL_PARAMETERS(T) Sizes sizes LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_MODEL_ARRAY_PARAMETER)
#define LOCKSTEP_MODEL_ARGUMENTS_OF_CTX ctx.model.sizes LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_MODEL_ARRAY_ARGUMENT)

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
#define LOCKSTEP_VIEWS_FROM_PARAMETERS(T)                   \
  ModelView<T> model;                                       \
  model.sizes = sizes;                                      \
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_MODEL_ARRAY_VIEW)          \
  BatchView<T> batch;                                       \
  batch.nWorlds = nWorlds;                                                      \
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_FIELD_VIEW)                                    \
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_PARAM_VIEW)

__device__ __forceinline__ std::int64_t threadIndex() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}


// The arguments every kernel starts with, from the launcher's backend context `ctx`.
#define LOCKSTEP_CONTEXT_ARGUMENTS(ctx) \
  LOCKSTEP_MODEL_ARGUMENTS_OF_CTX, LOCKSTEP_DATA_ARGUMENTS_OF_CTX, ctx.layout, ctx.scratch

inline unsigned gridFor(std::int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }
inline cudaStream_t streamOf(const void* s) { return static_cast<cudaStream_t>(const_cast<void*>(s)); }

// The linearizations' launcher (linearize_kernels.cuh, instantiated in linearize_kernels_*.cu): the
// backend operation `linearize`.
template <class T>
void launchLinearize(const BackendContext<T>& ctx, const LinearizeRequest<T>& request);

}  // namespace kernels
}  // namespace lockstep
