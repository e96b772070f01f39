#include "device_memory.h"

namespace lockstep {

template <class U>
bool DeviceArray<U>::resize(std::size_t n) {
  if (n == n_) return false;
  release();
  if (n) checkCuda(cudaMalloc(&p_, n * sizeof(U)), "cudaMalloc");
  n_ = n;
  return true;
}

template <class U>
bool DeviceArray<U>::upload(const std::vector<U>& h, cudaStream_t stream) {
  const bool moved = resize(h.size());
  if (n_) checkCuda(cudaMemcpyAsync(p_, h.data(), n_ * sizeof(U), cudaMemcpyHostToDevice, stream), "cudaMemcpy to device");
  return moved;
}

template <class U>
void DeviceArray<U>::download(std::vector<U>& h, cudaStream_t stream) const {
  if (n_) checkCuda(cudaMemcpyAsync(h.data(), p_, n_ * sizeof(U), cudaMemcpyDeviceToHost, stream), "cudaMemcpy to host");
}

template <class U>
void DeviceArray<U>::release() {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  n_ = 0;
}

template <class T>
Batch<T>::Device::Device(const CompiledModel<T>& model, std::int64_t nWorlds) {
  cudaStream_t s = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  stream = s;
  body.upload(model.body, s);
  X_PF.upload(model.X_PF, s);
  X_MB.upload(model.X_MB, s);
  bushing.upload(model.bushing, s);
  spring.upload(model.spring, s);
  contact.upload(model.contact, s);
  ground.upload(model.ground, s);
  synchronize("uploading the model");
  scratch.resize(static_cast<std::size_t>(model.layout.total) * nWorlds);
}

template <class T>
Batch<T>::Device::~Device() {
  cudaStreamSynchronize(asStream(stream));
  if (ownsStream) cudaStreamDestroy(asStream(stream));
}

template <class T>
void Batch<T>::Device::useStream(void* cudaStream) {
  synchronize("waiting for the batch's stream");
  if (ownsStream) cudaStreamDestroy(asStream(stream));
  stream = cudaStream;
  ownsStream = false;
}

template <class T>
void Batch<T>::Device::synchronize(const char* what) const {
  checkCuda(cudaStreamSynchronize(asStream(stream)), what);
}

// ---- Batch: moving data between the host and device copies ---------------------------------------

template <class T>
void Batch<T>::upload() {
  if (!device_) return;
  checkReadable();
  const cudaStream_t stream = asStream(device_->stream);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_->name.upload(name##_, stream);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  for (int p = 0; p < kParamCount; ++p)
    if (device_->params[p].upload(params_.data(ParamId(p)), stream)) ++device_->paramGeneration;
  device_->synchronize("uploading");
  hostChanged_ = false;
}

template <class T>
void Batch<T>::download() {
  if (!device_) return;
  const cudaStream_t stream = asStream(device_->stream);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_->name.download(name##_, stream);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  device_->synchronize("downloading");
  deviceAhead_ = false;
}

template <class T>
void Batch<T>::synchronize() {
  if (device_) device_->synchronize("waiting for the device");
}

template <class T>
void* Batch<T>::stream() const {
  return device_ ? device_->stream : nullptr;
}

template <class T>
void Batch<T>::setStream(void* cudaStream) {
  if (!device_) throw std::logic_error("setStream: this batch runs on the CPU backend");
  if (!cudaStream) throw std::invalid_argument("setStream: stream: must not be null");
  device_->useStream(cudaStream);
}

template <class T>
BatchView<T> Batch<T>::deviceView() {
  if (!device_) throw std::logic_error("deviceView: this batch runs on the CPU backend and has no device copy");
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = device_->name.get();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  v.name = params_.view(ParamId::name, device_->params[int(ParamId::name)].get());
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return v;
}

template <class T>
const void* Batch<T>::toBackend(const void* data, std::size_t bytes, MemorySpace space, int slot) {
  if (!device_ || space == MemorySpace::Backend) return data;
  DeviceArray<std::uint8_t>& buf = device_->staging[slot];
  if (buf.size() < bytes) buf.resize(bytes);
  checkCuda(cudaMemcpyAsync(buf.get(), data, bytes, cudaMemcpyHostToDevice, asStream(device_->stream)),
            "staging to device");
  return buf.get();
}

// ---- recorded steps (CUDA graphs) ------------------------------------------------------------

template <class T>
std::unique_ptr<StepGraph<T>> Batch<T>::captureStep(double dt, int nSteps, Integrator integrator) {
  if (nSteps < 1) throw std::invalid_argument("captureStep: steps: must be >= 1");
  const StepSettings<T> settings = stepSettings(dt, nSteps, integrator);
  std::unique_ptr<StepGraph<T>> g(new StepGraph<T>(this, settings, device_ ? device_->paramGeneration : 0));
  if (device_) {
    const BackendContext<T> ctx = context();
    const cudaStream_t stream = asStream(device_->stream);
    cudaGraph_t graph = nullptr;
    checkCuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    ops_->advance(ctx, settings);
    checkCuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    checkCuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    cudaGraphDestroy(graph);
    g->exec_ = exec;
  }
  return g;
}

template <class T>
StepGraph<T>::~StepGraph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
}

template <class T>
void StepGraph<T>::launch() {
  if (!exec_) {
    batch_->step(double(settings_.dt), settings_.nSteps, settings_.integrator);
    return;
  }
  if (batch_->device_->paramGeneration != generation_)
    throw std::logic_error("this step graph was recorded before the batch's device parameter arrays moved "
                           "(a parameter became per-world): record it again with captureStep()");
  if (batch_->hostChanged_) throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
  checkCuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), asStream(batch_->device_->stream)), "cudaGraphLaunch");
  batch_->deviceAhead_ = true;
}

template class StepGraph<float>;
template class StepGraph<double>;

#define LOCKSTEP_INSTANTIATE(T)                                                                          \
  template struct Batch<T>::Device;                                                                       \
  template void Batch<T>::upload();                                                                       \
  template void Batch<T>::download();                                                                     \
  template void Batch<T>::synchronize();                                                                  \
  template void* Batch<T>::stream() const;                                                                \
  template void Batch<T>::setStream(void*);                                                               \
  template BatchView<T> Batch<T>::deviceView();                                                           \
  template const void* Batch<T>::toBackend(const void*, std::size_t, MemorySpace, int);                   \
  template std::unique_ptr<StepGraph<T>> Batch<T>::captureStep(double, int, Integrator);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
