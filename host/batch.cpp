#include "lockstep/batch.h"

#include <cuda_runtime.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lockstep/device.h"

namespace lockstep {

const char* backendName(Backend b) { return b == Backend::Cuda ? "cuda" : "cpu"; }

Backend resolveBackend(DeviceChoice choice) {
  if (choice == DeviceChoice::Cpu) return Backend::Cpu;
  const DeviceInfo dev = queryDevice();
  if (dev.available) return Backend::Cuda;
  if (choice == DeviceChoice::Cuda)
    throw std::runtime_error("the CUDA backend was requested but " + dev.reason + "; use the CPU backend instead");
  return Backend::Cpu;
}

std::string describeStatus(std::int32_t status) {
  if (status == kStatusOk) return "ok";
  static const struct {
    std::int32_t bit;
    const char* text;
  } kReasons[] = {
      {kStatusNonFinite, "state became non-finite"},
      {kStatusSingularMassMatrix, "singular joint inertia in the articulated-body sweep"},
      {kStatusSpringLengthZero,
       "The length of the spring became nearly zero. Revisit your model to avoid this situation."},
      {kStatusBushingSingular, "bushing middle angle reached +/-90 degrees (singular Euler-angle rates)"},
      {kStatusConstraintFailed, "constraint solve or projection failed"},
  };
  std::string out;
  for (const auto& r : kReasons) {
    if (status & r.bit) out += std::string(out.empty() ? "" : "; ") + r.text;
  }
  return out.empty() ? "unknown status " + std::to_string(status) : out;
}

// ---- device storage -----------------------------------------------------------------------------

namespace {

template <class U>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { release(); }
  void resize(std::size_t n) {
    if (n == n_) return;
    release();
    if (n) checkCuda(cudaMalloc(&p_, n * sizeof(U)), "cudaMalloc");
    n_ = n;
  }
  void upload(const std::vector<U>& h) {
    resize(h.size());
    if (n_) checkCuda(cudaMemcpy(p_, h.data(), n_ * sizeof(U), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  void download(std::vector<U>& h) const {
    if (n_) checkCuda(cudaMemcpy(h.data(), p_, n_ * sizeof(U), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
  U* get() const { return p_; }

 private:
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace

template <class T>
struct Batch<T>::Device {
#define LOCKSTEP_X(type, name, count, doc) DeviceArray<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, s)
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) DeviceArray<T> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, s)
#undef LOCKSTEP_X
  DeviceArray<BodyTopology> topology;
  DeviceArray<Transform<T>> X_PF, X_BM;
  DeviceArray<T> scratch;
};

// ---- construction -------------------------------------------------------------------------------

template <class T>
Batch<T>::Batch(std::shared_ptr<const Model> model, std::int64_t nWorlds, Backend backend)
    : model_(std::move(model)), nWorlds_(nWorlds), backend_(backend) {
  if (!model_) throw std::invalid_argument("Batch: model: must not be null");
  if (nWorlds_ < 1) throw std::invalid_argument("Batch: worlds: must be at least 1 (got " + std::to_string(nWorlds_) + ")");
  const Model& m = *model_;
  sizes_.nb = m.numBodies();
  sizes_.nq = m.nq();
  sizes_.nu = m.nu();
  sizes_.nz = m.nz();
  sizes_.nd = 0;
  for (const Body& b : m.bodies()) {
    topology_.push_back({b.mobilizer, b.parent, b.qOffset, b.uOffset, b.nq, b.nu, sizes_.nd});
    sizes_.nd += b.nu * b.nu;
    X_PF_.push_back(castTransform<T>(b.X_PF));
    X_BM_.push_back(castTransform<T>(b.X_BM));
  }
  layout_ = WorkspaceLayout::of(sizes_);

#define LOCKSTEP_X(type, name, count, doc) name##_.assign(static_cast<std::size_t>(count) * nWorlds_, type(0));
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  for (std::int64_t w = 0; w < nWorlds_; ++w)
    for (int i = 0; i < sizes_.nq; ++i) q_[i * nWorlds_ + w] = T(m.defaultQ()[i]);

  // Parameters start shared: one copy of the model's defaults.
  for (const Body& b : m.bodies()) {
    const MassProperties& mp = b.mass;
    for (double x : {mp.mass, mp.com[0], mp.com[1], mp.com[2], mp.inertia.xx, mp.inertia.yy, mp.inertia.zz,
                     mp.inertia.xy, mp.inertia.xz, mp.inertia.yz})
      massProps_.data.push_back(T(x));
  }
  massProps_.count = 10 * sizes_.nb;
  for (int i = 0; i < 3; ++i) gravity_.data.push_back(T(m.gravity()[i]));
  gravity_.count = 3;
  for (double c : m.damping()) damping_.data.push_back(T(c));
  damping_.count = sizes_.nu;
  for (double e : m.effortLimit()) effortLimit_.data.push_back(T(e));
  effortLimit_.count = sizes_.nu;

  if (backend_ == Backend::Cuda) {
    device_ = std::make_unique<Device>();
    device_->topology.upload(topology_);
    device_->X_PF.upload(X_PF_);
    device_->X_BM.upload(X_BM_);
    device_->scratch.resize(static_cast<std::size_t>(layout_.total) * nWorlds_);
  }
}

template <class T>
Batch<T>::~Batch() = default;

// ---- host access --------------------------------------------------------------------------------

template <class T>
void Batch<T>::checkWorld(std::int64_t w) const {
  if (w < 0 || w >= nWorlds_)
    throw std::out_of_range("world index " + std::to_string(w) + " out of range [0, " + std::to_string(nWorlds_) + ")");
}

template <class T>
void Batch<T>::checkReadable() const {
  if (deviceAhead_)
    throw std::logic_error("the device copy of this batch is newer than the host copy: call download() first");
}

template <class T>
void Batch<T>::touchHost() {
  checkReadable();
  hostChanged_ = true;
}

template <class T>
std::vector<double> Batch<T>::getField(const std::vector<T>& f, int count, std::int64_t w) const {
  checkWorld(w);
  checkReadable();
  std::vector<double> out(count);
  for (int i = 0; i < count; ++i) out[i] = double(f[static_cast<std::size_t>(i) * nWorlds_ + w]);
  return out;
}

template <class T>
void Batch<T>::setField(std::vector<T>& f, int count, std::int64_t w, const std::vector<double>& v,
                        const char* name) {
  checkWorld(w);
  if (static_cast<int>(v.size()) != count)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(count) + " values, got " +
                                std::to_string(v.size()));
  for (int i = 0; i < count; ++i)
    if (!std::isfinite(v[i]))
      throw std::invalid_argument(std::string(name) + "[" + std::to_string(i) + "]: must be a finite number");
  touchHost();
  for (int i = 0; i < count; ++i) f[static_cast<std::size_t>(i) * nWorlds_ + w] = T(v[i]);
}

template <class T>
std::int32_t Batch<T>::status(std::int64_t w) const {
  checkWorld(w);
  checkReadable();
  return status_[w];
}

template <class T>
void Batch<T>::setBodyForce(std::int64_t w, int body, const SpatialVecd& F) {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  checkWorld(w);
  touchHost();
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(F[i])) throw std::invalid_argument("body force: must be finite");
    bodyForce_[static_cast<std::size_t>(6 * body + i) * nWorlds_ + w] = T(F[i]);
  }
}

template <class T>
void Batch<T>::setAllStates(const std::vector<double>& q, const std::vector<double>& u) {
  for (std::int64_t w = 0; w < nWorlds_; ++w) {
    setQ(w, q);
    setU(w, u);
    setZ(w, std::vector<double>(sizes_.nz, 0.0));
    setTime(w, 0.0);
    status_[w] = kStatusOk;
  }
}

template <class T>
void Batch<T>::resetWorld(std::int64_t w) {
  setQ(w, model_->defaultQ());
  setU(w, model_->defaultU());
  setZ(w, std::vector<double>(sizes_.nz, 0.0));
  setTime(w, 0.0);
  status_[w] = kStatusOk;
}

template <class T>
void Batch<T>::clearStatus(std::int64_t w) {
  checkWorld(w);
  touchHost();
  status_[w] = kStatusOk;
}

// ---- parameters ---------------------------------------------------------------------------------

template <class T>
T& Batch<T>::paramRef(ParamStorage& p, std::int64_t w, std::int64_t c) {
  if (!p.perWorld) {
    std::vector<T> all(static_cast<std::size_t>(p.count) * nWorlds_);
    for (std::int64_t k = 0; k < p.count; ++k)
      for (std::int64_t x = 0; x < nWorlds_; ++x) all[k * nWorlds_ + x] = p.data[k];
    p.data.swap(all);
    p.perWorld = true;
  }
  return p.data[c * nWorlds_ + w];
}

template <class T>
T Batch<T>::paramValue(const ParamStorage& p, std::int64_t w, std::int64_t c) const {
  return p.perWorld ? p.data[c * nWorlds_ + w] : p.data[c];
}

template <class T>
ParamArray<T> Batch<T>::paramView(const ParamStorage& p, const T* data) const {
  return p.perWorld ? ParamArray<T>{data, 1, nWorlds_} : ParamArray<T>{data, 0, 1};
}

template <class T>
void Batch<T>::setMassProperties(std::int64_t w, int body, const MassProperties& mp) {
  checkWorld(w);
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  validateMassProperties(mp, "world " + std::to_string(w) + " body '" + model_->body(body).name + "'");
  touchHost();
  const double v[10] = {mp.mass, mp.com[0], mp.com[1], mp.com[2], mp.inertia.xx,
                        mp.inertia.yy, mp.inertia.zz, mp.inertia.xy, mp.inertia.xz, mp.inertia.yz};
  for (int k = 0; k < 10; ++k) paramRef(massProps_, w, 10 * body + k) = T(v[k]);
}

template <class T>
MassProperties Batch<T>::massProperties(std::int64_t w, int body) const {
  checkWorld(w);
  MassProperties mp;
  auto v = [&](int k) { return double(paramValue(massProps_, w, 10 * body + k)); };
  mp.mass = v(0);
  mp.com = {{v(1), v(2), v(3)}};
  mp.inertia = {v(4), v(5), v(6), v(7), v(8), v(9)};
  return mp;
}

template <class T>
void Batch<T>::setGravity(std::int64_t w, const Vec3d& g) {
  checkWorld(w);
  for (int i = 0; i < 3; ++i) validateFinite(g[i], "world " + std::to_string(w), "gravity");
  touchHost();
  for (int i = 0; i < 3; ++i) paramRef(gravity_, w, i) = T(g[i]);
}

template <class T>
Vec3d Batch<T>::gravity(std::int64_t w) const {
  checkWorld(w);
  return {{double(paramValue(gravity_, w, 0)), double(paramValue(gravity_, w, 1)), double(paramValue(gravity_, w, 2))}};
}

template <class T>
void Batch<T>::setDamping(std::int64_t w, const std::vector<double>& c) {
  checkWorld(w);
  if (static_cast<int>(c.size()) != sizes_.nu)
    throw std::invalid_argument("damping: expected " + std::to_string(sizes_.nu) + " values, got " + std::to_string(c.size()));
  for (double x : c) validateNonNegative(x, "world " + std::to_string(w), "damping");
  touchHost();
  for (int i = 0; i < sizes_.nu; ++i) paramRef(damping_, w, i) = T(c[i]);
}

template <class T>
std::vector<double> Batch<T>::damping(std::int64_t w) const {
  checkWorld(w);
  std::vector<double> out(sizes_.nu);
  for (int i = 0; i < sizes_.nu; ++i) out[i] = double(paramValue(damping_, w, i));
  return out;
}

template <class T>
bool Batch<T>::isPerWorld(const std::string& param) const {
#define LOCKSTEP_X(name, count, doc) \
  if (param == #name) return name##_.perWorld;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  throw std::invalid_argument("no per-world parameter named '" + param + "'");
}

// ---- views --------------------------------------------------------------------------------------

template <class T>
BatchView<T> Batch<T>::hostView() {
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, count, doc) v.name = name##_.data();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) v.name = paramView(name##_, name##_.data.data());
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  return v;
}

template <class T>
BatchView<T> Batch<T>::deviceView() {
  if (!device_) throw std::logic_error("deviceView: this batch runs on the CPU backend and has no device copy");
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, count, doc) v.name = device_->name.get();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) v.name = paramView(name##_, device_->name.get());
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  return v;
}

template <class T>
ModelView<T> Batch<T>::hostModelView() const {
  return {sizes_, topology_.data(), X_PF_.data(), X_BM_.data()};
}

// ---- moving data and time -----------------------------------------------------------------------

template <class T>
void Batch<T>::upload() {
  if (!device_) return;
  checkReadable();
#define LOCKSTEP_X(type, name, count, doc) device_->name.upload(name##_);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) device_->name.upload(name##_.data);
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  hostChanged_ = false;
}

template <class T>
void Batch<T>::download() {
  if (!device_) return;
  checkCuda(cudaDeviceSynchronize(), "waiting for the device");
#define LOCKSTEP_X(type, name, count, doc) device_->name.download(name##_);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
  deviceAhead_ = false;
}

template <class T>
void Batch<T>::step(double dt, int nSteps, Integrator integrator) {
  if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("step: dt: must be a positive finite number");
  if (nSteps < 0) throw std::invalid_argument("step: steps: must be >= 0");
  if (nSteps == 0) return;
  if (backend_ == Backend::Cuda) {
    if (hostChanged_) throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
    cudaAdvance(ModelView<T>{sizes_, device_->topology.get(), device_->X_PF.get(), device_->X_BM.get()}, deviceView(),
                layout_, device_->scratch.get(), T(dt), nSteps, integrator);
    deviceAhead_ = true;
  } else {
    cpuScratch_.resize(static_cast<std::size_t>(layout_.total) * cpuThreads());
    cpuAdvance(hostModelView(), hostView(), layout_, cpuScratch_.data(), T(dt), nSteps, integrator);
  }
}

template <class T>
void Batch<T>::evaluate() {
  if (backend_ == Backend::Cuda) {
    if (hostChanged_) throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
    cudaEvaluate(ModelView<T>{sizes_, device_->topology.get(), device_->X_PF.get(), device_->X_BM.get()}, deviceView(),
                 layout_, device_->scratch.get());
    deviceAhead_ = true;
  } else {
    cpuScratch_.resize(static_cast<std::size_t>(layout_.total) * cpuThreads());
    cpuEvaluate(hostModelView(), hostView(), layout_, cpuScratch_.data());
  }
}

template class Batch<float>;
template class Batch<double>;

}  // namespace lockstep
