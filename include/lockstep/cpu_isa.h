// The CPU backend's instruction sets: which copy of its pack code runs (host/backends/cpu_pack_copies.h
// has the copies), how to force one, and a benchmark hook into the chosen copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/backend.h"

namespace lockstep {

// The instruction set of the CPU backend's packs (host/backends/cpu_pack_copies.h): "avx512" (8 doubles or
// 16 floats per pack), "avx2" (with FMA; 4 or 8) or "generic" (plain x86-64, SSE2; 2 or 4). Chosen
// at first use: the environment variable LOCKSTEP_CPU_ISA if set (one of the names, or "auto"), else
// the best this processor supports. A world's results depend on the instruction set (docs/engine.md,
// "Bits"), never on the batch size, the thread count or its pack-mates.
std::string cpuIsa();
// Forces one ("" or "auto": the best supported); an unknown or unsupported name throws
// std::invalid_argument naming it and what is supported.
void setCpuIsa(const std::string& name);
// The instruction sets this build has and this processor runs, best first.
std::vector<std::string> cpuIsasSupported();
// Worlds per pack of the chosen instruction set.
int cpuPackWidth(bool doublePrecision);
// One line for people: the chosen set, its pack widths and what this processor runs.
std::string describeCpuIsa();
// The forward-dynamics evaluation (computeStateDerivative) of one full pack of the batch's first
// worlds, `repetitions` times on the calling thread, with the chosen instruction set: what the
// benchmarks time as the per-world evaluation cost. Returns the first world's status bits.
template <class T>
int cpuRepeatPackEvaluation(const BackendContext<T>& ctx, std::int64_t repetitions);

}  // namespace lockstep
