// The CUDA backend's kernels and launchers (batch_kernels.cuh) in double.
#include "batch_kernels.cuh"

namespace lockstep {

template const BackendOps<double>& cudaBackend<double>();

}  // namespace lockstep
