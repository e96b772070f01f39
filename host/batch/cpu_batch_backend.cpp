// The CPU backend object of a Batch (batch_backend.h): its options, the per-thread workspaces and
// packs its runs use, and the dual worlds of its linearizations. The host copy is its only copy:
// nothing moves, and every run reads and writes the batch's host arrays.
#include <algorithm>
#include <stdexcept>

#include "batch_backend.h"

namespace lockstep {

namespace {

template <class T>
class CpuBatchBackend final : public BatchBackend<T> {
 public:
  CpuBatchBackend(const CompiledModel<T>& model, const CpuRun& cpu) : BatchBackend<T>(cpuBackend<T>()), model_(model) {
    setCpuOptions(cpu);
  }

  bool onDevice() const override { return false; }
  void setCpuOptions(const CpuRun& run) override {
    run_ = run;
    options_ = optionsAsRun(run);
  }
  const CpuOptions& cpuOptions() const override { return options_; }

  // The packs see a change of the parameter layout in the view they are given (they compare it
  // with the one they were made for), and nothing is ever newer than the host copy.
  void notify(Change) override {}
  void checkHostCurrent() const override {}

  BackendContext<T> context(const BatchView<T>& host) override {
    scratch_.resize(static_cast<std::size_t>(model_.layout.total) * run_.threads);
    return {model_.view(), host, model_.layout, scratch_.data(), nullptr, cache_.get(), run_};
  }
  const void* toBackend(const void* data, std::size_t, MemorySpace, int) override { return data; }
  void captureInitialState(const BatchView<T>& host) override {
    std::copy(host.q, host.q + std::size_t(model_.sizes.nq) * host.nWorlds, host.initialQ);
    std::copy(host.u, host.u + std::size_t(model_.sizes.nu) * host.nWorlds, host.initialU);
  }

  void upload(const BatchView<T>&, const ParameterStore<T>&) override {}
  void download(const BatchView<T>&) override {}
  void synchronize() override {}
  void* stream() const override { return nullptr; }
  void setStream(void*) override { throw std::logic_error("setStream: this batch runs on the CPU backend"); }
  BatchView<T> view(const BatchView<T>& host) override { return host; }
  BatchView<T> deviceView(const BatchView<T>&) override {
    throw std::logic_error("deviceView: this batch runs on the CPU backend and has no device copy");
  }

  // A recorded step is a plain step() (StepGraph::launch), whatever the parameters do.
  std::uint64_t parameterGeneration() const override { return 0; }
  void* record(const BatchView<T>&, const StepSettings<T>&) override { return nullptr; }
  void launch(void*, std::uint64_t) override {
    throw std::logic_error("launch: a step recorded on the CPU backend is launched as a step()");
  }

  // One dual world per thread, in host memory beside the Jacobians.
  std::int64_t linearizationSlots(std::int64_t) const override { return run_.threads; }
  BatchMemory linearizationMemory(std::int64_t jacobianBytes, std::int64_t dualWorldsBytes) const override {
    BatchMemory need;
    need.hostBytes = jacobianBytes + dualWorldsBytes;
    return need;
  }
  void linearize(const BatchView<T>& host, LinearizeRequest<T>& request, const std::vector<std::int32_t>& paramIndex,
                 AlignedVector<T>& jacobian, bool) override {
    inputs_.set(model_, paramIndex);
    dualScratch_.resize(static_cast<std::size_t>(request.slots * request.layout.total));
    dualInts_.resize(static_cast<std::size_t>(std::max<std::int64_t>(request.slots * request.layout.ints, 1)));
    request.dirs.param = inputs_.paramIndex.data();
    request.jacobian = jacobian.data();
    request.X_PF = inputs_.X_PF.data();
    request.X_MB = inputs_.X_MB.data();
    request.dualScratch = dualScratch_.data();
    request.dualInts = dualInts_.data();
    this->ops().linearize(context(host), request);
  }
  void* backendJacobian(AlignedVector<T>& jacobian) override { return jacobian.data(); }

 private:
  const CompiledModel<T>& model_;
  CpuRun run_;
  CpuOptions options_;  // as run (run_)
  AlignedVector<T> scratch_;  // one workspace per thread
  CpuBackendCacheHandle<T> cache_ = makeCpuBackendCache<T>();  // the packs, kept across calls
  LinearizationInputs<T> inputs_;
  AlignedVector<DualOf<T>> dualScratch_;  // one dual world per thread
  AlignedVector<std::int32_t> dualInts_;
};

}  // namespace

template <class T>
std::unique_ptr<BatchBackend<T>> makeCpuBatchBackend(const CompiledModel<T>& model, std::int64_t, const CpuRun& cpu) {
  return std::make_unique<CpuBatchBackend<T>>(model, cpu);
}

template std::unique_ptr<BatchBackend<float>> makeCpuBatchBackend(const CompiledModel<float>&, std::int64_t,
                                                                  const CpuRun&);
template std::unique_ptr<BatchBackend<double>> makeCpuBatchBackend(const CompiledModel<double>&, std::int64_t,
                                                                   const CpuRun&);

}  // namespace lockstep
