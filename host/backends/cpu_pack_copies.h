// The CPU backend's copies of its pack code, one per instruction set (host/backends/cpu_packs.cpp,
// compiled once per set with that set's flags; cmake/LockstepTargets.cmake), and what the rest of
// the backend (cpu_backend.cpp, compiled for plain x86-64) calls through. Private to the backend.
//
// Each copy's packs live in an inline namespace named after its instruction set (lanes.h), so the
// per-world templates instantiated on them are symbols of that copy alone: the linker cannot keep
// one copy's machine code for another's. The entry points below are plain functions with distinct
// names, and each copy's file defines nothing else with external linkage.
#pragma once

#include "lockstep/backends/backend.h"
#include "lockstep/backends/cpu_isa.h"

namespace lockstep {

// The pack code of one instruction set for one precision.
template <class T>
struct CpuPackFunctions {
  // The backend operations on this copy's packs. Their cache is the batch's (ctx.cpuCache->packs,
  // made for this copy: CpuBackendCache::forCopy before the call); without one they make their own.
  BackendOps<T> ops;
  // cpuRepeatPackEvaluation (lockstep/backends/cpu_isa.h).
  int (*repeatEvaluation)(const BackendContext<T>& ctx, std::int64_t repetitions);
  void* (*makeCache)();
  void (*freeCache)(void* cache);
  int lanes;  // worlds per full pack
};

struct CpuPackCopy {
  const char* name;  // "generic", "avx2", "avx512"
  CpuPackFunctions<float> f;
  CpuPackFunctions<double> d;
};

template <class T>
const CpuPackFunctions<T>& packFunctions(const CpuPackCopy& copy) {
  if constexpr (sizeof(T) == 4)
    return copy.f;
  else
    return copy.d;
}

// A batch's cache: the packs of the copy in use when they were made; a change of instruction set
// makes them again.
template <class T>
struct CpuBackendCache {
  const CpuPackCopy* copy = nullptr;
  void* packs = nullptr;

  CpuBackendCache() = default;
  CpuBackendCache(const CpuBackendCache&) = delete;
  CpuBackendCache& operator=(const CpuBackendCache&) = delete;
  ~CpuBackendCache() { release(); }
  void release() {
    if (packs) packFunctions<T>(*copy).freeCache(packs);
    packs = nullptr;
  }
  void forCopy(const CpuPackCopy& c) {
    if (copy == &c) return;
    release();
    copy = &c;
    packs = packFunctions<T>(c).makeCache();
  }
};

const CpuPackCopy& cpuPackCopyGeneric();
const CpuPackCopy& cpuPackCopyAvx2();
#ifdef LOCKSTEP_CPU_AVX512
const CpuPackCopy& cpuPackCopyAvx512();
#endif

}  // namespace lockstep
