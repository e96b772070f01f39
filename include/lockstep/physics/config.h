// Lockstep: compile-time configuration shared by host (g++) and device (nvcc) code.
#pragma once

#include <cstdint>

// Functions marked LOCKSTEP_HD are compiled for the CPU and, under nvcc, for the GPU too.
// The per-world physics is written once with this marker and runs unchanged on both backends.
// LOCKSTEP_HD_NOINLINE: a function kept out of its callers, for a rarely taken branch whose inlined
// code would enlarge the GPU frame (local memory) of every thread of the kernels that hold it.
#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__
#define LOCKSTEP_HD_INLINE __host__ __device__ __forceinline__
#define LOCKSTEP_HD_NOINLINE __host__ __device__ __noinline__
#else
#define LOCKSTEP_HD
#define LOCKSTEP_HD_INLINE inline __attribute__((always_inline))
#define LOCKSTEP_HD_NOINLINE __attribute__((noinline))
#endif

namespace lockstep {

using Index = std::int32_t;

}  // namespace lockstep
