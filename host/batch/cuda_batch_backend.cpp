// The CUDA backend object of a Batch (batch_backend.h): the device copy of every per-world field,
// parameter and model array, the per-world workspaces, the staging buffers for host arrays, the
// batch's stream, recorded steps (CUDA graphs), which of the host and device copies is newer, and
// the device buffers of its linearizations.
#include <algorithm>
#include <stdexcept>

#include "batch_backend.h"
#include "device_memory.h"

namespace lockstep {

namespace {

// The device copy: every per-world field and parameter, the compiled model, the workspaces, staging
// buffers, and the stream.
template <class T>
struct DeviceCopy {
  DeviceCopy(const CompiledModel<T>& model, std::int64_t nWorlds);
  ~DeviceCopy();
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) DeviceArray<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  DeviceArray<T> params[kParamCount];
#define LOCKSTEP_X(kind, type, name, count, doc) DeviceArray<type> name;
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
  DeviceArray<T> scratch;                // one workspace per world, strided across worlds
  DeviceArray<std::uint8_t> staging[3];  // host arrays passed to resets, copied to the device

  void* stream = nullptr;  // cudaStream_t
  bool ownsStream = true;
  std::uint64_t paramGeneration = 0;  // bumped whenever a device parameter array moves
  bool uploaded = false;               // the fields hold nothing before the first upload()

  ModelView<T> modelView(const Sizes& s) const {
    ModelView<T> v;
    v.sizes = s;
#define LOCKSTEP_X(kind, type, name, count, doc) v.name = name.get();
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return v;
  }
  void useStream(void* cudaStream);
  void synchronize(const char* what) const;
};

// Every per-world array is allocated here, at its final size, so that a batch too large for the
// device fails when it is made, saying how much it needs, and never later at an upload.
template <class T>
DeviceCopy<T>::DeviceCopy(const CompiledModel<T>& model, std::int64_t nWorlds) {
  const Sizes& s = model.sizes;
  const std::size_t worlds = static_cast<std::size_t>(nWorlds);
  std::size_t perWorld = static_cast<std::size_t>(model.layout.total) * sizeof(T);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  perWorld += sizeof(type) * static_cast<std::size_t>(fieldCount(s, per, parts));
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::size_t freeBytes = 0, totalBytes = 0;
  checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  const double need = double(perWorld) * double(worlds);
  if (need > double(freeBytes))
    throw std::runtime_error("Batch: " + std::to_string(nWorlds) + " worlds need " + gibText(need) +
                             " of device memory (" + std::to_string(perWorld) + " bytes per world); the GPU has " +
                             gibText(double(freeBytes)) + " free of " + gibText(double(totalBytes)) + ": at most " +
                             std::to_string(freeBytes / perWorld) + " worlds of this model fit");
  cudaStream_t st = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
  stream = st;
  try {
#define LOCKSTEP_X(kind, type, name, count, doc) name.upload(model.name, st);
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
    synchronize("uploading the model");
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  name.resize(static_cast<std::size_t>(fieldCount(s, per, parts)) * worlds);
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    scratch.resize(static_cast<std::size_t>(model.layout.total) * worlds);
    // Zero, as the CPU's workspaces start: a step's soft solve reads what the last left in its pair
    // points (advanceWorld's stepSoftContact).
    if (scratch.size() > 0)
      checkCuda(cudaMemsetAsync(scratch.get(), 0, scratch.size() * sizeof(T), st), "workspace cudaMemsetAsync");
  } catch (const std::runtime_error& e) {
    cudaStreamDestroy(st);  // the destructor does not run when the constructor throws
    throw std::runtime_error("Batch: " + std::to_string(nWorlds) + " worlds (" + gibText(need) +
                             " of device memory): " + e.what());
  }
}

template <class T>
DeviceCopy<T>::~DeviceCopy() {
  cudaStreamSynchronize(asStream(stream));
  if (ownsStream) cudaStreamDestroy(asStream(stream));
}

template <class T>
void DeviceCopy<T>::useStream(void* cudaStream) {
  synchronize("waiting for the batch's stream");
  if (ownsStream) cudaStreamDestroy(asStream(stream));
  stream = cudaStream;
  ownsStream = false;
}

template <class T>
void DeviceCopy<T>::synchronize(const char* what) const {
  checkCuda(cudaStreamSynchronize(asStream(stream)), what);
}

template <class T>
class CudaBatchBackend final : public BatchBackend<T> {
 public:
  CudaBatchBackend(const CompiledModel<T>& model, std::int64_t nWorlds, const CpuRun& cpu)
      : BatchBackend<T>(cudaBackend<T>()), model_(model), nWorlds_(nWorlds), device_(model, nWorlds) {
    setCpuOptions(cpu);
  }

  bool onDevice() const override { return true; }
  void setCpuOptions(const CpuRun& run) override { options_ = optionsAsRun(run); }
  const CpuOptions& cpuOptions() const override { return options_; }

  void notify(Change what) override {
    if (what == Change::HostFields) hostChanged_ = true;
    if (what == Change::BackendFields) deviceAhead_ = true;
  }
  void checkHostCurrent() const override {
    if (deviceAhead_)
      throw std::logic_error("the device copy of this batch is newer than the host copy: call download() first");
  }

  BackendContext<T> context(const BatchView<T>& host) override {
    if (hostChanged_)
      throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
    return {device_.modelView(model_.sizes), deviceView(host), model_.layout, device_.scratch.get(), device_.stream};
  }

  const void* toBackend(const void* data, std::size_t bytes, MemorySpace space, int slot) override {
    if (space == MemorySpace::Backend) return data;
    DeviceArray<std::uint8_t>& buf = device_.staging[slot];
    if (buf.size() < bytes) buf.resize(bytes);
    checkCuda(cudaMemcpyAsync(buf.get(), data, bytes, cudaMemcpyHostToDevice, asStream(device_.stream)),
              "staging to device");
    return buf.get();
  }

  void captureInitialState(const BatchView<T>& host) override {
    const BackendContext<T> ctx = context(host);
    const cudaStream_t stream = asStream(device_.stream);
    checkCuda(cudaMemcpyAsync(ctx.batch.initialQ, ctx.batch.q, sizeof(T) * model_.sizes.nq * nWorlds_,
                              cudaMemcpyDeviceToDevice, stream), "capturing the initial q");
    checkCuda(cudaMemcpyAsync(ctx.batch.initialU, ctx.batch.u, sizeof(T) * model_.sizes.nu * nWorlds_,
                              cudaMemcpyDeviceToDevice, stream), "capturing the initial u");
  }

  // ---- moving data between the host and device copies ----

  void upload(const BatchView<T>& host, const ParameterStore<T>& params) override {
    checkHostCurrent();
    const cudaStream_t stream = asStream(device_.stream);
    const Sizes& s = model_.sizes;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  device_.name.upload(host.name, static_cast<std::size_t>(fieldCount(s, per, parts) * nWorlds_), stream);
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    for (int p = 0; p < kParamCount; ++p)
      if (device_.params[p].upload(params.data(ParamId(p)), stream)) ++device_.paramGeneration;
    device_.synchronize("uploading");
    device_.uploaded = true;
    hostChanged_ = false;
  }

  void download(const BatchView<T>& host) override {
    if (!device_.uploaded) return;  // (the device arrays are allocated but not yet written)
    const cudaStream_t stream = asStream(device_.stream);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_.name.download(host.name, stream);
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    device_.synchronize("downloading");
    deviceAhead_ = false;
  }

  void synchronize() override { device_.synchronize("waiting for the device"); }
  void* stream() const override { return device_.stream; }
  void setStream(void* cudaStream) override {
    if (!cudaStream) throw std::invalid_argument("setStream: stream: must not be null");
    device_.useStream(cudaStream);
  }

  BatchView<T> view(const BatchView<T>& host) override { return deviceView(host); }
  // The device arrays, each parameter with the host copy's strides (shared or per world).
  BatchView<T> deviceView(const BatchView<T>& host) override {
    BatchView<T> v;
    v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = device_.name.get();
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  v.name = {device_.params[int(ParamId::name)].get(), host.name.worldStride, host.name.compStride};
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return v;
  }

  // ---- recorded steps (CUDA graphs) ----

  std::uint64_t parameterGeneration() const override { return device_.paramGeneration; }

  void* record(const BatchView<T>& host, const StepSettings<T>& settings) override {
    const BackendContext<T> ctx = context(host);
    const cudaStream_t stream = asStream(device_.stream);
    cudaGraph_t graph = nullptr;
    checkCuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      this->ops().advance(ctx, settings);
    } catch (...) {  // end the capture, or the stream stays in capture mode and refuses all work
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      throw;
    }
    checkCuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    checkCuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    cudaGraphDestroy(graph);
    return exec;
  }

  void launch(void* recorded, std::uint64_t generation) override {
    if (device_.paramGeneration != generation)
      throw std::logic_error("this step graph was recorded before the batch's device parameter arrays moved "
                             "(a parameter became per-world): record it again with captureStep()");
    if (hostChanged_)
      throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
    checkCuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(recorded), asStream(device_.stream)), "cudaGraphLaunch");
    deviceAhead_ = true;
  }

  // ---- linearizations: the Jacobians and the dual worlds in device memory ----

  // As many dual worlds as fit in 1 GiB, at most one per world; the Jacobians' host copy and device copy.
  std::int64_t linearizationSlots(std::int64_t dualWorldBytes) const override {
    return std::clamp<std::int64_t>((std::int64_t(1) << 30) / std::max<std::int64_t>(dualWorldBytes, 1),
                                    std::int64_t(1), nWorlds_);
  }
  BatchMemory linearizationMemory(std::int64_t jacobianBytes, std::int64_t dualWorldsBytes) const override {
    BatchMemory need;
    need.hostBytes = jacobianBytes;
    need.deviceBytes = jacobianBytes + dualWorldsBytes;
    return need;
  }

  void linearize(const BatchView<T>& host, LinearizeRequest<T>& request, const std::vector<std::int32_t>& paramIndex,
                 AlignedVector<T>& jacobian, bool keep) override {
    inputs_.set(model_, paramIndex);
    const cudaStream_t stream = asStream(device_.stream);
    if (jacobian_.resize(jacobian.size()) || !keep) jacobian_.upload(jacobian, stream);
    paramIndex_.upload(inputs_.paramIndex, stream);
    X_PF_.upload(inputs_.X_PF, stream);
    X_MB_.upload(inputs_.X_MB, stream);
    dualScratch_.resize(static_cast<std::size_t>(request.slots * request.layout.total));
    dualInts_.resize(static_cast<std::size_t>(std::max<std::int64_t>(request.slots * request.layout.ints, 1)));
    request.dirs.param = paramIndex_.get();
    request.jacobian = jacobian_.get();
    request.X_PF = X_PF_.get();
    request.X_MB = X_MB_.get();
    request.dualScratch = dualScratch_.get();
    request.dualInts = dualInts_.get();
    this->ops().linearize(context(host), request);
    // The worlds just linearized, back to the host copy: every component's [first, first + count).
    const std::size_t row = sizeof(T) * std::size_t(nWorlds_), offset = std::size_t(request.first);
    const std::size_t components = jacobian.size() / std::size_t(nWorlds_);
    if (request.count > 0)
      checkCuda(cudaMemcpy2DAsync(jacobian.data() + offset, row, jacobian_.get() + offset, row,
                                  sizeof(T) * std::size_t(request.count), components, cudaMemcpyDeviceToHost, stream),
                "copying the Jacobians to the host");
    device_.synchronize("linearizing");
  }
  void* backendJacobian(AlignedVector<T>&) override { return jacobian_.get(); }

 private:
  const CompiledModel<T>& model_;
  std::int64_t nWorlds_;
  CpuOptions options_;  // checked and kept (Batch::cpuOptions), never run
  DeviceCopy<T> device_;
  bool hostChanged_ = true;   // host copy changed since the last upload
  bool deviceAhead_ = false;  // device copy advanced since the last download
  // The linearizations' inputs (host), Jacobians and dual worlds (device).
  LinearizationInputs<T> inputs_;
  DeviceArray<T> jacobian_;
  DeviceArray<std::int32_t> paramIndex_;
  DeviceArray<Transform<DualOf<T>>> X_PF_, X_MB_;
  DeviceArray<DualOf<T>> dualScratch_;
  DeviceArray<std::int32_t> dualInts_;
};

}  // namespace

template <class T>
std::unique_ptr<BatchBackend<T>> makeCudaBatchBackend(const CompiledModel<T>& model, std::int64_t nWorlds,
                                                      const CpuRun& cpu) {
  return std::make_unique<CudaBatchBackend<T>>(model, nWorlds, cpu);
}

void destroyRecordedStep(void* recorded) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(recorded)); }

template std::unique_ptr<BatchBackend<float>> makeCudaBatchBackend(const CompiledModel<float>&, std::int64_t,
                                                                   const CpuRun&);
template std::unique_ptr<BatchBackend<double>> makeCudaBatchBackend(const CompiledModel<double>&, std::int64_t,
                                                                    const CpuRun&);

}  // namespace lockstep
