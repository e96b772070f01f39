// The CUDA backend's linearizations (linearize_kernels.cuh) in float.
#include "linearize_kernels.cuh"

namespace lockstep {
namespace kernels {

template void launchLinearize<float>(const BackendContext<float>&, const LinearizeRequest<float>&);

}  // namespace kernels
}  // namespace lockstep
