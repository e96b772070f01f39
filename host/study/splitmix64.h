// splitmix64's finalizer, the hash behind the studies' counter-based draws (study_worlds.cpp) and
// bootstrap resamples (study_statistics.cpp). Private to host/study/.
#pragma once

#include <cstdint>

namespace lockstep {

// A well-mixed 64-bit hash of a counter.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace lockstep
