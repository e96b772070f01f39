// The CUDA side of a Batch: device copies of every per-world field and parameter, the compiled
// model, the per-world workspaces, staging buffers for host arrays, and the batch's stream.
// Private to host/batch/.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/backends/device.h"

namespace lockstep {

// A device allocation of n values of U.
template <class U>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { release(); }
  // Returns true when the allocation moved (pointers taken before are stale).
  bool resize(std::size_t n);
  // Copies a host array of any size in, reallocating when its size changed; returns resize's answer.
  bool upload(const std::vector<U>& h, cudaStream_t stream);
  void download(std::vector<U>& h, cudaStream_t stream) const;
  U* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void release();
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

// Bytes as "1.23 GiB" (decimals after the point), for the memory messages of host/batch/.
std::string gibText(double bytes, int decimals = 2);

inline cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

template <class T>
struct Batch<T>::Device {
  Device(const CompiledModel<T>& model, std::int64_t nWorlds);
  ~Device();

#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) DeviceArray<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  DeviceArray<T> params[kParamCount];
#define LOCKSTEP_X(kind, type, name, count, doc) DeviceArray<type> name;
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
  DeviceArray<T> scratch;                // one workspace per world, strided across worlds
  DeviceArray<std::uint8_t> staging[3];  // host arrays passed to resets, copied to the device

  void* stream = nullptr;  // cudaStream_t
  bool ownsStream = true;
  std::uint64_t paramGeneration = 0;  // bumped whenever a device parameter array moves
  bool uploaded = false;               // the fields hold nothing before the first upload()

  ModelView<T> modelView(const Sizes& s) const {
    ModelView<T> v;
    v.sizes = s;
#define LOCKSTEP_X(kind, type, name, count, doc) v.name = name.get();
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return v;
  }
  void useStream(void* cudaStream);
  void synchronize(const char* what) const;
};

}  // namespace lockstep
