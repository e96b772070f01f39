#include <string>

#include "gpu_spatial_suite.h"
#include "lockstep/backends/device.h"

namespace lockstep::test {

__global__ void spatialSuiteKernel(const SpatialCase* __restrict__ cases, SpatialResults* __restrict__ results,
                                   int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) evaluateSpatialSuite(cases[i], results[i]);
}

bool evaluateSpatialSuiteOnDevice(const SpatialCase* cases, SpatialResults* results, int n, std::string* why) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) {
    *why = dev.reason;
    return false;
  }
  SpatialCase* dCases = nullptr;
  SpatialResults* dResults = nullptr;
  checkCuda(cudaMalloc(&dCases, sizeof(SpatialCase) * n), "cudaMalloc cases");
  checkCuda(cudaMalloc(&dResults, sizeof(SpatialResults) * n), "cudaMalloc results");
  checkCuda(cudaMemcpy(dCases, cases, sizeof(SpatialCase) * n, cudaMemcpyHostToDevice), "copy cases");
  spatialSuiteKernel<<<(n + 127) / 128, 128>>>(dCases, dResults, n);
  checkCuda(cudaGetLastError(), "spatialSuiteKernel launch");
  checkCuda(cudaMemcpy(results, dResults, sizeof(SpatialResults) * n, cudaMemcpyDeviceToHost), "copy results");
  cudaFree(dCases);
  cudaFree(dResults);
  return true;
}

}  // namespace lockstep::test
