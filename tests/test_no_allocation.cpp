// No allocation in a step: after a first call has sized everything, step(), evaluate() and
// assemble() on the CPU backend allocate nothing. This binary counts every call of the replaceable
// global operator new (all its forms) while counting is on; it is its own executable so that the
// replacement touches no other test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "lockstep/backends/backend.h"
#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"

namespace {

std::atomic<bool> gCounting{false};
std::atomic<long> gAllocations{0};

void* allocate(std::size_t size, std::size_t alignment) {
  if (gCounting.load(std::memory_order_relaxed)) gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, alignment, size) != 0) {
    p = nullptr;
  }
  return p;
}
void* allocateOrThrow(std::size_t size, std::size_t alignment) {
  void* p = allocate(size, alignment);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return allocateOrThrow(n, 0); }
void* operator new[](std::size_t n) { return allocateOrThrow(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return allocateOrThrow(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocateOrThrow(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace lockstep {
namespace {

// Allocations made by f.
template <class F>
long allocationsIn(F f) {
  gAllocations = 0;
  gCounting = true;
  f();
  gCounting = false;
  return gAllocations.load();
}

// The counter sees what it must see, in every form the backend could use.
TEST(NoAllocation, TheCounterCountsEveryForm) {
  EXPECT_EQ(allocationsIn([] { delete new int(1); }), 1);
  EXPECT_EQ(allocationsIn([] { std::vector<double> v(10); }), 1);
  struct alignas(64) Wide {
    double x[8];
  };
  EXPECT_EQ(allocationsIn([] { std::vector<Wide> v(3); }), 1);
  EXPECT_EQ(allocationsIn([] { std::make_unique<int[]>(5); }), 1);
}

template <class T>
void expectNoAllocationInSteps(const std::shared_ptr<const Model>& model, bool lanes) {
  // 37 worlds: whole packs and a partial one, in either precision.
  Batch<T> batch(model, 37, Backend::Cpu, CpuOptions{0, lanes});
  batch.step(1e-3, 1);  // the first call sizes the workspaces and makes the packs
  batch.evaluate();
  EXPECT_EQ(allocationsIn([&] { batch.step(1e-3, 5); }), 0) << "step(), lanes " << lanes;
  EXPECT_EQ(allocationsIn([&] { batch.step(1e-3, 5, Integrator::SemiImplicitEuler); }), 0) << "lanes " << lanes;
  EXPECT_EQ(allocationsIn([&] { batch.evaluate(); }), 0) << "evaluate(), lanes " << lanes;
  for (std::int64_t w = 0; w < batch.numWorlds(); ++w) EXPECT_EQ(batch.status(w), 0);
}

TEST(NoAllocation, CpuStepAfterTheFirstChain7) {
  expectNoAllocationInSteps<double>(makeChain(7), true);
  expectNoAllocationInSteps<float>(makeChain(7), true);
  expectNoAllocationInSteps<double>(makeChain(7), false);
}

TEST(NoAllocation, CpuStepAfterTheFirstChain7Seed) {
  expectNoAllocationInSteps<double>(makeChain7Seed(), true);
  expectNoAllocationInSteps<float>(makeChain7Seed(), true);
  expectNoAllocationInSteps<double>(makeChain7Seed(), false);
}

TEST(NoAllocation, AssembleAfterTheFirst) {
  Batch<double> batch(makeChain7Seed(), 9, Backend::Cpu);
  batch.assemble();
  EXPECT_EQ(allocationsIn([&] { batch.assemble(); }), 0);
}

// The packs kept across calls follow the batch: a shared parameter set for all worlds, and a
// parameter that becomes per-world, give exactly the results of a batch that never stepped before.
TEST(NoAllocation, KeptPacksFollowParameterChanges) {
  const std::shared_ptr<const Model> model = makeChain7Seed();
  const auto change = [](Batch<double>& b) {
    b.setSpringParameters(Batch<double>::kAllWorlds, 0, 0.7, 250.0, 3.0);  // shared, new values
    b.setGravity(5, Vec3d{{0.0, -9.0, 0.5}});                              // gravity becomes per-world
  };
  Batch<double> kept(model, 13, Backend::Cpu);
  kept.step(1e-3, 3);
  change(kept);
  kept.step(1e-3, 4);

  Batch<double> fresh(model, 13, Backend::Cpu);
  fresh.step(1e-3, 3);
  Batch<double> replay(model, 13, Backend::Cpu);  // the same state, changed before its first step
  for (std::int64_t w = 0; w < 13; ++w) {
    replay.setQ(w, fresh.q(w));
    replay.setU(w, fresh.u(w));
    replay.setZ(w, fresh.z(w));
    replay.setTime(w, fresh.time(w));
  }
  change(replay);
  replay.step(1e-3, 4);
  for (std::int64_t w = 0; w < 13; ++w) {
    EXPECT_EQ(kept.q(w), replay.q(w)) << "world " << w;
    EXPECT_EQ(kept.u(w), replay.u(w)) << "world " << w;
    EXPECT_EQ(kept.z(w), replay.z(w)) << "world " << w;
  }
  // And the change mattered: world 5 moved differently from a world with the default gravity.
  EXPECT_NE(kept.q(5), kept.q(4));
}

}  // namespace
}  // namespace lockstep
