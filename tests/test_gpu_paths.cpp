// Every CUDA path of a Batch against the CPU backend: advance and evaluate (with and without
// sphere contacts, float and double, RK4 and Euler; MuJoCo's soft contacts), assembly, resets by
// index and by mask with the lists in host or device memory, given states, automatic resets,
// recorded steps (CUDA graphs) and a caller's stream, DLPack tensors over device memory (read and
// written), a whole study, a batch larger than the device's memory, and batches of many blocks, one
// of more than 65,535 blocks.
//
// The GPU runs the same per-world code as the CPU backend, but the device fuses multiply-adds and
// the CPU backend runs worlds in SIMD packs, so results agree to rounding: every per-world field
// (Batch::fieldNames(), so that a new field is compared too) within `tol` of the field's largest
// magnitude, 1e-8 in double and 2e-3 in float after tens of steps; integer fields (status, reset
// counts) exactly. Two GPU runs of the same work agree bit for bit. Every test skips without a GPU.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "lockstep/study/study.h"
#include "lockstep/study/throughput.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

#define LOCKSTEP_SKIP_WITHOUT_GPU()                                         \
  do {                                                                      \
    const DeviceInfo dev = queryDevice();                                   \
    if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason; \
  } while (0)

template <class T>
constexpr double kTol = sizeof(T) == 8 ? 1e-8 : 2e-3;

// A device copy of a host array, freed at scope exit.
template <class U>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<U>& h) : n_(h.size()) {
    checkCuda(cudaMalloc(&p_, std::max<std::size_t>(n_, 1) * sizeof(U)), "test cudaMalloc");
    if (n_) checkCuda(cudaMemcpy(p_, h.data(), n_ * sizeof(U), cudaMemcpyHostToDevice), "test copy to device");
    // A copy from pageable memory may still be in flight when cudaMemcpy returns, and the batch
    // runs on a stream of its own that does not wait for the default stream.
    checkCuda(cudaDeviceSynchronize(), "test copy to device");
  }
  ~DeviceCopy() { cudaFree(p_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  U* get() const { return p_; }

 private:
  U* p_ = nullptr;
  std::size_t n_;
};

// Element i of a field's host memory as a double.
double valueAt(const FieldView& f, std::size_t i) {
  switch (f.elementType) {
    case FieldView::Type::Float32: return static_cast<const float*>(f.data)[i];
    case FieldView::Type::Float64: return static_cast<const double*>(f.data)[i];
    case FieldView::Type::Int32: return static_cast<const std::int32_t*>(f.data)[i];
  }
  return 0;
}

// Every per-world field of `a` against `b` (host copies: download the CUDA batches first): integer
// fields equal, real fields within tol * (1 + the field's largest magnitude in b); tol 0: bit for bit.
template <class T>
void expectFieldsMatch(Batch<T>& a, Batch<T>& b, double tol, const std::string& where,
                       const std::vector<std::string>& skip = {}) {
  ASSERT_EQ(a.numWorlds(), b.numWorlds());
  for (const std::string& name : Batch<T>::fieldNames()) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    const FieldView fa = a.field(name, MemorySpace::Host), fb = b.field(name, MemorySpace::Host);
    ASSERT_EQ(fa.components, fb.components) << name;
    const std::size_t count = static_cast<std::size_t>(fa.components * fa.worlds);
    const bool exact = tol == 0 || fa.elementType == FieldView::Type::Int32;
    double scale = 0;
    for (std::size_t i = 0; i < count; ++i)
      if (std::isfinite(valueAt(fb, i))) scale = std::max(scale, std::abs(valueAt(fb, i)));
    const double bound = exact ? 0.0 : tol * (1 + scale);
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double x = valueAt(fa, i), y = valueAt(fb, i);
      // (a world flagged at the start keeps its non-finite state on both backends)
      const bool same = x == y || (std::isnan(x) && std::isnan(y)) || std::abs(x - y) <= bound;
      if (!same && bad++ == 0) first = i;
    }
    if (bad) {
      const std::int64_t w = static_cast<std::int64_t>(first) % fa.worlds, c = static_cast<std::int64_t>(first) / fa.worlds;
      ADD_FAILURE() << where << ": field '" << name << "': " << bad << " of " << count
                    << " values differ; first: world " << w << " component " << c << ": " << valueAt(fa, first)
                    << " vs " << valueAt(fb, first) << " (bound " << bound << ")";
    }
  }
}

// Downloads the CUDA batch, then compares it with the CPU batch (every field but those in skip).
template <class T>
void expectGpuMatchesCpu(Batch<T>& gpu, Batch<T>& cpu, const std::string& where, double tol = kTol<T>,
                         const std::vector<std::string>& skip = {}) {
  gpu.download();
  expectFieldsMatch(gpu, cpu, tol, where, skip);
}

// Each world its own state (q near the default, u small), its own initial state, an action on
// every third world, and one world with a gravity of its own (a per-world parameter).
template <class T>
void startVaried(Batch<T>& b) {
  const Model& m = b.model();
  for (std::int64_t w = 0; w < b.numWorlds(); ++w) {
    std::vector<double> q = m.defaultQ(), u(m.nu(), 0.0);
    for (std::size_t i = 0; i < q.size(); ++i) q[i] += 0.01 * double((w * 7 + i) % 11);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.05 * double((w + 3 * i) % 5) - 0.1;
    b.setInitialState(w, q, u);
    b.setQ(w, q);
    b.setU(w, u);
    if (w % 3 == 0) {
      std::vector<double> tau(m.nu());
      for (std::size_t i = 0; i < tau.size(); ++i) tau[i] = 0.1 * double((w + i) % 4) - 0.15;
      b.setTau(w, tau);
    }
  }
  b.setGravity(b.numWorlds() / 2, {{0.0, -3.0, 0.5}});
}

// 333 worlds: three blocks of 128 threads, the last one partly idle.
constexpr int kWorlds = 333;

// The same varied start on the CPU backend and on CUDA (uploaded), both advanced `steps` steps of 1 ms.
template <class T>
struct CpuAndGpu {
  Batch<T> cpu, gpu;
  CpuAndGpu(const std::shared_ptr<const Model>& model, int steps)
      : cpu(model, kWorlds, Backend::Cpu), gpu(model, kWorlds, Backend::Cuda) {
    startVaried(cpu);
    startVaried(gpu);
    gpu.upload();
    if (steps > 0) {
      cpu.step(1e-3, steps);
      gpu.step(1e-3, steps);
    }
  }
};

template <class T>
void expectAdvanceAndEvaluateMatch(const std::shared_ptr<const Model>& model, Integrator integrator, int steps,
                                   const std::string& label) {
  CpuAndGpu<T> pair(model, 0);
  Batch<T>& cpu = pair.cpu;
  Batch<T>& gpu = pair.gpu;
  if (!model->contacts().empty()) {
    cpu.assemble();
    gpu.assemble();
    expectGpuMatchesCpu(gpu, cpu, label + ", assemble");
  }
  cpu.evaluate();
  gpu.evaluate();
  expectGpuMatchesCpu(gpu, cpu, label + ", evaluate");
  cpu.step(1e-3, steps, integrator);
  gpu.step(1e-3, steps, integrator);
  expectGpuMatchesCpu(gpu, cpu, label + ", step");
  cpu.evaluate();
  gpu.evaluate();
  expectGpuMatchesCpu(gpu, cpu, label + ", evaluate after the steps");
  for (std::int64_t w = 0; w < kWorlds; ++w) ASSERT_EQ(gpu.status(w), kStatusOk) << label << " world " << w << ": " << describeStatus(gpu.status(w));
}

TEST(GpuPaths, AdvanceAndEvaluateWithoutContactsDouble) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectAdvanceAndEvaluateMatch<double>(makeChain(7), Integrator::RK4, 50, "chain-7 double RK4");
  expectAdvanceAndEvaluateMatch<double>(makeChain(7), Integrator::SemiImplicitEuler, 50, "chain-7 double semi-implicit Euler");
  expectAdvanceAndEvaluateMatch<double>(makeFreeBushingGrid(2), Integrator::RK4, 50, "free-bushing-grid-2 double");
}

TEST(GpuPaths, AdvanceAndEvaluateWithoutContactsFloat) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectAdvanceAndEvaluateMatch<float>(makeChain(7), Integrator::RK4, 20, "chain-7 float RK4");
  expectAdvanceAndEvaluateMatch<float>(makeFreeBushingGrid(2), Integrator::RK4, 20, "free-bushing-grid-2 float");
}

TEST(GpuPaths, AdvanceAndEvaluateWithContactsDouble) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectAdvanceAndEvaluateMatch<double>(makeChain7Seed(), Integrator::RK4, 50, "chain-7-seed double RK4");
  expectAdvanceAndEvaluateMatch<double>(makeChain7Seed(), Integrator::SemiImplicitEuler, 50, "chain-7-seed double semi-implicit Euler");
}

TEST(GpuPaths, AdvanceAndEvaluateWithContactsFloat) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectAdvanceAndEvaluateMatch<float>(makeChain7Seed(), Integrator::RK4, 20, "chain-7-seed float RK4");
}

// MuJoCo's law on CUDA (advanceKernel<*, 2>: the soft solve per world, soft_constraints.h) against
// the CPU: the free box of softBoxOnPlane under a pyramid and under an elliptic cone, pressed 2 mm
// into the plane, each world sliding and spinning at its own speeds, 40 steps of 5 ms (RK4 and
// Euler), then an evaluation. A step leaves the solve's fields (softContact, softLimitForce,
// softSolver) as the last evaluate() left them on both backends. The Newton solve stops at its
// tolerance, and the device fuses multiply-adds the CPU's packs do not, so the two agree to the
// solve's tolerance rather than to rounding: 1e-7 of each field's largest magnitude in double, 5e-3
// in float, and the Newton iterations to one.
template <class T>
void expectSoftStepsMatch(bool elliptic, Integrator integrator, double tol) {
  const auto model = softBoxOnPlane(elliptic);
  const std::string label = std::string(elliptic ? "cone" : "pyramid") + (sizeof(T) == 8 ? " double" : " float") +
                            (integrator == Integrator::RK4 ? " RK4" : " Euler");
  Batch<T> cpu(model, kWorlds, Backend::Cpu), gpu(model, kWorlds, Backend::Cuda);
  for (Batch<T>* b : {&cpu, &gpu})
    for (std::int64_t w = 0; w < kWorlds; ++w) {
      // a turn of 0.3 rad about z, tilted by up to 0.02 rad
      std::vector<double> q = {std::cos(0.15), 0.005 * double(w % 3), -0.01, std::sin(0.15), 0.1, -0.2, 0.048};
      const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      for (int i = 0; i < 4; ++i) q[i] /= norm;
      const double s = 1 + 0.01 * double(w % 50);
      b->setQ(w, q);
      b->setU(w, {0.1 * s, -0.05, 0.4 * s, 0.6 * s, -0.3, -0.02});
      if (w % 3 == 0) b->setTau(w, {0.1, -0.2, 0.05, 0.3 * s, -0.1, 0.2});
    }
  gpu.upload();
  cpu.step(0.005, 40, integrator);
  gpu.step(0.005, 40, integrator);
  expectGpuMatchesCpu(gpu, cpu, label + ", step", tol);
  cpu.evaluate();
  gpu.evaluate();
  // The solve's statistics apart: its Newton iterations may differ by one, and its final gradient
  // is whatever lies below the tolerance.
  expectGpuMatchesCpu(gpu, cpu, label + ", evaluate", tol, {"softSolver"});
  const FieldView a = gpu.field("softSolver", MemorySpace::Host), b = cpu.field("softSolver", MemorySpace::Host);
  for (std::int64_t w = 0; w < kWorlds; ++w) {
    const double ga = valueAt(a, std::size_t(w)), gb = valueAt(b, std::size_t(w));  // component 0: iterations
    EXPECT_LE(std::abs(ga - gb), 1) << label << " world " << w << ": Newton iterations";
  }
  for (std::int64_t w = 0; w < kWorlds; ++w) ASSERT_EQ(gpu.status(w), kStatusOk) << label << " world " << w;
}

TEST(GpuPaths, SoftContactsMatchCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  for (bool elliptic : {false, true}) {
    expectSoftStepsMatch<double>(elliptic, Integrator::RK4, 1e-7);
    expectSoftStepsMatch<double>(elliptic, Integrator::SemiImplicitEuler, 1e-7);
    expectSoftStepsMatch<float>(elliptic, Integrator::RK4, 5e-3);
  }
}

// Assembly from states off the contact manifold, with radii of their own per world, then the
// captured initial states (a device-to-device copy) that resets return to.
template <class T>
void expectAssembleMatches() {
  const auto model = makeChain7Seed();
  Batch<T> cpu(model, kWorlds, Backend::Cpu), gpu(model, kWorlds, Backend::Cuda);
  for (Batch<T>* b : {&cpu, &gpu}) {
    startVaried(*b);
    for (std::int64_t w = 0; w < kWorlds; w += 3) b->setSphereRadii(w, 0, 0.2 + 1e-4 * double(w), 0.1);
  }
  gpu.upload();
  cpu.assemble();
  gpu.assemble();
  expectGpuMatchesCpu(gpu, cpu, "assemble");
  for (std::int64_t w = 0; w < kWorlds; ++w) ASSERT_EQ(gpu.status(w), kStatusOk) << w << ": " << describeStatus(gpu.status(w));
  cpu.captureInitialState();
  gpu.captureInitialState();
  expectGpuMatchesCpu(gpu, cpu, "captureInitialState");
  cpu.step(1e-3, 10);
  gpu.step(1e-3, 10);
  std::vector<std::int64_t> all(kWorlds);
  for (std::int64_t w = 0; w < kWorlds; ++w) all[w] = w;
  cpu.resetWorlds(all);
  gpu.resetWorlds(all);
  expectGpuMatchesCpu(gpu, cpu, "reset to the assembled states");
}

TEST(GpuPaths, AssembleMatchesCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectAssembleMatches<double>();
  expectAssembleMatches<float>();
}

// Resets by index and by mask, each with its array in host memory and in device memory; the worlds
// reset include the first, the last and worlds past the first block.
template <class T>
void expectResetsMatch() {
  const auto model = makeChain7Seed({true, true, false});
  CpuAndGpu<T> pair(model, 20);
  Batch<T>& cpu = pair.cpu;
  Batch<T>& gpu = pair.gpu;

  const std::vector<std::int64_t> listed = {0, 129, 200, kWorlds - 1};
  cpu.resetWorlds(listed);
  gpu.resetWorlds(listed);
  expectGpuMatchesCpu(gpu, cpu, "reset by index, host list");

  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  const std::vector<std::int64_t> listed2 = {3, 130, 131, 332};
  {
    const DeviceCopy<std::int64_t> d(listed2);
    cpu.resetWorlds(listed2.data(), std::int64_t(listed2.size()), MemorySpace::Host);
    gpu.resetWorlds(d.get(), std::int64_t(listed2.size()), MemorySpace::Backend);
    expectGpuMatchesCpu(gpu, cpu, "reset by index, device list");
  }

  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  std::vector<std::uint8_t> mask(kWorlds, 0);
  for (std::int64_t w = 0; w < kWorlds; w += 7) mask[w] = 1;
  cpu.resetWorldsMask(mask.data(), MemorySpace::Host);
  gpu.resetWorldsMask(mask.data(), MemorySpace::Host);
  expectGpuMatchesCpu(gpu, cpu, "reset by mask, host mask");

  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  for (std::int64_t w = 0; w < kWorlds; ++w) mask[w] = w % 5 == 2 || w == kWorlds - 1;
  {
    const DeviceCopy<std::uint8_t> d(mask);
    cpu.resetWorldsMask(mask.data(), MemorySpace::Host);
    gpu.resetWorldsMask(d.get(), MemorySpace::Backend);
    expectGpuMatchesCpu(gpu, cpu, "reset by mask, device mask");
  }
  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  expectGpuMatchesCpu(gpu, cpu, "steps after the resets");
}

TEST(GpuPaths, ResetsByIndexAndMaskMatchCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectResetsMatch<double>();
  expectResetsMatch<float>();
}

// Given states for a few worlds, rows of q and u in host memory and in device memory.
template <class T>
void expectSetStatesMatch() {
  const auto model = makeChain7Seed({true, true, false});
  const int nq = model->nq(), nu = model->nu();
  CpuAndGpu<T> pair(model, 10);
  Batch<T>& cpu = pair.cpu;
  Batch<T>& gpu = pair.gpu;
  const std::vector<std::int64_t> worlds = {2, 77, 128, kWorlds - 1};
  const std::int64_t count = std::int64_t(worlds.size());
  std::vector<T> q(count * nq), u(count * nu);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = T(0.3 * std::sin(0.7 * double(i)));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = T(0.2 * std::cos(1.3 * double(i)));
  cpu.setStates(worlds.data(), count, q.data(), u.data(), MemorySpace::Host);
  gpu.setStates(worlds.data(), count, q.data(), u.data(), MemorySpace::Host);
  expectGpuMatchesCpu(gpu, cpu, "setStates, host arrays");
  for (std::int64_t k = 0; k < count; ++k) {
    const std::vector<double> got = gpu.q(worlds[k]);
    for (int i = 0; i < nq; ++i) EXPECT_EQ(got[i], double(q[k * nq + i])) << "world " << worlds[k];  // copied, not computed
  }

  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  for (T& x : q) x = T(-0.5) * x;
  const std::vector<std::int64_t> worlds2 = {0, 1, 300};
  const std::int64_t count2 = std::int64_t(worlds2.size());
  q.resize(count2 * nq);
  u.resize(count2 * nu);
  {
    const DeviceCopy<std::int64_t> dw(worlds2);
    const DeviceCopy<T> dq(q), du(u);
    cpu.setStates(worlds2.data(), count2, q.data(), u.data(), MemorySpace::Host);
    gpu.setStates(dw.get(), count2, dq.get(), du.get(), MemorySpace::Backend);
    expectGpuMatchesCpu(gpu, cpu, "setStates, device arrays");
  }
  cpu.step(1e-3, 5);
  gpu.step(1e-3, 5);
  expectGpuMatchesCpu(gpu, cpu, "steps after setStates");
}

TEST(GpuPaths, SetStatesMatchesCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectSetStatesMatch<double>();
  expectSetStatesMatch<float>();
}

// With auto-reset on, worlds that fail during a step (speeds of 1e25: their energies overflow in
// float) restart from their initial state, their reason saved; a world flagged at the start (not
// finite in float) is handled as the CPU backend handles it.
TEST(GpuPaths, AutoResetMatchesCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  const auto model = makeChain(7);
  Batch<float> cpu(model, kWorlds, Backend::Cpu), gpu(model, kWorlds, Backend::Cuda);
  for (Batch<float>* b : {&cpu, &gpu}) {
    startVaried(*b);
    for (std::int64_t w : {5, 250}) b->setU(w, std::vector<double>(7, 1e25));
    b->setU(7, std::vector<double>(7, 1e300));
    b->setAutoReset(true);
  }
  ASSERT_NE(gpu.status(7), kStatusOk);
  gpu.upload();
  cpu.step(1e-3, 10);
  gpu.step(1e-3, 10);
  expectGpuMatchesCpu(gpu, cpu, "auto-reset");
  for (std::int64_t w : {5, 250}) {
    EXPECT_GE(gpu.resetCount(w), 1) << w;
    EXPECT_NE(gpu.lastFailure(w), kStatusOk) << w;
    EXPECT_EQ(gpu.status(w), kStatusOk) << w;
  }
}

// A recorded step replays the same kernel on the same data: bit for bit what step() gives, on the
// batch's stream or a caller's. It refuses to run after a host change or a parameter layout change.
template <class T>
void expectRecordedStepsMatch() {
  const auto model = makeChain7Seed();
  const int n = 257;
  cudaStream_t callers = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&callers, cudaStreamNonBlocking), "test stream");
  {
    Batch<T> cpu(model, n, Backend::Cpu), recorded(model, n, Backend::Cuda), plain(model, n, Backend::Cuda);
    for (Batch<T>* b : {&cpu, &recorded, &plain}) startVaried(*b);
    recorded.upload();
    plain.upload();
    plain.setStream(callers);
    EXPECT_EQ(plain.stream(), static_cast<void*>(callers));
    for (Batch<T>* b : {&cpu, &recorded, &plain}) b->assemble();
    const auto graph = recorded.captureStep(1e-3, 5);
    for (int k = 0; k < 4; ++k) {
      graph->launch();
      plain.step(1e-3, 5);
      cpu.step(1e-3, 5);
    }
    recorded.synchronize();
    plain.synchronize();
    recorded.download();
    plain.download();
    expectFieldsMatch(recorded, plain, 0.0, "recorded steps vs step() on a caller's stream");
    expectFieldsMatch(recorded, cpu, kTol<T>, "recorded steps vs the CPU backend");

    // A host change without upload(), then a parameter that becomes per-world (its device array
    // moves): the graph refuses; recorded again, it runs. (Damping: shared by every world until
    // now; startVaried already made gravity per-world.)
    for (Batch<T>* b : {&cpu, &recorded}) b->setDamping(3, std::vector<double>(model->nu(), 0.05));
    EXPECT_THROW(graph->launch(), std::logic_error);
    recorded.upload();
    EXPECT_THROW(graph->launch(), std::logic_error);
    const auto again = recorded.captureStep(1e-3, 5);
    again->launch();
    cpu.step(1e-3, 5);
    expectGpuMatchesCpu(recorded, cpu, "recorded again after a parameter became per-world");
  }
  cudaStreamDestroy(callers);
}

TEST(GpuPaths, RecordedStepsMatchStepsBitForBit) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectRecordedStepsMatch<double>();
  expectRecordedStepsMatch<float>();
}

// DLPack tensors of every field over device memory: device, type, shape and strides right, the
// data what download() brings back; actions written through the tau tensor drive the next step.
template <class T>
void expectDLPackDeviceTensorsWork() {
  const auto model = makeChain7Seed({true, true, false});
  CpuAndGpu<T> pair(model, 3);
  Batch<T>& cpu = pair.cpu;
  Batch<T>& gpu = pair.gpu;
  gpu.synchronize();
  int device = -1;
  checkCuda(cudaGetDevice(&device), "cudaGetDevice");
  std::vector<std::vector<unsigned char>> onDevice;
  for (const std::string& name : Batch<T>::fieldNames()) {
    DLManagedTensor* t = gpu.toDLPack(name, MemorySpace::Backend);
    const DLTensor& d = t->dl_tensor;
    const FieldView v = gpu.field(name, MemorySpace::Backend);
    EXPECT_EQ(d.device.device_type, kDLCUDA) << name;
    EXPECT_EQ(d.device.device_id, device) << name;
    EXPECT_EQ(d.data, v.data) << name;
    EXPECT_EQ(d.byte_offset, 0u) << name;
    EXPECT_EQ(d.ndim, v.components == 1 ? 1 : 2) << name;
    EXPECT_EQ(d.shape[0], kWorlds) << name;
    EXPECT_EQ(d.strides[0], 1) << name;
    if (d.ndim == 2) {
      EXPECT_EQ(d.shape[1], v.components) << name;
      EXPECT_EQ(d.strides[1], kWorlds) << name;
    }
    const bool isInt = v.elementType == FieldView::Type::Int32;
    EXPECT_EQ(d.dtype.code, isInt ? std::uint8_t(kDLInt) : std::uint8_t(kDLFloat)) << name;
    EXPECT_EQ(d.dtype.bits, isInt ? 32 : 8 * sizeof(T)) << name;
    EXPECT_EQ(d.dtype.lanes, 1) << name;
    const std::size_t bytes = std::size_t(kWorlds) * std::size_t(v.components) * (d.dtype.bits / 8);
    onDevice.emplace_back(bytes);
    if (bytes) checkCuda(cudaMemcpy(onDevice.back().data(), d.data, bytes, cudaMemcpyDeviceToHost), "test read tensor");
    t->deleter(t);
  }
  gpu.download();
  std::size_t k = 0;
  for (const std::string& name : Batch<T>::fieldNames()) {
    const FieldView h = gpu.field(name, MemorySpace::Host);
    EXPECT_FALSE(h.onDevice);
    if (!onDevice[k].empty()) {
      EXPECT_EQ(std::memcmp(onDevice[k].data(), h.data, onDevice[k].size()), 0) << name;
    }
    DLManagedTensor* t = gpu.toDLPack(name, MemorySpace::Host);
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU) << name;
    EXPECT_EQ(t->dl_tensor.data, h.data) << name;
    t->deleter(t);
    ++k;
  }

  // Actions through the device tensor, [worlds, nu] with strides [1, worlds]; the CPU batch gets
  // the same actions through setTau.
  const int nu = model->nu();
  std::vector<T> tau(std::size_t(kWorlds) * nu);
  for (std::int64_t w = 0; w < kWorlds; ++w)
    for (int i = 0; i < nu; ++i) tau[std::size_t(i) * kWorlds + w] = T(0.2 * std::sin(0.01 * double(w) + i));
  DLManagedTensor* t = gpu.toDLPack("tau", MemorySpace::Backend);
  checkCuda(cudaMemcpy(t->dl_tensor.data, tau.data(), tau.size() * sizeof(T), cudaMemcpyHostToDevice), "test write tau");
  checkCuda(cudaDeviceSynchronize(), "test write tau");  // (see DeviceCopy)
  t->deleter(t);
  for (std::int64_t w = 0; w < kWorlds; ++w) {
    std::vector<double> row(nu);
    for (int i = 0; i < nu; ++i) row[i] = double(tau[std::size_t(i) * kWorlds + w]);
    cpu.setTau(w, row);
  }
  cpu.step(1e-3, 10);
  gpu.step(1e-3, 10);
  expectGpuMatchesCpu(gpu, cpu, "steps driven through the DLPack tau tensor");
}

TEST(GpuPaths, DLPackDeviceTensorsReadAndWriteTheBatch) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectDLPackDeviceTensorsWork<double>();
  expectDLPackDeviceTensorsWork<float>();
}

// A whole study on the CUDA backend (parameters drawn per world, outcomes read back and reduced on
// the host) against the same study on the CPU backend.
template <class T>
void expectStudyMatches() {
  const auto model = makeChain7Seed();
  StudySpec spec;
  spec.worlds = 999;
  spec.steps = 40;
  spec.seed = 7;
  spec.vary = {{"bushing.bushing.stiffness.3", Distribution::LogNormal, 4.6, 0.4},
               {"body.link7.mass", Distribution::Normal, 1.0, 0.1, 0.5, 1.5}};
  spec.outputs = {"q.joint7", "energy.total", "contact.contact.error"};
  const StudyResult cpu = runStudy<T>(model, spec, Backend::Cpu);
  const StudyResult gpu = runStudy<T>(model, spec, Backend::Cuda);
  EXPECT_EQ(gpu.flaggedWorlds, cpu.flaggedWorlds);
  ASSERT_EQ(gpu.outputs.size(), cpu.outputs.size());
  for (std::size_t o = 0; o < cpu.outputs.size(); ++o) {
    const OutputStats &g = gpu.outputs[o], &c = cpu.outputs[o];
    const double scale = 1 + std::max(std::abs(c.min), std::abs(c.max)), tol = kTol<T> * scale;
    EXPECT_EQ(g.name, c.name);
    EXPECT_EQ(g.count, c.count) << c.name;
    EXPECT_NEAR(g.mean, c.mean, tol) << c.name;
    EXPECT_NEAR(g.stddev, c.stddev, tol) << c.name;
    EXPECT_NEAR(g.min, c.min, tol) << c.name;
    EXPECT_NEAR(g.max, c.max, tol) << c.name;
    ASSERT_EQ(g.quantiles.size(), c.quantiles.size());
    for (std::size_t k = 0; k < c.quantiles.size(); ++k) EXPECT_NEAR(g.quantiles[k], c.quantiles[k], tol) << c.name;
    std::int64_t total = 0;
    for (std::int64_t x : g.histogram) total += x;
    EXPECT_EQ(total, g.count) << c.name;
  }
}

TEST(GpuPaths, StudyOnCudaMatchesCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  expectStudyMatches<double>();
  expectStudyMatches<float>();
}

// A batch whose estimate exceeds the free device memory fails when it is made, with a message
// that says how much it needs and how many worlds fit; the device is usable afterwards. Most of
// the device memory is taken first, so that the batch asked for stays small on the host.
TEST(GpuPaths, BatchLargerThanTheDeviceMemoryIsAClearError) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  const auto model = makeChain(7);
  checkCuda(cudaFree(nullptr), "context");
  std::size_t freeBytes = 0, totalBytes = 0;
  checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  const std::size_t keep = std::size_t(1) << 30;  // 1 GiB left free
  if (freeBytes < 2 * keep) GTEST_SKIP() << "less than 2 GiB of device memory free";
  void* hog = nullptr;
  std::size_t taken = freeBytes - keep;
  while (cudaMalloc(&hog, taken) != cudaSuccess && taken > keep) {  // the driver keeps some back
    cudaGetLastError();
    hog = nullptr;
    taken -= std::size_t(256) << 20;
  }
  ASSERT_NE(hog, nullptr);
  checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  const std::int64_t perWorld = batchMemory(*model, Precision::Double, 1000, Backend::Cuda).deviceBytes / 1000;
  const std::int64_t worlds = std::int64_t(freeBytes) / perWorld * 2 + 1;  // twice what fits: ~2 GiB
  std::string message;
  try {
    Batch<double> tooBig(model, worlds, Backend::Cuda);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  cudaFree(hog);
  EXPECT_NE(message.find(std::to_string(worlds) + " worlds need"), std::string::npos) << message;
  EXPECT_NE(message.find("of device memory"), std::string::npos) << message;
  EXPECT_NE(message.find("worlds of this model fit"), std::string::npos) << message;
  // Nothing sticky: the same batch fits now and steps.
  Batch<double> fits(model, worlds, Backend::Cuda);
  fits.upload();
  fits.step(1e-3, 2);
  fits.download();
  EXPECT_EQ(fits.status(worlds - 1), kStatusOk);
}

// The device arrays exist from the start (so that a batch too large fails when made) but hold
// nothing before the first upload(): a download() before it leaves the host copy as it is.
TEST(GpuPaths, DownloadBeforeTheFirstUploadKeepsTheHostCopy) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  const auto model = makeChain(7);
  Batch<double> gpu(model, 5, Backend::Cuda);
  const std::vector<double> q = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  gpu.setQ(2, q);
  gpu.download();
  EXPECT_EQ(gpu.q(2), q);
  EXPECT_EQ(gpu.q(0), model->defaultQ());
}

// Every world gets its own state from its index (neighbours differ by O(0.1)), written through the
// host field views.
template <class T>
void setStatesFromIndex(Batch<T>& b, const std::vector<std::int64_t>& worldIds) {
  const Model& m = b.model();
  T* q = static_cast<T*>(b.field("q", MemorySpace::Host).data);
  T* u = static_cast<T*>(b.field("u", MemorySpace::Host).data);
  const std::int64_t n = b.numWorlds();
  for (std::int64_t k = 0; k < n; ++k) {
    const double id = double(worldIds.empty() ? k : worldIds[k]);
    for (int i = 0; i < m.nq(); ++i) {
      const double phase = id * 0.6180339887498949 + 0.1 * i;
      q[std::size_t(i) * n + k] = T(m.defaultQ()[i] + 0.5 * (phase - std::floor(phase)) - 0.25);
    }
    for (int i = 0; i < m.nu(); ++i) {
      const double phase = id * 0.4142135623730951 + 0.3 * i;
      u[std::size_t(i) * n + k] = T((phase - std::floor(phase)) - 0.5);
    }
  }
}

// 5,001 worlds (40 blocks) all against the CPU backend.
TEST(GpuPaths, BatchOfManyBlocksMatchesCpu) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  const auto model = makeChain(7);
  const int n = 5001;
  Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
  setStatesFromIndex(cpu, {});
  setStatesFromIndex(gpu, {});
  gpu.upload();
  cpu.step(1e-3, 20);
  gpu.step(1e-3, 20);
  expectGpuMatchesCpu(gpu, cpu, "5001 worlds");
}

// More than 65,535 blocks of 128 threads (the grid's x dimension is the one used): worlds at the
// block boundaries and at the end are the same worlds run alone, on the GPU bit for bit and on the
// CPU backend to rounding.
TEST(GpuPaths, BatchOfMoreThan65535BlocksMatchesWorldsRunAlone) {
  LOCKSTEP_SKIP_WITHOUT_GPU();
  const auto model = makeChain(3);
  const std::int64_t n = 65535LL * 128 + 77;  // 65,536 blocks
  const BatchMemory need = batchMemory(*model, Precision::Float, n, Backend::Cuda);
  const MemoryAvailable have = memoryAvailable(true);
  const std::string why = whyBatchDoesNotFit(need, have, 0.5);
  if (!why.empty()) GTEST_SKIP() << n << " worlds of chain-3 in float: " << why;
  Batch<float> big(model, n, Backend::Cuda);
  setStatesFromIndex(big, {});
  big.upload();
  big.step(1e-3, 10);
  big.download();

  const std::vector<std::int64_t> ids = {0, 1, 127, 128, 129, 65535LL * 128 - 1, 65535LL * 128, 65535LL * 128 + 1, n - 2, n - 1};
  const std::int64_t k = std::int64_t(ids.size());
  Batch<float> aloneGpu(model, k, Backend::Cuda), aloneCpu(model, k, Backend::Cpu);
  setStatesFromIndex(aloneGpu, ids);
  setStatesFromIndex(aloneCpu, ids);
  aloneGpu.upload();
  aloneGpu.step(1e-3, 10);
  aloneCpu.step(1e-3, 10);
  aloneGpu.download();
  for (std::int64_t j = 0; j < k; ++j) {
    EXPECT_EQ(big.q(ids[j]), aloneGpu.q(j)) << "world " << ids[j];
    EXPECT_EQ(big.u(ids[j]), aloneGpu.u(j)) << "world " << ids[j];
    EXPECT_EQ(big.time(ids[j]), aloneGpu.time(j)) << "world " << ids[j];
    EXPECT_EQ(big.status(ids[j]), kStatusOk) << "world " << ids[j];
    const std::vector<double> a = big.q(ids[j]), c = aloneCpu.q(j);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], c[i], kTol<float> * (1 + std::abs(c[i]))) << "world " << ids[j];
  }
  EXPECT_NE(big.q(128), big.q(129));
}

}  // namespace
}  // namespace lockstep::test
