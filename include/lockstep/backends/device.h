// Lockstep: what CUDA device, if any, this process can use.
#pragma once

#include <string>

namespace lockstep {

struct DeviceInfo {
  bool available = false;   // a CUDA device can run Lockstep's kernels
  std::string name;         // e.g. "NVIDIA H100 80GB HBM3"
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  std::size_t globalMemoryBytes = 0;
  std::string reason;       // why no device is available, when it is not
};

// Queries the CUDA runtime once per call; never throws, never aborts when no GPU or driver exists.
DeviceInfo queryDevice();

// The number of CUDA devices this process sees (0 without a driver or device).
int cudaDeviceCount();
// Makes device `index` (0 .. cudaDeviceCount() - 1) this thread's device for what follows, e.g. one
// GPU per MPI rank on a node; throws std::runtime_error naming the index otherwise.
void selectCudaDevice(int index);

// Throws std::runtime_error with the CUDA error text when `status` is not success.
void checkCuda(int status, const char* what);

}  // namespace lockstep
