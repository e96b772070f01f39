// Lockstep AlignedVector: std::vector whose storage starts on a 64-byte boundary.
//
// The host copy of a batch's per-world fields, its parameters, its Jacobians and the CPU backend's
// workspaces are AlignedVectors: a cache line, the widest vector register (AVX-512) and the
// alignment that XLA (JAX) asks of a host buffer before it takes it without a copy. NumPy, torch and
// JAX then all alias the batch's memory (python/tests/test_batch.py checks each by address and by
// mutation; tests/test_fields.cpp checks every field's and parameter's address).
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace lockstep {

inline constexpr std::size_t kHostAlignment = 64;

template <class T, std::size_t kAlign = kHostAlignment>
struct AlignedAllocator {
  static_assert(kAlign >= alignof(T) && (kAlign & (kAlign - 1)) == 0, "the alignment must be a power of two");
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, kAlign>;
  };

  AlignedAllocator() noexcept = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, kAlign>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlign)));
  }
  void deallocate(T* p, std::size_t n) noexcept { ::operator delete(p, n * sizeof(T), std::align_val_t(kAlign)); }

  template <class U>
  bool operator==(const AlignedAllocator<U, kAlign>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const AlignedAllocator<U, kAlign>&) const noexcept {
    return false;
  }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace lockstep
