// The CPU backend: the same per-world code as the CUDA kernels, one world at a time on each core.
// Each thread owns one workspace (stride 1); worlds are independent, so results do not depend on
// the number of threads or on which thread ran which world.
#include <omp.h>

#include "lockstep/batch.h"

namespace lockstep {

namespace {
int gCpuThreads = 0;
}

void setCpuThreads(int n) { gCpuThreads = n < 0 ? 0 : n; }
int cpuThreads() { return gCpuThreads > 0 ? gCpuThreads : omp_get_max_threads(); }

template <class T>
void cpuAdvance(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch,
                const StepSettings<T>& settings) {
  const int threads = cpuThreads();
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{L, {scratch + static_cast<std::int64_t>(omp_get_thread_num()) * L.total, 1}};
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < batch.nWorlds; ++w) advanceWorld(model, batch.world(w), ws, settings);
  }
}

template <class T>
void cpuAssemble(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch, T tol,
                 int maxIterations) {
  const int threads = cpuThreads();
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{L, {scratch + static_cast<std::int64_t>(omp_get_thread_num()) * L.total, 1}};
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < batch.nWorlds; ++w) assembleWorld(model, batch.world(w), ws, tol, maxIterations);
  }
}

template <class T>
void cpuEvaluate(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch) {
  const int threads = cpuThreads();
#pragma omp parallel num_threads(threads)
  {
    const Workspace<T> ws{L, {scratch + static_cast<std::int64_t>(omp_get_thread_num()) * L.total, 1}};
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < batch.nWorlds; ++w) evaluateWorld(model, batch.world(w), ws);
  }
}

template void cpuAdvance<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*,
                                const StepSettings<float>&);
template void cpuAdvance<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&, double*,
                                 const StepSettings<double>&);
template void cpuAssemble<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*,
                                 float, int);
template void cpuAssemble<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&, double*,
                                  double, int);
template void cpuEvaluate<float>(const ModelView<float>&, const BatchView<float>&, const WorkspaceLayout&, float*);
template void cpuEvaluate<double>(const ModelView<double>&, const BatchView<double>&, const WorkspaceLayout&, double*);

}  // namespace lockstep
