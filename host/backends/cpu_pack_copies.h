// The CPU backend's copies of its pack code, one per instruction set (host/backends/cpu_packs.cpp,
// compiled once per set with that set's flags; cmake/LockstepTargets.cmake), and what the rest of
// the backend (cpu_backend.cpp, compiled for plain x86-64) calls through. Private to the backend.
//
// Each copy's packs live in an inline namespace named after its instruction set (lanes.h), so the
// per-world templates instantiated on them are symbols of that copy alone: the linker cannot keep
// one copy's machine code for another's. The entry points below are plain functions with distinct
// names, and each copy's file defines nothing else with external linkage.
#pragma once

#include "lockstep/backend.h"
#include "lockstep/cpu_isa.h"

namespace lockstep {

// The pack code of one instruction set for one precision. `cache` is the copy's own (makeCache);
// null makes one for the call.
template <class T>
struct CpuPackFunctions {
  void (*advance)(const BackendContext<T>& ctx, const StepSettings<T>& settings, void* cache);
  void (*evaluate)(const BackendContext<T>& ctx, void* cache);
  void (*assemble)(const BackendContext<T>& ctx, T tol, int maxIterations, void* cache);
  // Starts worlds at their initial state (q, u null) or at given states, and observes them: the
  // worlds indices[0..count), or those i < count where mask[i] is set, or all count.
  void (*start)(const BackendContext<T>& ctx, const std::int64_t* indices, const std::uint8_t* mask,
                std::int64_t count, const T* q, const T* u, void* cache);
  // cpuRepeatPackEvaluation (lockstep/cpu_isa.h).
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

const CpuPackCopy& cpuPackCopyGeneric();
const CpuPackCopy& cpuPackCopyAvx2();
#ifdef LOCKSTEP_CPU_AVX512
const CpuPackCopy& cpuPackCopyAvx512();
#endif

}  // namespace lockstep
