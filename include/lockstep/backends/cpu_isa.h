// The CPU backend's instruction sets: which copy of its pack code a batch runs (host/backends/cpu_pack_copies.h
// has the copies), how its CpuOptions (backend.h) are resolved, and a benchmark hook into a copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/backends/backend.h"

namespace lockstep {

// The instruction sets of the CPU backend's packs (host/backends/cpu_pack_copies.h): "avx512" (8
// doubles or 16 floats per pack), "avx2" (with FMA; 4 or 8) or "generic" (plain x86-64, SSE2; 2 or
// 4). Each batch picks one (CpuOptions::isa); by default the environment variable LOCKSTEP_CPU_ISA
// if set (one of the names, or "auto"), else the best this processor supports. A world's results
// depend on the instruction set (docs/engine.md, "Bits"), never on the batch size, the thread
// count or its pack-mates.
//
// The options as the backend runs them: threads >= 1 (0 asks for all cores), the copy of the
// named instruction set. An unknown or unsupported name (or LOCKSTEP_CPU_ISA) throws
// std::invalid_argument naming it and what is supported.
CpuRun resolveCpuOptions(const CpuOptions& options);
// The name of the instruction set a run uses.
std::string cpuIsaOf(const CpuRun& run);
// The default instruction set: what isa "" or "auto" resolves to.
std::string defaultCpuIsa();
// The instruction sets this build has and this processor runs, best first.
std::vector<std::string> cpuIsasSupported();
// Worlds per pack of an instruction set ("" or "auto": the default).
int cpuPackWidth(bool doublePrecision, const std::string& isa = "");
// One line for people: the default set, its pack widths and what this processor runs.
std::string describeCpuIsa();
// The forward-dynamics evaluation (computeStateDerivative) of one full pack of the batch's first
// worlds, `repetitions` times on the calling thread, with the context's instruction set
// (ctx.cpu.copy): what the benchmarks time as the per-world evaluation cost. Returns the first
// world's status bits.
template <class T>
int cpuRepeatPackEvaluation(const BackendContext<T>& ctx, std::int64_t repetitions);

}  // namespace lockstep
