// The CPU backend's instruction sets (host/backends/cpu_pack_copies.h) and its determinism rule: on a given
// instruction set, a world's bits do not depend on the batch size, on the number of threads, or on
// the worlds that share its pack. A world stepped alone (a one-lane pack: the "scalar" path of small
// batches) is bit for bit the same world in a full pack, on every instruction set this processor
// runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/batch.h"
#include "lockstep/builtin_scenes.h"
#include "lockstep/cpu_isa.h"

namespace lockstep::test {
namespace {

// Restores the backend's defaults when a test ends.
struct CpuDefaults {
  ~CpuDefaults() {
    setCpuIsa("");
    setCpuThreads(0);
  }
};

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
std::vector<std::vector<double>> run(const Scene& s, std::int64_t first, std::int64_t count) {
  Batch<T> b(s.model, count, Backend::Cpu);
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
    setCpuThreads(1);
    const auto all = run<T>(s, 0, n);
    for (std::int64_t first : {0, 5, 36}) expectSameBits(run<T>(s, first, 1), all, 3 * first, what + ", alone");
    for (std::int64_t count : {2, 3, 5, 9, 17}) expectSameBits(run<T>(s, 0, count), all, 0, what + ", batch of " + std::to_string(count));
    expectSameBits(run<T>(s, 3, 20), all, 3 * 3, what + ", other pack-mates");
    setCpuThreads(2);  // 37 worlds stay on one thread (too little work); 300 take two
    expectSameBits(run<T>(s, 0, n), all, 0, what + ", two threads allowed");
    expectSameBits(all, run<T>(s, 0, 300), 0, what + ", 300 worlds on two threads");
  }
}

TEST(CpuIsa, AWorldsBitsDoNotDependOnBatchSizeThreadsOrPackMates) {
  CpuDefaults restore;
  const std::vector<std::string> isas = cpuIsasSupported();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "generic");
  for (const std::string& isa : isas) {
    setCpuIsa(isa);
    ASSERT_EQ(cpuIsa(), isa);
    expectBitsIndependentOfBatch<double>(isa);
    expectBitsIndependentOfBatch<float>(isa);
  }
}

TEST(CpuIsa, EveryInstructionSetAgreesToRounding) {
  CpuDefaults restore;
  const Scene s = scenes()[1];
  setCpuIsa("generic");
  const auto reference = run<double>(s, 0, 9);
  for (const std::string& isa : cpuIsasSupported()) {
    setCpuIsa(isa);
    const auto r = run<double>(s, 0, 9);
    for (std::size_t k = 0; k < r.size(); ++k)
      for (std::size_t i = 0; i < r[k].size(); ++i)
        EXPECT_NEAR(r[k][i], reference[k][i], 1e-9 * (1.0 + std::abs(reference[k][i]))) << isa << " " << k << " " << i;
  }
}

TEST(CpuIsa, ChoosingOne) {
  CpuDefaults restore;
  setCpuIsa("generic");
  EXPECT_EQ(cpuIsa(), "generic");
  EXPECT_EQ(cpuPackWidth(true), 2);
  EXPECT_EQ(cpuPackWidth(false), 4);
  setCpuIsa("auto");
  EXPECT_EQ(cpuIsa(), cpuIsasSupported().front());
  EXPECT_NE(describeCpuIsa().find(cpuIsa() + ":"), std::string::npos);
  try {
    setCpuIsa("neon");
    FAIL() << "an unknown instruction set was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"neon\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("generic"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cpuIsa(), cpuIsasSupported().front());  // unchanged by the refusal
}

}  // namespace
}  // namespace lockstep::test
