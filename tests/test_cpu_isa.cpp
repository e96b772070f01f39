// The CPU backend's instruction sets (host/backends/cpu_pack_copies.h) and its determinism rule: on a given
// instruction set, a world's bits do not depend on the batch size, on the number of threads, or on
// the worlds that share its pack. A world stepped alone (a one-lane pack: the "scalar" path of small
// batches) is bit for bit the same world in a full pack, on every instruction set this processor
// runs. Each batch has its own threads, packs and instruction set (CpuOptions): two batches with
// different options give their own bits, also when they step at the same time.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/cpu_isa.h"
#include "../host/backends/thread_loop.h"  // the backend's ThreadChoice

namespace lockstep::test {
namespace {

struct Scene {
  const char* name;
  std::shared_ptr<const Model> model;
  std::vector<double> q0;
};

std::vector<Scene> scenes() {
  return {{"chain-7", makeChain(7), chainInitialQ(7)},
          {"chain-7-seed", makeChain7Seed(), chainInitialQ(7)},
          {"free-bushing-grid-2", makeFreeBushingGrid(2), freeBushingGridInitialQ(2)}};
}

// World g of the experiment: the scene's state, moved by an amount of its own.
template <class T>
void setWorld(Batch<T>& b, std::int64_t w, std::int64_t g, const Scene& s) {
  std::vector<double> q = s.q0, u(static_cast<std::size_t>(b.sizes().nu), 0.0);
  if (b.sizes().nq == b.sizes().nu)  // no quaternions
    for (std::size_t i = 0; i < q.size(); ++i) q[i] += 0.02 * std::sin(1.3 * double(g) + double(i));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.3 * std::cos(0.7 * double(g) + 2.0 * double(i));
  b.setQ(w, q);
  b.setU(w, u);
}

// Worlds [first, first + count) of the experiment in a batch of their own, assembled, stepped and
// evaluated: q, u and udot of each, in order.
template <class T>
std::vector<std::vector<double>> run(const Scene& s, std::int64_t first, std::int64_t count, const CpuOptions& cpu) {
  Batch<T> b(s.model, count, Backend::Cpu, cpu);
  for (std::int64_t w = 0; w < count; ++w) setWorld(b, w, first + w, s);
  b.assemble();
  b.step(1e-3, 15);
  b.evaluate();
  std::vector<std::vector<double>> out;
  for (std::int64_t w = 0; w < count; ++w) {
    EXPECT_EQ(b.status(w), 0) << s.name << " world " << first + w;
    out.push_back(b.q(w));
    out.push_back(b.u(w));
    out.push_back(b.udot(w));
  }
  return out;
}

// Bit for bit (a NaN would fail, and none is expected).
void expectSameBits(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                    std::size_t offset, const std::string& what) {
  ASSERT_LE(offset + a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].size(), b[offset + k].size()) << what;
    EXPECT_EQ(std::memcmp(a[k].data(), b[offset + k].data(), a[k].size() * sizeof(double)), 0)
        << what << ": world " << (offset + k) / 3 << ", " << (k % 3 == 0 ? "q" : k % 3 == 1 ? "u" : "udot");
  }
}

template <class T>
void expectBitsIndependentOfBatch(const std::string& isa) {
  const std::int64_t n = 37;  // full packs and a remainder for every width
  for (const Scene& s : scenes()) {
    const std::string what = isa + " " + s.name + (sizeof(T) == 8 ? " double" : " float");
    const CpuOptions one{1, true, isa}, two{2, true, isa};
    const auto all = run<T>(s, 0, n, one);
    for (std::int64_t first : {0, 5, 36}) expectSameBits(run<T>(s, first, 1, one), all, 3 * first, what + ", alone");
    for (std::int64_t count : {2, 3, 5, 9, 17})
      expectSameBits(run<T>(s, 0, count, one), all, 0, what + ", batch of " + std::to_string(count));
    expectSameBits(run<T>(s, 3, 20, one), all, 3 * 3, what + ", other pack-mates");
    // 37 worlds stay on one thread (too little work); 300 take two
    expectSameBits(run<T>(s, 0, n, two), all, 0, what + ", two threads allowed");
    expectSameBits(all, run<T>(s, 0, 300, two), 0, what + ", 300 worlds on two threads");
  }
}

TEST(CpuIsa, AWorldsBitsDoNotDependOnBatchSizeThreadsOrPackMates) {
  const std::vector<std::string> isas = cpuIsasSupported();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "generic");
  for (const std::string& isa : isas) {
    expectBitsIndependentOfBatch<double>(isa);
    expectBitsIndependentOfBatch<float>(isa);
  }
}

// Every world field of world w in a and b, bit for bit.
template <class T>
void expectSameFields(Batch<T>& a, Batch<T>& b, std::int64_t w, const std::string& what) {
  for (const std::string& name : Batch<T>::fieldNames()) {
    const FieldView x = a.field(name, MemorySpace::Host), y = b.field(name, MemorySpace::Host);
    const std::size_t bytes = x.elementType == FieldView::Type::Float32 ? 4 : x.elementType == FieldView::Type::Int32 ? 4 : 8;
    for (std::int64_t c = 0; c < x.components; ++c) {
      const std::int64_t at = w * x.worldStride + c * x.componentStride;
      EXPECT_EQ(std::memcmp(static_cast<const char*>(x.data) + at * bytes, static_cast<const char*>(y.data) + at * bytes,
                            bytes),
                0)
          << what << ": world " << w << ", " << name << "[" << c << "]";
    }
  }
}

// Starting worlds a pack at a time (given states for all of them or a quarter of the batch, a mask
// of resets) gives each world the bits of starting it alone (a short list: one-lane packs): every
// world field, 37 worlds (full packs and a remainder), stepped on afterwards too.
template <class T>
void expectStartsInPacksEqualStartsAlone(const std::string& isa) {
  const std::int64_t n = 37;
  for (const Scene& s : scenes()) {
    const std::string what = isa + " " + s.name + (sizeof(T) == 8 ? " double" : " float");
    const CpuOptions cpu{1, true, isa};
    Batch<T> packed(s.model, n, Backend::Cpu, cpu), alone(s.model, n, Backend::Cpu, cpu);
    const int nq = packed.sizes().nq, nu = packed.sizes().nu;
    Batch<T> draw(s.model, 1, Backend::Cpu, cpu);  // the states of setWorld, as T
    std::vector<T> q, u;
    std::vector<std::int64_t> all;
    for (std::int64_t w = 0; w < n; ++w) {
      setWorld(draw, 0, w, s);
      for (double x : draw.q(0)) q.push_back(T(x));
      for (double x : draw.u(0)) u.push_back(T(x));
      all.push_back(w);
    }
    packed.setStates(all.data(), n, q.data(), u.data(), MemorySpace::Host);
    for (std::int64_t w = 0; w < n; ++w)
      alone.setStates(&w, 1, q.data() + w * nq, u.data() + w * nu, MemorySpace::Host);
    for (std::int64_t w = 0; w < n; ++w) expectSameFields(packed, alone, w, what + ", given states");
    // A quarter of the batch, listed out of order, starts a pack at a time too.
    const std::vector<std::int64_t> some = {30, 2, 17, 9, 3, 31, 8, 22, 16, 10};
    std::vector<T> qs, us;
    for (std::int64_t w : some) {
      qs.insert(qs.end(), q.begin() + (w + 1) % n * nq, q.begin() + ((w + 1) % n + 1) * nq);
      us.insert(us.end(), u.begin() + (w + 1) % n * nu, u.begin() + ((w + 1) % n + 1) * nu);
    }
    packed.setStates(some.data(), std::int64_t(some.size()), qs.data(), us.data(), MemorySpace::Host);
    for (std::size_t i = 0; i < some.size(); ++i)
      alone.setStates(&some[i], 1, qs.data() + i * nq, us.data() + i * nu, MemorySpace::Host);
    for (std::int64_t w = 0; w < n; ++w) expectSameFields(packed, alone, w, what + ", a quarter listed");
    packed.step(1e-3, 3);
    alone.step(1e-3, 3);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
    for (std::int64_t w = 0; w < n; ++w) mask[w] = (w % 3 != 1) ? 1 : 0;
    packed.resetWorldsMask(mask.data(), MemorySpace::Host);
    for (std::int64_t w = 0; w < n; ++w)
      if (mask[w]) alone.resetWorlds(&w, 1, MemorySpace::Host);
    for (std::int64_t w = 0; w < n; ++w) expectSameFields(packed, alone, w, what + ", a mask of resets");
  }
}

TEST(CpuIsa, StartingWorldsInPacksEqualsStartingEachAlone) {
  for (const std::string& isa : cpuIsasSupported()) {
    expectStartsInPacksEqualStartsAlone<double>(isa);
    expectStartsInPacksEqualStartsAlone<float>(isa);
  }
}

TEST(CpuIsa, EveryInstructionSetAgreesToRounding) {
  const Scene s = scenes()[1];
  const auto reference = run<double>(s, 0, 9, CpuOptions{0, true, "generic"});
  for (const std::string& isa : cpuIsasSupported()) {
    const auto r = run<double>(s, 0, 9, CpuOptions{0, true, isa});
    for (std::size_t k = 0; k < r.size(); ++k)
      for (std::size_t i = 0; i < r[k].size(); ++i)
        EXPECT_NEAR(r[k][i], reference[k][i], 1e-9 * (1.0 + std::abs(reference[k][i]))) << isa << " " << k << " " << i;
  }
}

TEST(CpuIsa, ChoosingOne) {
  const Scene s = scenes()[0];
  Batch<double> generic(s.model, 3, Backend::Cpu, CpuOptions{0, true, "generic"});
  EXPECT_EQ(generic.cpuOptions().isa, "generic");
  EXPECT_EQ(cpuPackWidth(true, "generic"), 2);
  EXPECT_EQ(cpuPackWidth(false, "generic"), 4);
  Batch<double> automatic(s.model, 3, Backend::Cpu, CpuOptions{0, true, "auto"});
  EXPECT_EQ(automatic.cpuOptions().isa, defaultCpuIsa());
  EXPECT_NE(describeCpuIsa().find(defaultCpuIsa() + ":"), std::string::npos);
  try {
    automatic.setCpuOptions(CpuOptions{0, true, "neon"});
    FAIL() << "an unknown instruction set was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"neon\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("generic"), std::string::npos) << e.what();
  }
  EXPECT_EQ(automatic.cpuOptions().isa, defaultCpuIsa());  // unchanged by the refusal
  EXPECT_EQ(generic.cpuOptions().isa, "generic");          // and the other batch keeps its own
  EXPECT_THROW(Batch<double>(s.model, 3, Backend::Cpu, CpuOptions{-1}), std::invalid_argument);
  // Far more threads than cores could not start: refused before any call (the command line caps
  // its --threads at the cores instead).
  const int tooMany = kMaxCpuThreadsPerCore * omp_get_num_procs() + 1;
  EXPECT_THROW(Batch<double>(s.model, 3, Backend::Cpu, CpuOptions{tooMany}), std::invalid_argument);
  EXPECT_THROW(generic.setCpuOptions(CpuOptions{100000}), std::invalid_argument);
  EXPECT_EQ(generic.cpuOptions().isa, "generic");  // unchanged by the refusal
}

// Two batches in one process, each with its own threads, packs and instruction set: each reports
// its own options, and gives the bits it gives alone, also when both step at the same time on
// threads of their own (the options of one cannot leak into the other's calls).
TEST(CpuIsa, TwoBatchesKeepTheirOwnOptions) {
  const Scene s = scenes()[1];
  const std::int64_t n = 300;  // enough work for two threads
  const CpuOptions a{1, true, "generic"}, b{2, false, cpuIsasSupported().front()};
  const auto aloneA = run<double>(s, 0, n, a), aloneB = run<double>(s, 0, n, b);
  {
    Batch<double> batchA(s.model, n, Backend::Cpu, a), batchB(s.model, n, Backend::Cpu, b);
    EXPECT_EQ(batchA.cpuOptions().threads, 1);
    EXPECT_TRUE(batchA.cpuOptions().lanes);
    EXPECT_EQ(batchA.cpuOptions().isa, "generic");
    EXPECT_EQ(batchB.cpuOptions().threads, 2);
    EXPECT_FALSE(batchB.cpuOptions().lanes);
    EXPECT_EQ(batchB.cpuOptions().isa, cpuIsasSupported().front());
  }
  std::vector<std::vector<double>> togetherA, togetherB;
  std::thread first([&] { togetherA = run<double>(s, 0, n, a); });
  std::thread second([&] { togetherB = run<double>(s, 0, n, b); });
  first.join();
  second.join();
  expectSameBits(togetherA, aloneA, 0, "generic packs on one thread, beside the other batch");
  expectSameBits(togetherB, aloneB, 0, "scalar code on two threads, beside the other batch");
  // The two differ (packs against the scalar code, in rounding), so neither ran the other's way.
  bool differ = false;
  for (std::size_t k = 0; k < aloneA.size() && !differ; ++k) differ = aloneA[k] != aloneB[k];
  EXPECT_TRUE(differ);
}

// How many threads a batch's calls run on, fed what calls took (no timing: the choice alone). A
// busy machine (two threads three times slower than one) keeps the calls on one thread, retrying
// two ever more rarely; when the load goes, the next retry brings two threads back.
TEST(CpuThreads, ChoiceKeepsToOneThreadWhereSeveralWereSlower) {
  ThreadChoice c;
  EXPECT_EQ(c.threads(1), 1);  // too little work for two: never timed
  EXPECT_EQ(c.threads(2), 2);  // each way once first
  c.record(2, 3e-9);
  EXPECT_EQ(c.threads(2), 1);
  c.record(1, 1e-9);
  auto run = [&c](int calls, double oneThread, double twoThreads) {
    int two = 0;
    for (int k = 0; k < calls; ++k) {
      const int t = c.threads(2);
      two += t == 2;
      c.record(t, t == 2 ? twoThreads : oneThread);
    }
    return two;
  };
  // Busy: two threads only for the retries, at calls 32, 96, 224, 480 and 992 (intervals doubling).
  EXPECT_EQ(run(1000, 1e-9, 3e-9), 5);
  // Idle again: the retry at call 2016 (interval 1024) sees it, and two threads run from then on
  // (calls 2017 to 2144), but for the retries of one thread at 2048 and 2112 (intervals 32, 64).
  EXPECT_EQ(run(1014, 1e-9, 0.5e-9), 1);
  EXPECT_EQ(run(128, 1e-9, 0.5e-9), 128 - 2);
}

}  // namespace
}  // namespace lockstep::test
