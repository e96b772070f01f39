// The CUDA backend's kernels and launchers (batch_kernels.cuh) in float.
#include "batch_kernels.cuh"

namespace lockstep {

template const BackendOps<float>& cudaBackend<float>();

}  // namespace lockstep
