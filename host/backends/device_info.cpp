#include "lockstep/backends/device.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace lockstep {

DeviceInfo queryDevice() {
  DeviceInfo info;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error so later queries start clean
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device present";
    return info;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    info.reason = "cannot read the CUDA device properties";
    cudaGetLastError();
    return info;
  }
  info.available = true;
  info.name = prop.name;
  info.computeMajor = prop.major;
  info.computeMinor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.globalMemoryBytes = prop.totalGlobalMem;
  return info;
}

int cudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void selectCudaDevice(int index) {
  const int count = cudaDeviceCount();
  if (index < 0 || index >= count)
    throw std::runtime_error("CUDA device " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                             " devices visible)");
  checkCuda(cudaSetDevice(index), "selecting a CUDA device");
}

void checkCuda(int status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(static_cast<cudaError_t>(status)));
  }
}

}  // namespace lockstep
