// Device memory for host/batch/: an array on the CUDA device, copied to and from the host on a stream
// (the CUDA backend object's device copy, cuda_batch_backend.cpp, is made of them), and the byte text
// of the memory messages. Private to host/batch/.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/backends/device.h"

namespace lockstep {

// Bytes as "1.23 GiB" (decimals after the point), for the memory messages of host/batch/.
std::string gibText(double bytes, int decimals = 2);

// A device allocation of n values of U.
template <class U>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { release(); }
  // Returns true when the allocation moved (pointers taken before are stale).
  bool resize(std::size_t n) {
    if (n == n_) return false;
    release();
    if (n) {
      const cudaError_t err = cudaMalloc(&p_, n * sizeof(U));
      if (err != cudaSuccess) {
        p_ = nullptr;
        cudaGetLastError();  // an allocation failure is not sticky: clear it for the next call
        throw std::runtime_error("cudaMalloc of " + gibText(double(n) * sizeof(U)) + ": " + cudaGetErrorString(err));
      }
    }
    n_ = n;
    return true;
  }
  // Copies n host values in, reallocating when their count changed; returns resize's answer.
  bool upload(const U* h, std::size_t n, cudaStream_t stream) {
    const bool moved = resize(n);
    if (n_) checkCuda(cudaMemcpyAsync(p_, h, n_ * sizeof(U), cudaMemcpyHostToDevice, stream), "cudaMemcpy to device");
    return moved;
  }
  template <class A>
  bool upload(const std::vector<U, A>& h, cudaStream_t stream) {
    return upload(h.data(), h.size(), stream);
  }
  // Copies the size() values out to h.
  void download(U* h, cudaStream_t stream) const {
    if (n_) checkCuda(cudaMemcpyAsync(h, p_, n_ * sizeof(U), cudaMemcpyDeviceToHost, stream), "cudaMemcpy to host");
  }
  U* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

inline cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace lockstep
