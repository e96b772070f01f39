#include "lockstep/batch.h"

#include <cuda_runtime.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lockstep/device.h"

#include <dlpack/dlpack.h>

#include <type_traits>

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
  // Returns true when the allocation moved (pointers taken before are stale).
  bool resize(std::size_t n) {
    if (n == n_) return false;
    release();
    if (n) checkCuda(cudaMalloc(&p_, n * sizeof(U)), "cudaMalloc");
    n_ = n;
    return true;
  }
  bool upload(const std::vector<U>& h, cudaStream_t stream) {
    const bool moved = resize(h.size());
    if (n_)
      checkCuda(cudaMemcpyAsync(p_, h.data(), n_ * sizeof(U), cudaMemcpyHostToDevice, stream), "cudaMemcpy to device");
    return moved;
  }
  void download(std::vector<U>& h, cudaStream_t stream) const {
    if (n_)
      checkCuda(cudaMemcpyAsync(h.data(), p_, n_ * sizeof(U), cudaMemcpyDeviceToHost, stream), "cudaMemcpy to host");
  }
  U* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

template <class T>
struct Batch<T>::Device {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) DeviceArray<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) DeviceArray<T> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  DeviceArray<BodyTopology> topology;
  DeviceArray<Transform<T>> X_PF, X_MB;
  DeviceArray<ElementTopology> bushing, spring, contact;
  ModelView<T> modelView(const Sizes& s) const {
    return {s, topology.get(), X_PF.get(), X_MB.get(), bushing.get(), spring.get(), contact.get()};
  }
  DeviceArray<T> scratch;
  DeviceArray<std::uint8_t> staging[3];  // host arrays passed to resets, copied to the device
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
    auto isIdentity = [](const Mat33<double>& R) {
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          if (R(i, j) != (i == j ? 1.0 : 0.0)) return false;
      return true;
    };
    const bool pfTranslation = isIdentity(b.X_PF.R.R);
    const bool mbIdentity = isIdentity(b.X_BM.R.R) && b.X_BM.p[0] == 0 && b.X_BM.p[1] == 0 && b.X_BM.p[2] == 0;
    topology_.push_back({b.mobilizer, b.parent, b.qOffset, b.uOffset, b.nq, b.nu, sizes_.nd,
                         (pfTranslation ? kPFTranslationOnly : 0) | (mbIdentity ? kMBIdentity : 0)});
    sizes_.nd += b.nu * b.nu;
    X_PF_.push_back(castTransform<T>(b.X_PF));
    X_MB_.push_back(castTransform<T>(b.X_BM.inverse()));
  }
  sizes_.nBushings = static_cast<std::int32_t>(m.bushings().size());
  sizes_.nSprings = static_cast<std::int32_t>(m.springs().size());
  sizes_.nContacts = static_cast<std::int32_t>(m.contacts().size());
  sizes_.nc = m.numConstraintEquations();
  for (const LinearBushing& e : m.bushings()) bushingTopology_.push_back({e.body1, e.body2, 0, -1});
  for (const SpringDamper& e : m.springs()) springTopology_.push_back({e.bodyA, e.bodyB, 0, -1});
  auto ancestor = [&](int a, int b) {
    auto depth = [&](int x) {
      int d = 0;
      for (; x >= 0; x = m.body(x).parent) ++d;
      return d;
    };
    int da = depth(a), db = depth(b);
    for (; da > db; --da) a = m.body(a).parent;
    for (; db > da; --db) b = m.body(b).parent;
    while (a != b) {
      a = m.body(a).parent;
      b = m.body(b).parent;
    }
    return a;
  };
  for (const SphereContact& e : m.contacts())
    contactTopology_.push_back(
        {e.bodyF, e.bodyB, e.desc.enforceRolling ? kContactRolling : 0, ancestor(e.bodyF, e.bodyB)});
  layout_ = WorkspaceLayout::of(sizes_);
  constraintTolerance_ = sizeof(T) == 4 ? 1e-5 : 1e-10;

#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) name##_.assign(static_cast<std::size_t>(fieldCount(sizes_, per, parts)) * nWorlds_, type(0));
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  for (std::int64_t w = 0; w < nWorlds_; ++w)
    for (int i = 0; i < sizes_.nq; ++i) q_[i * nWorlds_ + w] = initialQ_[i * nWorlds_ + w] = T(m.defaultQ()[i]);

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
  auto pushTransform = [](std::vector<T>& out, const Transformd& X) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) out.push_back(T(X.R(i, j)));
    for (int i = 0; i < 3; ++i) out.push_back(T(X.p[i]));
  };
  for (const LinearBushing& e : m.bushings()) {
    pushTransform(bushingFrames_.data, e.desc.X_B1F);
    pushTransform(bushingFrames_.data, e.desc.X_B2M);
    for (double k : e.desc.stiffness) bushingStiffness_.data.push_back(T(k));
    for (double c : e.desc.damping) bushingDamping_.data.push_back(T(c));
  }
  bushingFrames_.count = 24 * sizes_.nBushings;
  bushingStiffness_.count = bushingDamping_.count = 6 * sizes_.nBushings;
  for (const SpringDamper& e : m.springs()) {
    for (double x : {e.desc.freeLength, e.desc.stiffness, e.desc.damping}) springParams_.data.push_back(T(x));
    for (int i = 0; i < 3; ++i) springPoints_.data.push_back(T(e.desc.p_AP[i]));
    for (int i = 0; i < 3; ++i) springPoints_.data.push_back(T(e.desc.p_BQ[i]));
  }
  springParams_.count = 3 * sizes_.nSprings;
  springPoints_.count = 6 * sizes_.nSprings;
  for (const SphereContact& e : m.contacts()) {
    for (int i = 0; i < 3; ++i) sphereCenters_.data.push_back(T(e.desc.centerOnF[i]));
    for (int i = 0; i < 3; ++i) sphereCenters_.data.push_back(T(e.desc.centerOnB[i]));
    sphereRadii_.data.push_back(T(e.desc.radiusOnF));
    sphereRadii_.data.push_back(T(e.desc.radiusOnB));
    contactEnabled_.data.push_back(T(e.desc.enabledByDefault ? 1 : 0));
  }
  sphereCenters_.count = 6 * sizes_.nContacts;
  sphereRadii_.count = 2 * sizes_.nContacts;
  contactEnabled_.count = sizes_.nContacts;

  if (backend_ == Backend::Cuda) {
    cudaStream_t stream = nullptr;
    checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    stream_ = stream;
    ownsStream_ = true;
    device_ = std::make_unique<Device>();
    device_->topology.upload(topology_, stream);
    device_->X_PF.upload(X_PF_, stream);
    device_->X_MB.upload(X_MB_, stream);
    device_->bushing.upload(bushingTopology_, stream);
    device_->spring.upload(springTopology_, stream);
    device_->contact.upload(contactTopology_, stream);
    checkCuda(cudaStreamSynchronize(stream), "uploading the model");
    device_->scratch.resize(static_cast<std::size_t>(layout_.total) * nWorlds_);
  }
}

template <class T>
Batch<T>::~Batch() {
  if (stream_) cudaStreamSynchronize(asStream(stream_));
  device_.reset();
  if (ownsStream_) cudaStreamDestroy(asStream(stream_));
}

template <class T>
void Batch<T>::setStream(void* cudaStream) {
  if (backend_ != Backend::Cuda) throw std::logic_error("setStream: this batch runs on the CPU backend");
  if (!cudaStream) throw std::invalid_argument("setStream: stream: must not be null");
  checkCuda(cudaStreamSynchronize(asStream(stream_)), "waiting for the batch's stream");
  if (ownsStream_) cudaStreamDestroy(asStream(stream_));
  stream_ = cudaStream;
  ownsStream_ = false;
}

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
std::int64_t Batch<T>::getIntField(const std::vector<std::int32_t>& f, std::int64_t w) const {
  checkWorld(w);
  checkReadable();
  return f[w];
}

template <class T>
Transformd Batch<T>::bodyPose(std::int64_t w, int body) const {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  const std::vector<double> all = getField(bodyPose_, 7 * sizes_.nb, w);
  const double* p = &all[7 * body];
  return {Rotationd::fromQuaternion(p[3], p[4], p[5], p[6]), {{p[0], p[1], p[2]}}};
}

template <class T>
SpatialVecd Batch<T>::bodyVelocity(std::int64_t w, int body) const {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  const std::vector<double> all = getField(bodyVelocity_, 6 * sizes_.nb, w);
  const double* v = &all[6 * body];
  return {{{v[0], v[1], v[2]}}, {{v[3], v[4], v[5]}}};
}

template <class T>
std::vector<std::string> Batch<T>::fieldNames() {
  std::vector<std::string> names;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) names.push_back(#name);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return names;
}

namespace {
template <class U>
FieldView::Type fieldType() {
  if (std::is_same<U, float>::value) return FieldView::Type::Float32;
  if (std::is_same<U, double>::value) return FieldView::Type::Float64;
  return FieldView::Type::Int32;
}
}  // namespace

template <class T>
FieldView Batch<T>::field(const std::string& name, MemorySpace space) {
  const bool device = space == MemorySpace::Backend && backend_ == Backend::Cuda;
  FieldView v;
  v.name = name;
  v.onDevice = device;
  v.worlds = nWorlds_;
  v.worldStride = 1;
  v.componentStride = nWorlds_;
#define LOCKSTEP_X(type, fname, per, role, prefix, parts, doc)                                      \
  if (name == #fname) {                                                          \
    v.data = device ? static_cast<void*>(device_->fname.get()) : static_cast<void*>(fname##_.data()); \
    v.elementType = fieldType<type>();                                                  \
    v.components = (fieldCount(sizes_, per, parts));                                                      \
    return v;                                                                    \
  }
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::string all;
  for (const std::string& n : fieldNames()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("no per-world field named '" + name + "' (fields: " + all + ")");
}

namespace {
struct DLPackHolder {
  DLManagedTensor tensor;
  std::int64_t shape[2];
  std::int64_t strides[2];
};
}  // namespace

template <class T>
DLManagedTensor* Batch<T>::toDLPack(const std::string& name, MemorySpace space) {
  const FieldView v = field(name, space);
  auto* h = new DLPackHolder{};
  DLTensor& t = h->tensor.dl_tensor;
  t.data = v.data;
  int device = 0;
  if (v.onDevice) cudaGetDevice(&device);
  t.device = {v.onDevice ? kDLCUDA : kDLCPU, device};
  t.ndim = v.components == 1 ? 1 : 2;
  t.dtype = v.elementType == FieldView::Type::Int32 ? DLDataType{kDLInt, 32, 1}
                                             : DLDataType{kDLFloat, std::uint8_t(v.elementType == FieldView::Type::Float32 ? 32 : 64), 1};
  h->shape[0] = v.worlds;
  h->shape[1] = v.components;
  h->strides[0] = v.worldStride;
  h->strides[1] = v.componentStride;
  t.shape = h->shape;
  t.strides = h->strides;
  t.byte_offset = 0;
  h->tensor.manager_ctx = h;
  h->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<DLPackHolder*>(self->manager_ctx); };
  return &h->tensor;
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
  setInitialState(kAllWorlds, q, u);
  for (std::int64_t w = 0; w < nWorlds_; ++w) {
    setQ(w, q);
    setU(w, u);
    setZ(w, std::vector<double>(sizes_.nz, 0.0));
    setTime(w, 0.0);
    status_[w] = kStatusOk;
  }
}

template <class T>
void Batch<T>::setInitialState(std::int64_t w, const std::vector<double>& q, const std::vector<double>& u) {
  if (w == kAllWorlds) {
    for (std::int64_t x = 0; x < nWorlds_; ++x) setInitialState(x, q, u);
    return;
  }
  setField(initialQ_, sizes_.nq, w, q, "initial q");
  setField(initialU_, sizes_.nu, w, u, "initial u");
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
void Batch<T>::setParam(ParamStorage& p, std::int64_t w, std::int64_t c, double value) {
  if (w == kAllWorlds) {
    if (!p.perWorld) {
      p.data[c] = T(value);
    } else {
      for (std::int64_t x = 0; x < nWorlds_; ++x) p.data[c * nWorlds_ + x] = T(value);
    }
  } else {
    paramRef(p, w, c) = T(value);
  }
}

template <class T>
void Batch<T>::setVec3Param(ParamStorage& p, std::int64_t w, std::int64_t offset, const Vec3d& v) {
  for (int k = 0; k < 3; ++k) setParam(p, w, offset + k, v[k]);
}

template <class T>
Vec3d Batch<T>::vec3Param(const ParamStorage& p, std::int64_t w, std::int64_t offset) const {
  return {{double(paramValue(p, w, offset)), double(paramValue(p, w, offset + 1)), double(paramValue(p, w, offset + 2))}};
}

template <class T>
Transformd Batch<T>::transformParam(const ParamStorage& p, std::int64_t w, std::int64_t offset) const {
  Transformd X;
  for (int k = 0; k < 9; ++k) X.R.R.m[k / 3][k % 3] = double(paramValue(p, w, offset + k));
  X.p = vec3Param(p, w, offset + 9);
  return X;
}

template <class T>
void Batch<T>::checkElement(int i, int count, const char* kind) const {
  if (i < 0 || i >= count)
    throw std::out_of_range(std::string(kind) + " index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(count) + ")");
}

namespace {
std::string worldName(std::int64_t w) { return w < 0 ? "all worlds" : "world " + std::to_string(w); }
}  // namespace

template <class T>
void Batch<T>::setBushingFrames(std::int64_t w, int i, const Transformd& X_B1F, const Transformd& X_B2M) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  const std::string where = worldName(w) + " bushing '" + model_->bushings()[i].desc.name + "'";
  validateTransform(X_B1F, where, "frame on body1");
  validateTransform(X_B2M, where, "frame on body2");
  touchHost();
  for (int f = 0; f < 2; ++f) {
    const Transformd& X = f == 0 ? X_B1F : X_B2M;
    for (int k = 0; k < 9; ++k) setParam(bushingFrames_, w, 24 * i + 12 * f + k, X.R(k / 3, k % 3));
    setVec3Param(bushingFrames_, w, 24 * i + 12 * f + 9, X.p);
  }
}

template <class T>
void Batch<T>::setBushingStiffness(std::int64_t w, int i, const std::array<double, 6>& k) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  validateBushingParameters(k, {}, worldName(w) + " bushing '" + model_->bushings()[i].desc.name + "'");
  touchHost();
  for (int j = 0; j < 6; ++j) setParam(bushingStiffness_, w, 6 * i + j, k[j]);
}

template <class T>
void Batch<T>::setBushingDamping(std::int64_t w, int i, const std::array<double, 6>& c) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  validateBushingParameters({}, c, worldName(w) + " bushing '" + model_->bushings()[i].desc.name + "'");
  touchHost();
  for (int j = 0; j < 6; ++j) setParam(bushingDamping_, w, 6 * i + j, c[j]);
}

template <class T>
Transformd Batch<T>::bushingFrameOnBody1(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  return transformParam(bushingFrames_, w, 24 * i);
}

template <class T>
Transformd Batch<T>::bushingFrameOnBody2(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  return transformParam(bushingFrames_, w, 24 * i + 12);
}

template <class T>
std::array<double, 6> Batch<T>::bushingStiffness(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  std::array<double, 6> k;
  for (int j = 0; j < 6; ++j) k[j] = double(paramValue(bushingStiffness_, w, 6 * i + j));
  return k;
}

template <class T>
std::array<double, 6> Batch<T>::bushingDamping(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  std::array<double, 6> c;
  for (int j = 0; j < 6; ++j) c[j] = double(paramValue(bushingDamping_, w, 6 * i + j));
  return c;
}

template <class T>
void Batch<T>::setSpringParameters(std::int64_t w, int i, double freeLength, double stiffness, double damping) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nSprings, "spring-damper");
  validateSpringParameters(freeLength, stiffness, damping,
                           worldName(w) + " spring-damper '" + model_->springs()[i].desc.name + "'");
  touchHost();
  setParam(springParams_, w, 3 * i + 0, freeLength);
  setParam(springParams_, w, 3 * i + 1, stiffness);
  setParam(springParams_, w, 3 * i + 2, damping);
}

template <class T>
void Batch<T>::setSpringPoints(std::int64_t w, int i, const Vec3d& p_AP, const Vec3d& p_BQ) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nSprings, "spring-damper");
  const std::string where = worldName(w) + " spring-damper '" + model_->springs()[i].desc.name + "'";
  for (int k = 0; k < 3; ++k) {
    validateFinite(p_AP[k], where, "p_AP");
    validateFinite(p_BQ[k], where, "p_BQ");
  }
  touchHost();
  setVec3Param(springPoints_, w, 6 * i, p_AP);
  setVec3Param(springPoints_, w, 6 * i + 3, p_BQ);
}

template <class T>
std::array<double, 3> Batch<T>::springParameters(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nSprings, "spring-damper");
  return {double(paramValue(springParams_, w, 3 * i)), double(paramValue(springParams_, w, 3 * i + 1)),
          double(paramValue(springParams_, w, 3 * i + 2))};
}

template <class T>
std::array<Vec3d, 2> Batch<T>::springPoints(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nSprings, "spring-damper");
  return {vec3Param(springPoints_, w, 6 * i), vec3Param(springPoints_, w, 6 * i + 3)};
}

template <class T>
void Batch<T>::setSphereCenters(std::int64_t w, int i, const Vec3d& centerOnF, const Vec3d& centerOnB) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  const std::string where = worldName(w) + " sphere contact '" + model_->contacts()[i].desc.name + "'";
  for (int k = 0; k < 3; ++k) {
    validateFinite(centerOnF[k], where, "center on F");
    validateFinite(centerOnB[k], where, "center on B");
  }
  touchHost();
  setVec3Param(sphereCenters_, w, 6 * i, centerOnF);
  setVec3Param(sphereCenters_, w, 6 * i + 3, centerOnB);
}

template <class T>
void Batch<T>::setSphereRadii(std::int64_t w, int i, double radiusOnF, double radiusOnB) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  validateSphereRadii(radiusOnF, radiusOnB, worldName(w) + " sphere contact '" + model_->contacts()[i].desc.name + "'");
  touchHost();
  setParam(sphereRadii_, w, 2 * i, radiusOnF);
  setParam(sphereRadii_, w, 2 * i + 1, radiusOnB);
}

template <class T>
void Batch<T>::setContactEnabled(std::int64_t w, int i, bool enabled) {
  if (w != kAllWorlds) checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  touchHost();
  setParam(contactEnabled_, w, i, enabled ? 1.0 : 0.0);
}

template <class T>
std::array<Vec3d, 2> Batch<T>::sphereCenters(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  return {vec3Param(sphereCenters_, w, 6 * i), vec3Param(sphereCenters_, w, 6 * i + 3)};
}

template <class T>
std::array<double, 2> Batch<T>::sphereRadii(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  return {double(paramValue(sphereRadii_, w, 2 * i)), double(paramValue(sphereRadii_, w, 2 * i + 1))};
}

template <class T>
bool Batch<T>::contactEnabled(std::int64_t w, int i) const {
  checkWorld(w);
  checkElement(i, sizes_.nContacts, "sphere contact");
  return paramValue(contactEnabled_, w, i) != T(0);
}

// ---- element quantities -------------------------------------------------------------------------

template <class T>
std::vector<T> Batch<T>::hostKinematics(std::int64_t w) const {
  checkWorld(w);
  checkReadable();
  std::vector<T> scratch(layout_.total);
  const WorldView<T> view = readOnlyHostView().world(w);
  computeKinematics<T>(hostModelView(), view.params, view.q, view.u, Workspace<T>{layout_, {scratch.data(), 1}});
  return scratch;
}

template <class T>
BushingQuantities<T> Batch<T>::bushing(std::int64_t w, int i) const {
  checkElement(i, sizes_.nBushings, "bushing");
  std::vector<T> scratch = hostKinematics(w);
  return evaluateBushingOfWorld(hostModelView(), readOnlyHostView().world(w).params,
                                Workspace<T>{layout_, {scratch.data(), 1}}, i);
}

template <class T>
SpringDamperQuantities<T> Batch<T>::spring(std::int64_t w, int i) const {
  checkElement(i, sizes_.nSprings, "spring-damper");
  std::vector<T> scratch = hostKinematics(w);
  return evaluateSpringOfWorld(hostModelView(), readOnlyHostView().world(w).params,
                               Workspace<T>{layout_, {scratch.data(), 1}}, i);
}

template <class T>
std::vector<SpatialVecd> Batch<T>::appliedBodyForces(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  computeForces<T>(hostModelView(), readOnlyHostView().world(w), readOnlyHostView().world(w).u, ws,
                   ws.at(layout_.ydot + sizes_.nq + sizes_.nu));
  std::vector<SpatialVecd> out(sizes_.nb);
  for (int b = 0; b < sizes_.nb; ++b)
    for (int i = 0; i < 6; ++i) out[b][i] = double(ws.at(layout_.Fb + 6 * b)[i]);
  return out;
}

template <class T>
std::vector<double> Batch<T>::appliedMobilityForces(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  computeForces<T>(hostModelView(), readOnlyHostView().world(w), readOnlyHostView().world(w).u, ws,
                   ws.at(layout_.ydot + sizes_.nq + sizes_.nu));
  std::vector<double> out(sizes_.nu);
  for (int i = 0; i < sizes_.nu; ++i) out[i] = double(ws.at(layout_.tauTotal)[i]);
  return out;
}

template <class T>
typename Batch<T>::ContactQuantities Batch<T>::contact(std::int64_t w, int i) const {
  checkElement(i, sizes_.nContacts, "sphere contact");
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  const WorldView<T> view = readOnlyHostView().world(w);
  const ModelView<T> model = hostModelView();
  // Body accelerations from the stored udot: A = ~Phi A_parent + c + H udot.
  const Strided<T> A = ws.at(layout_.A_GB);
  for (int b = 0; b < sizes_.nb; ++b) {
    const BodyTopology topo = topology_[b];
    SpatialVec<T> Ab = loadSpatialVec<T>(ws.at(layout_.c + 6 * b));
    if (topo.parent >= 0)
      Ab += PhiMatrix<T>{parentToChild(ws, b, topo.parent)}.transposeTimes(loadSpatialVec<T>(A + 6 * topo.parent));
    for (int j = 0; j < topo.nu; ++j)
      Ab += view.udot[topo.uOffset + j] * loadSpatialVec<T>(ws.at(layout_.H + 6 * (topo.uOffset + j)));
    storeSpatialVec(A + 6 * b, Ab);
  }
  const ElementTopology e = contactTopology_[i];
  const ContactKinematics<T> k = contactKinematicsOfWorld(model, view.params, ws, i);
  ContactQuantities q;
  q.enabled = contactEnabled(w, i);
  q.positionError = double(k.positionError);
  int row = 0;
  for (int c = 0; c < i; ++c) row += contactEquationCount(contactTopology_[c]);
  q.velocityErrors = q.accelerationErrors = q.multipliers = Vec3d::zero();
  for (int r = 0; r < contactEquationCount(e); ++r) {
    const int axis = contactEquationAxis(e, r);
    q.velocityErrors[axis] = double(k.velocityError[axis]);
    q.accelerationErrors[axis] =
        double(contactAccelerationLinear(k, axis, bodyAcceleration<T>(A, e.bodyA), bodyAcceleration<T>(A, e.bodyB)) +
               contactAccelerationBias(k, axis));
    q.multipliers[axis] = q.enabled ? double(view.multipliers[row + r]) : 0.0;
  }
  q.X_GC = castTransform<double>(Transform<T>{k.R_GC, k.p_GCo});
  q.forceOnSphereBInG = q.X_GC.R * (-q.multipliers);
  return q;
}

template <class T>
double Batch<T>::constraintError(std::int64_t w) const {
  if (sizes_.nContacts == 0) {
    checkWorld(w);
    return 0.0;
  }
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  return double(constraintErrors(hostModelView(), readOnlyHostView().world(w).params, ws, EquationSet::Holonomic,
                                 ws.at(layout_.rhs)));
}

template <class T>
double Batch<T>::dissipatedEnergy(std::int64_t w, int i) const {
  checkElement(i, sizes_.nBushings, "bushing");
  return z(w)[i];
}

template <class T>
void Batch<T>::setDissipatedEnergy(std::int64_t w, int i, double energy) {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  validateNonNegative(energy, "world " + std::to_string(w) + " bushing '" + model_->bushings()[i].desc.name + "'",
                      "dissipated energy");
  touchHost();
  z_[static_cast<std::size_t>(i) * nWorlds_ + w] = T(energy);
}

template <class T>
bool Batch<T>::isPerWorld(const std::string& param) const {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  if (param == #name) return name##_.perWorld;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  throw std::invalid_argument("no per-world parameter named '" + param + "'");
}

// ---- views --------------------------------------------------------------------------------------

template <class T>
BatchView<T> Batch<T>::hostView() {
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = name##_.data();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = paramView(name##_, name##_.data.data());
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return v;
}

template <class T>
BatchView<T> Batch<T>::readOnlyHostView() const {
  // The view type carries mutable pointers; callers of this const accessor only read through it.
  return const_cast<Batch<T>*>(this)->hostView();
}

template <class T>
BatchView<T> Batch<T>::deviceView() {
  if (!device_) throw std::logic_error("deviceView: this batch runs on the CPU backend and has no device copy");
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = device_->name.get();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = paramView(name##_, device_->name.get());
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return v;
}

template <class T>
ModelView<T> Batch<T>::hostModelView() const {
  return {sizes_, topology_.data(), X_PF_.data(), X_MB_.data(), bushingTopology_.data(), springTopology_.data(),
          contactTopology_.data()};
}

// ---- moving data and time -----------------------------------------------------------------------

template <class T>
void Batch<T>::upload() {
  if (!device_) return;
  checkReadable();
  const cudaStream_t stream = asStream(stream_);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_->name.upload(name##_, stream);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  if (device_->name.upload(name##_.data, stream)) ++paramGeneration_;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  checkCuda(cudaStreamSynchronize(stream), "uploading");
  hostChanged_ = false;
}

template <class T>
void Batch<T>::download() {
  if (!device_) return;
  const cudaStream_t stream = asStream(stream_);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) device_->name.download(name##_, stream);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  checkCuda(cudaStreamSynchronize(stream), "downloading");
  deviceAhead_ = false;
}

template <class T>
void Batch<T>::synchronize() {
  if (stream_) checkCuda(cudaStreamSynchronize(asStream(stream_)), "waiting for the device");
}

template <class T>
BackendContext<T> Batch<T>::context() {
  if (backend_ == Backend::Cuda) {
    if (hostChanged_) throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
    return {device_->modelView(sizes_), deviceView(), layout_, device_->scratch.get(), stream_};
  }
  cpuScratch_.resize(static_cast<std::size_t>(layout_.total) * cpuThreads());
  return {hostModelView(), hostView(), layout_, cpuScratch_.data(), nullptr, cpuCache_.get()};
}

template <class T>
void Batch<T>::afterBackendWrite() {
  if (backend_ == Backend::Cuda) deviceAhead_ = true;
}

template <class T>
void Batch<T>::step(double dt, int nSteps, Integrator integrator) {
  if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("step: dt: must be a positive finite number");
  if (nSteps < 0) throw std::invalid_argument("step: steps: must be >= 0");
  if (nSteps == 0) return;
  const StepSettings<T> settings{T(dt), nSteps, integrator, T(constraintTolerance_), maxProjectionIterations_,
                                 observe_, autoReset_};
  if (backend_ == Backend::Cuda) cudaAdvance(context(), settings);
  else cpuAdvance(context(), settings);
  afterBackendWrite();
}

template <class T>
void Batch<T>::evaluate() {
  if (backend_ == Backend::Cuda) cudaEvaluate(context());
  else cpuEvaluate(context());
  afterBackendWrite();
}

template <class T>
void Batch<T>::assemble(int maxIterations) {
  if (maxIterations < 1) throw std::invalid_argument("assemble: iterations: must be at least 1");
  if (backend_ == Backend::Cuda) cudaAssemble(context(), T(constraintTolerance_), maxIterations);
  else cpuAssemble(context(), T(constraintTolerance_), maxIterations);
  afterBackendWrite();
}

template <class T>
const void* Batch<T>::toBackend(const void* data, std::size_t bytes, MemorySpace space, int slot) {
  if (backend_ == Backend::Cpu || space == MemorySpace::Backend) return data;
  DeviceArray<std::uint8_t>& buf = device_->staging[slot];
  if (buf.size() < bytes) buf.resize(bytes);
  checkCuda(cudaMemcpyAsync(buf.get(), data, bytes, cudaMemcpyHostToDevice, asStream(stream_)), "staging to device");
  return buf.get();
}

template <class T>
void Batch<T>::captureInitialState() {
  if (backend_ == Backend::Cuda) {
    const BackendContext<T> ctx = context();
    const cudaStream_t stream = asStream(stream_);
    checkCuda(cudaMemcpyAsync(ctx.batch.initialQ, ctx.batch.q, sizeof(T) * sizes_.nq * nWorlds_,
                              cudaMemcpyDeviceToDevice, stream), "capturing the initial q");
    checkCuda(cudaMemcpyAsync(ctx.batch.initialU, ctx.batch.u, sizeof(T) * sizes_.nu * nWorlds_,
                              cudaMemcpyDeviceToDevice, stream), "capturing the initial u");
    afterBackendWrite();
  } else {
    checkReadable();
    initialQ_ = q_;
    initialU_ = u_;
  }
}

template <class T>
void Batch<T>::resetWorld(std::int64_t w) {
  checkWorld(w);
  resetWorlds(&w, 1, MemorySpace::Host);
}

template <class T>
void Batch<T>::resetWorlds(const std::vector<std::int64_t>& worlds) {
  for (std::int64_t w : worlds) checkWorld(w);
  resetWorlds(worlds.data(), static_cast<std::int64_t>(worlds.size()), MemorySpace::Host);
}

template <class T>
void Batch<T>::resetWorlds(const std::int64_t* worlds, std::int64_t count, MemorySpace space) {
  if (count < 0) throw std::invalid_argument("resetWorlds: count: must be >= 0");
  if (count == 0) return;
  const auto* idx = static_cast<const std::int64_t*>(toBackend(worlds, count * sizeof(std::int64_t), space, 0));
  if (backend_ == Backend::Cuda) cudaResetIndices(context(), idx, count);
  else cpuResetIndices(context(), idx, count);
  afterBackendWrite();
}

template <class T>
void Batch<T>::resetWorldsMask(const std::uint8_t* mask, MemorySpace space) {
  const auto* m = static_cast<const std::uint8_t*>(toBackend(mask, nWorlds_, space, 0));
  if (backend_ == Backend::Cuda) cudaResetMask(context(), m);
  else cpuResetMask(context(), m);
  afterBackendWrite();
}

template <class T>
void Batch<T>::setStates(const std::int64_t* worlds, std::int64_t count, const T* q, const T* u, MemorySpace space) {
  if (count < 0) throw std::invalid_argument("setStates: count: must be >= 0");
  if (count == 0) return;
  const auto* idx = static_cast<const std::int64_t*>(toBackend(worlds, count * sizeof(std::int64_t), space, 0));
  const T* qb = static_cast<const T*>(toBackend(q, count * sizeof(T) * sizes_.nq, space, 1));
  const T* ub = static_cast<const T*>(toBackend(u, count * sizeof(T) * sizes_.nu, space, 2));
  if (backend_ == Backend::Cuda) cudaSetStates(context(), idx, count, qb, ub);
  else cpuSetStates(context(), idx, count, qb, ub);
  afterBackendWrite();
}

template <class T>
std::unique_ptr<StepGraph<T>> Batch<T>::captureStep(double dt, int nSteps, Integrator integrator) {
  if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("captureStep: dt: must be a positive finite number");
  if (nSteps < 1) throw std::invalid_argument("captureStep: steps: must be >= 1");
  const StepSettings<T> settings{T(dt), nSteps, integrator, T(constraintTolerance_), maxProjectionIterations_,
                                 observe_, autoReset_};
  std::unique_ptr<StepGraph<T>> g(new StepGraph<T>(this, settings, paramGeneration_));
  if (backend_ == Backend::Cuda) {
    const BackendContext<T> ctx = context();
    const cudaStream_t stream = asStream(stream_);
    cudaGraph_t graph = nullptr;
    checkCuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    cudaAdvance(ctx, settings);
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
  if (batch_->paramGeneration_ != generation_)
    throw std::logic_error("this step graph was recorded before the batch's device parameter arrays moved "
                           "(a parameter became per-world): record it again with captureStep()");
  if (batch_->hostChanged_) throw std::logic_error("the host copy of this batch changed since the last upload(): call upload() first");
  checkCuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), asStream(batch_->stream_)), "cudaGraphLaunch");
  batch_->deviceAhead_ = true;
}

template <class T>
void Batch<T>::setConstraintTolerance(double tol, int maxIterations) {
  if (!(tol > 0) || !std::isfinite(tol)) throw std::invalid_argument("constraint tolerance: must be a positive finite number");
  if (maxIterations < 1) throw std::invalid_argument("constraint projection iterations: must be at least 1");
  constraintTolerance_ = tol;
  maxProjectionIterations_ = maxIterations;
}

template class Batch<float>;
template class Batch<double>;
template class StepGraph<float>;
template class StepGraph<double>;

}  // namespace lockstep
