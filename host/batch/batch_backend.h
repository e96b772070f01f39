// The backend object of a Batch: what one backend keeps for its batch and does for it. The Batch
// owns the host copy of its worlds (every per-world field and parameter) and the public API; its
// backend object owns what runs them (Newton's SolverBase: a solver owns its scratch and is told
// what changed):
//   CpuBatchBackend (cpu_batch_backend.cpp): the per-thread workspaces, the packs kept across calls,
//     the CPU options, the linearizations' dual worlds;
//   CudaBatchBackend (cuda_batch_backend.cpp): the device copy of every field, parameter and model
//     array, the per-world workspaces, the staging buffers, the stream, the generation recorded steps
//     check, which of the host and device copies is newer, the linearizations' device buffers.
// The batch tells it what changed (notify), and asks it for the context of a run (backend.h), to
// move data, to record steps and to prepare linearizations. Private to host/batch/.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "lockstep/backends/cpu_isa.h"
#include "lockstep/engine/batch.h"

namespace lockstep {

// What changed, as a batch tells its backend.
enum class Change {
  HostFields,     // the host copy of a field or parameter was written (set...(), setParameter(), ...)
  BackendFields,  // a run wrote the fields in the backend's memory (step, evaluate, resets, ...)
};

template <class T>
class BatchBackend {
 public:
  explicit BatchBackend(const BackendOps<T>& ops) : ops_(ops) {}
  virtual ~BatchBackend() = default;
  BatchBackend(const BatchBackend&) = delete;
  BatchBackend& operator=(const BatchBackend&) = delete;

  // The entry points of this backend (backend.h): every run goes through them, with context().
  const BackendOps<T>& ops() const { return ops_; }
  // Whether the backend's memory (MemorySpace::Backend) is a CUDA device's.
  virtual bool onDevice() const = 0;
  // The CPU options as run (Batch::setCpuOptions); a CUDA backend keeps them and runs nothing on them.
  virtual void setCpuOptions(const CpuRun& run) = 0;
  virtual const CpuOptions& cpuOptions() const = 0;

  // ---- what changed, and which copy is current ----
  virtual void notify(Change what) = 0;
  // Throws std::logic_error when the backend's copy of the fields is newer than the host copy.
  virtual void checkHostCurrent() const = 0;

  // ---- runs ----
  // The context of a run on the batch whose host copy is `host` (Batch::hostView()).
  virtual BackendContext<T> context(const BatchView<T>& host) = 0;
  // A pointer in the backend's memory to `bytes` given in `space` (host arrays staged in `slot`).
  virtual const void* toBackend(const void* data, std::size_t bytes, MemorySpace space, int slot) = 0;
  // Every world's current q and u become its initial state, in the backend's memory.
  virtual void captureInitialState(const BatchView<T>& host) = 0;

  // ---- moving data ----
  virtual void upload(const BatchView<T>& host, const ParameterStore<T>& params) = 0;
  virtual void download(const BatchView<T>& host) = 0;
  virtual void synchronize() = 0;
  virtual void* stream() const = 0;
  virtual void setStream(void* cudaStream) = 0;
  // The batch's fields and parameters in the backend's memory (the host view itself on the CPU), and
  // in device memory (the CPU backend has none: it throws).
  virtual BatchView<T> view(const BatchView<T>& host) = 0;
  virtual BatchView<T> deviceView(const BatchView<T>& host) = 0;

  // ---- recorded steps (StepGraph) ----
  // Bumped whenever the backend's parameter arrays move; a recorded step checks it.
  virtual std::uint64_t parameterGeneration() const = 0;
  // A recorded step of `settings` (a cudaGraphExec_t), or null where launch() runs step() instead.
  virtual void* record(const BatchView<T>& host, const StepSettings<T>& settings) = 0;
  virtual void launch(void* recorded, std::uint64_t generation) = 0;

  // ---- linearizations (derivatives.cpp) ----
  // The dual worlds a linearization runs at once, each of dualWorldBytes.
  virtual std::int64_t linearizationSlots(std::int64_t dualWorldBytes) const = 0;
  // The memory of the Jacobians (host copy, and backend copy where that is another) and of the dual worlds.
  virtual BatchMemory linearizationMemory(std::int64_t jacobianBytes, std::int64_t dualWorldsBytes) const = 0;
  // Completes `request` with the backend's buffers (the Jacobians taken from `jacobian`, the host
  // copy, unless `keep` and the backend's copy is in place; the parameter columns' flat indices; the
  // model's frames as duals; request.slots dual worlds), runs it, and leaves the worlds it
  // linearized in `jacobian`.
  virtual void linearize(const BatchView<T>& host, LinearizeRequest<T>& request,
                         const std::vector<std::int32_t>& paramIndex, AlignedVector<T>& jacobian, bool keep) = 0;
  // The Jacobians in the backend's memory (`jacobian`, the host copy, on the CPU).
  virtual void* backendJacobian(AlignedVector<T>& jacobian) = 0;

 private:
  const BackendOps<T>& ops_;
};

// The backend objects. Neither allocates before the batch's host copy exists; the CUDA one makes
// every device array at its final size, so that a batch too large fails when it is made.
template <class T>
std::unique_ptr<BatchBackend<T>> makeCpuBatchBackend(const CompiledModel<T>& model, std::int64_t nWorlds,
                                                     const CpuRun& cpu);
template <class T>
std::unique_ptr<BatchBackend<T>> makeCudaBatchBackend(const CompiledModel<T>& model, std::int64_t nWorlds,
                                                      const CpuRun& cpu);
// Frees a recorded step (a cudaGraphExec_t; StepGraph's destructor).
void destroyRecordedStep(void* recorded);

// CpuOptions as run: threads >= 1, the instruction set by name.
inline CpuOptions optionsAsRun(const CpuRun& run) { return {run.threads, run.lanes, cpuIsaOf(run)}; }

// A linearization's inputs on the host: the parameter columns' flat indices and the model's
// constant frames as duals.
template <class T>
struct LinearizationInputs {
  std::vector<std::int32_t> paramIndex;
  std::vector<Transform<DualOf<T>>> X_PF, X_MB;

  void set(const CompiledModel<T>& model, const std::vector<std::int32_t>& params) {
    paramIndex = params;
    X_PF.clear();
    X_MB.clear();
    for (const Transform<T>& X : model.X_PF) X_PF.push_back(castTransform<DualOf<T>>(X));
    for (const Transform<T>& X : model.X_MB) X_MB.push_back(castTransform<DualOf<T>>(X));
  }
};

}  // namespace lockstep
