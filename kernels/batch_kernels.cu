// The CUDA backend: thin kernels that find their world and call the per-world physics, and the
// host launchers that size the grid, launch and check for errors. One thread per world; each
// world's workspace is strided across worlds in device memory so that accesses coalesce.
#include <cuda_runtime.h>

#include "lockstep/batch.h"
#include "lockstep/device.h"

namespace lockstep {

namespace {

constexpr int kBlock = 128;

template <class T>
__global__ void advanceKernel(ModelView<T> model, BatchView<T> batch, WorkspaceLayout L, T* __restrict__ scratch,
                              StepSettings<T> settings) {
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (w >= batch.nWorlds) return;
  const Workspace<T> ws{L, {scratch + w, batch.nWorlds}};
  advanceWorld(model, batch.world(w), ws, settings);
}

template <class T>
__global__ void assembleKernel(ModelView<T> model, BatchView<T> batch, WorkspaceLayout L, T* __restrict__ scratch,
                               T tol, int maxIterations) {
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (w >= batch.nWorlds) return;
  const Workspace<T> ws{L, {scratch + w, batch.nWorlds}};
  assembleWorld(model, batch.world(w), ws, tol, maxIterations);
}

template <class T>
__global__ void evaluateKernel(ModelView<T> model, BatchView<T> batch, WorkspaceLayout L, T* __restrict__ scratch) {
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (w >= batch.nWorlds) return;
  const Workspace<T> ws{L, {scratch + w, batch.nWorlds}};
  evaluateWorld(model, batch.world(w), ws);
}

unsigned gridFor(std::int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

}  // namespace

template <class T>
void cudaAdvance(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch,
                 const StepSettings<T>& settings) {
  advanceKernel<T><<<gridFor(batch.nWorlds), kBlock>>>(model, batch, L, scratch, settings);
  checkCuda(cudaGetLastError(), "advanceKernel launch");
}

template <class T>
void cudaAssemble(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch, T tol,
                  int maxIterations) {
  assembleKernel<T><<<gridFor(batch.nWorlds), kBlock>>>(model, batch, L, scratch, tol, maxIterations);
  checkCuda(cudaGetLastError(), "assembleKernel launch");
}

template <class T>
void cudaEvaluate(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch) {
  evaluateKernel<T><<<gridFor(batch.nWorlds), kBlock>>>(model, batch, L, scratch);
  checkCuda(cudaGetLastError(), "evaluateKernel launch");
}

template void cudaAdvance<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*,
                                 const StepSettings<float>&);
template void cudaAdvance<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&, double*,
                                  const StepSettings<double>&);
template void cudaAssemble<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*,
                                  float, int);
template void cudaAssemble<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&,
                                   double*, double, int);
template void cudaEvaluate<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*);
template void cudaEvaluate<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&,
                                   double*);

}  // namespace lockstep
