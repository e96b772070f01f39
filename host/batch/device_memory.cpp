// The memory of a Batch: how much it needs (batchMemoryOf), on the host and on the device, and how
// much there is, checked when it is made.
#include "device_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "lockstep/engine/batch.h"

namespace lockstep {

std::string gibText(double bytes, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f GiB", decimals, bytes / double(1ull << 30));
  return buf;
}

namespace {

// Byte counts that saturate at INT64_MAX instead of wrapping around.
constexpr std::int64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();
std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMaxBytes : r;
}
std::int64_t mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kMaxBytes : r;
}

}  // namespace

// ---- how much memory a batch needs, and how much there is ----------------------------------------

template <class T>
BatchMemory batchMemoryOf(const Sizes& s, std::int64_t worlds, Backend backend, int cpuThreads) {
  std::int64_t perWorld = 0;  // fields, in bytes per world
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  perWorld += static_cast<std::int64_t>(sizeof(type)) * (fieldCount(s, per, parts));
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::int64_t params = 0;  // one shared copy
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  params += static_cast<std::int64_t>(sizeof(T)) * (fieldCount(s, per, parts));
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::int64_t modelArrays = 0;
#define LOCKSTEP_X(kind, type, name, count, doc) modelArrays += static_cast<std::int64_t>(s.count) * sizeof(type);
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
  const std::int64_t scratch = WorkspaceLayout::of(s).total * static_cast<std::int64_t>(sizeof(T));
  BatchMemory m;
  m.hostBytes = add(add(mul(perWorld, worlds), params), modelArrays);
  if (backend == Backend::Cuda) {
    m.deviceBytes = add(add(mul(add(perWorld, scratch), worlds), params), modelArrays);
  } else {
    m.hostBytes = add(m.hostBytes, mul(scratch, cpuThreads));
  }
  return m;
}

MemoryAvailable memoryAvailable(bool queryDeviceMemory) {
  MemoryAvailable m;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      m.hostBytes = kib * 1024;
      break;
    }
  }
  if (m.hostBytes == 0) {  // no /proc/meminfo: the free physical pages
    const long pages = sysconf(_SC_AVPHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0) m.hostBytes = mul(pages, pageSize);
  }
  if (queryDeviceMemory && queryDevice().available) {
    std::size_t freeBytes = 0, totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess) m.deviceBytes = static_cast<std::int64_t>(freeBytes);
    cudaGetLastError();
  }
  return m;
}

std::string whyBatchDoesNotFit(const BatchMemory& need, const MemoryAvailable& have, double fraction) {
  std::string why;
  if (need.deviceBytes > 0 && double(need.deviceBytes) > fraction * double(have.deviceBytes))
    why = "needs " + gibText(double(need.deviceBytes), 1) + " of device memory, " +
          gibText(double(have.deviceBytes), 1) + " free";
  if (double(need.hostBytes) > fraction * double(have.hostBytes))
    why += (why.empty() ? "" : "; ") + std::string("needs ") + gibText(double(need.hostBytes), 1) +
           " of host memory, " + gibText(double(have.hostBytes), 1) + " available";
  return why;
}

template <class T>
std::int64_t worldsThatFitOf(const Sizes& s, Backend backend, int cpuThreads, const MemoryAvailable& have,
                             double fraction) {
  // The need is fixed + perWorld * worlds in each memory: solve for worlds in both.
  const BatchMemory one = batchMemoryOf<T>(s, 1, backend, cpuThreads);
  const BatchMemory two = batchMemoryOf<T>(s, 2, backend, cpuThreads);
  auto most = [fraction](std::int64_t oneWorld, std::int64_t twoWorlds, std::int64_t available) {
    const double perWorld = double(twoWorlds - oneWorld), fixed = double(oneWorld) - perWorld;
    const double n = std::floor((fraction * double(available) - fixed) / perWorld);
    return n < 1 ? std::int64_t(0) : n > 9e18 ? kMaxBytes : static_cast<std::int64_t>(n);
  };
  std::int64_t n = most(one.hostBytes, two.hostBytes, have.hostBytes);
  if (backend == Backend::Cuda) n = std::min(n, most(one.deviceBytes, two.deviceBytes, have.deviceBytes));
  return n;
}

// (cpuThreads counts the CPU backend's workspaces; batchMemoryOf and worldsThatFitOf read it for the
// CPU backend only.)
template <class T>
void Batch<T>::checkMemory(int cpuThreads) const {
  const BatchMemory need = batchMemoryOf<T>(sizes_, nWorlds_, backendKind_, cpuThreads);
  const MemoryAvailable have = memoryAvailable(backendKind_ == Backend::Cuda);
  const std::string why = whyBatchDoesNotFit(need, have);
  if (why.empty()) return;
  throw BatchMemoryError("Batch: " + std::to_string(nWorlds_) + " worlds need more memory than is available (" +
                         why + "): at most " +
                         std::to_string(worldsThatFitOf<T>(sizes_, backendKind_, cpuThreads, have)) +
                         " worlds of this model fit");
}

#define LOCKSTEP_INSTANTIATE(T)                                                                          \
  template BatchMemory batchMemoryOf<T>(const Sizes&, std::int64_t, Backend, int);                        \
  template std::int64_t worldsThatFitOf<T>(const Sizes&, Backend, int, const MemoryAvailable&, double);   \
  template void Batch<T>::checkMemory(int) const;
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
