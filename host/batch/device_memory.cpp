// The memory of a Batch: how much it needs (batchMemoryOf) and how much there is, the device
// arrays, copies and streams of the CUDA backend, and recorded steps.
#include "device_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

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

template <class T>
void Batch<T>::checkMemory() const {
  const int threads = backend_ == Backend::Cuda ? 0 : cpuRun_.threads;
  const BatchMemory need = batchMemoryOf<T>(sizes_, nWorlds_, backend_, threads);
  const MemoryAvailable have = memoryAvailable(backend_ == Backend::Cuda);
  const std::string why = whyBatchDoesNotFit(need, have);
  if (why.empty()) return;
  throw BatchMemoryError("Batch: " + std::to_string(nWorlds_) + " worlds need more memory than is available (" +
                         why + "): at most " +
                         std::to_string(worldsThatFitOf<T>(sizes_, backend_, threads, have)) +
                         " worlds of this model fit");
}

// ---- the device copy ------------------------------------------------------------------------------

// Every per-world array is allocated here, at its final size, so that a batch too large for the
// device fails when it is made, saying how much it needs, and never later at an upload.
template <class T>
Batch<T>::Device::Device(const CompiledModel<T>& model, std::int64_t nWorlds) {
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
  } catch (const std::runtime_error& e) {
    cudaStreamDestroy(st);  // the destructor does not run when the constructor throws
    throw std::runtime_error("Batch: " + std::to_string(nWorlds) + " worlds (" + gibText(need) +
                             " of device memory): " + e.what());
  }
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
  device_->uploaded = true;
  hostChanged_ = false;
}

template <class T>
void Batch<T>::download() {
  if (!device_ || !device_->uploaded) return;  // (the device arrays are allocated but not yet written)
  const cudaStream_t stream = asStream(device_->stream);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_->name.download(name##_.data(), stream);
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
    try {
      ops_->advance(ctx, settings);
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
  template BatchMemory batchMemoryOf<T>(const Sizes&, std::int64_t, Backend, int);                        \
  template std::int64_t worldsThatFitOf<T>(const Sizes&, Backend, int, const MemoryAvailable&, double);   \
  template void Batch<T>::checkMemory() const;                                                            \
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
