// Lockstep: compile-time configuration shared by host (g++) and device (nvcc) code.
#pragma once

#include <cstdint>

// Functions marked LOCKSTEP_HD are compiled for the CPU and, under nvcc, for the GPU too.
// The per-world physics is written once with this marker and runs unchanged on both backends.
#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__
#define LOCKSTEP_HD_INLINE __host__ __device__ __forceinline__
#else
#define LOCKSTEP_HD
#define LOCKSTEP_HD_INLINE inline __attribute__((always_inline))
#endif

namespace lockstep {

using Index = std::int32_t;

}  // namespace lockstep
