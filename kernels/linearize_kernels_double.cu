// The CUDA backend's linearizations (linearize_kernels.cuh) in double.
#include "linearize_kernels.cuh"

namespace lockstep {
namespace kernels {

template void launchLinearize<double>(const BackendContext<double>&, const LinearizeRequest<double>&);

}  // namespace kernels
}  // namespace lockstep
