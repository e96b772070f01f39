// A Batch: construction, the host copy of the per-world state, and its backend object (batch_backend.h),
// through which every run (step, evaluate, assemble, resets, given states), every move of data
// between the host copy and the backend's, and every recorded step reaches the CPU or the CUDA backend.
#include "lockstep/engine/batch.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "batch_backend.h"
#include "derivatives.h"
#include "lockstep/backends/device.h"

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
      {kStatusInvalidInitialState, "initial q or u not finite in this precision"},
      {kStatusSoftSolveFailed,
       "the soft-constraint solve failed: it did not converge within its iterations, its metric was not "
       "positive definite, or its forces were not finite"},
  };
  std::string out;
  for (const auto& r : kReasons) {
    if (status & r.bit) out += std::string(out.empty() ? "" : "; ") + r.text;
  }
  return out.empty() ? "unknown status " + std::to_string(status) : out;
}

// ---- construction -------------------------------------------------------------------------------

template <class T>
Batch<T>::Batch(std::shared_ptr<const Model> model, std::int64_t nWorlds, Backend backend, const CpuOptions& cpu)
    : model_(model ? std::move(model) : throw std::invalid_argument("Batch: model: must not be null")),
      nWorlds_(nWorlds >= 1 ? nWorlds
                            : throw std::invalid_argument("Batch: worlds: must be at least 1 (got " +
                                                          std::to_string(nWorlds) + ")")),
      backendKind_(backend),
      compiled_(*model_),
      params_(*model_, compiled_.sizes, nWorlds_),
      constraintTolerance_(sizeof(T) == 4 ? 1e-5 : 1e-10) {
  // The CPU options first: the memory check counts the CPU backend's per-thread workspaces.
  const CpuRun cpuRun = resolveCpuOptions(cpu);
  checkMemory(cpuRun.threads);
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  name##_.assign(static_cast<std::size_t>(fieldCount(sizes_, per, parts)) * nWorlds_, type(0));
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  const BatchView<T> h = hostView();
  for (std::int64_t w = 0; w < nWorlds_; ++w) {
    const WorldView<T> x = h.world(w);
    for (int i = 0; i < sizes_.nq; ++i) x.q[i] = x.initialQ[i] = T(model_->defaultQ()[i]);
  }
  // Last: the CUDA backend object allocates the device copy, once the checks and the host copy are done.
  backend_ = backendKind_ == Backend::Cuda ? makeCudaBatchBackend<T>(compiled_, nWorlds_, cpuRun)
                                           : makeCpuBatchBackend<T>(compiled_, nWorlds_, cpuRun);
}

template <class T>
void Batch<T>::setCpuOptions(const CpuOptions& cpu) {
  backend_->setCpuOptions(resolveCpuOptions(cpu));
}

template <class T>
const CpuOptions& Batch<T>::cpuOptions() const {
  return backend_->cpuOptions();
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
  backend_->checkHostCurrent();
}

template <class T>
void Batch<T>::touchHost() {
  checkReadable();
  backend_->notify(Change::HostFields);
}

template <class T>
template <class F>
std::vector<double> Batch<T>::hostValues(std::int64_t w, Strided<F> WorldView<T>::*field) const {
  checkWorld(w);
  checkReadable();
  const Strided<F> values = readOnlyHostView().world(w).*field;
  std::vector<double> out(componentCount(sizes_, field));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(values[i]);
  return out;
}

template <class T>
template <class F>
void Batch<T>::setHostValues(std::int64_t w, Strided<F> WorldView<T>::*field, const std::vector<double>& v,
                             const char* name) {
  checkWorld(w);
  const std::int64_t count = componentCount(sizes_, field);
  if (static_cast<std::int64_t>(v.size()) != count)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(count) + " values, got " +
                                std::to_string(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw std::invalid_argument(std::string(name) + "[" + std::to_string(i) + "]: must be a finite number");
  touchHost();
  const Strided<F> values = hostView().world(w).*field;
  for (std::size_t i = 0; i < v.size(); ++i) values[i] = F(v[i]);
}

template <class T>
void Batch<T>::setBodyForce(std::int64_t w, int body, const SpatialVecd& F) {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  checkWorld(w);
  touchHost();
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(F[i])) throw std::invalid_argument("body force: must be finite");
    bodyForceAt(hostView().world(w), body)[i] = T(F[i]);
  }
}

template <class T>
void Batch<T>::setTargets(std::int64_t w, const std::vector<double>& position, const std::vector<double>& velocity) {
  if (static_cast<int>(position.size()) != sizes_.nu || static_cast<int>(velocity.size()) != sizes_.nu)
    throw std::invalid_argument("targets: expected " + std::to_string(sizes_.nu) + " positions and velocities");
  std::vector<double> both(2 * sizes_.nu);
  for (int i = 0; i < sizes_.nu; ++i) {
    both[2 * i] = position[i];
    both[2 * i + 1] = velocity[i];
  }
  setHostValues(w, &WorldView<T>::target, both, "target");
}

namespace {
// Part `part` of each of the `count` two-part elements of a world's field, as stored: [a0 b0 a1 b1 ...].
std::vector<double> partOfPairs(const std::vector<double>& both, int count, int part) {
  std::vector<double> out(count);
  for (int i = 0; i < count; ++i) out[i] = both[2 * i + part];
  return out;
}
}  // namespace

template <class T>
std::vector<double> Batch<T>::targetPositions(std::int64_t w) const {
  return partOfPairs(hostValues(w, &WorldView<T>::target), sizes_.nu, 0);
}
template <class T>
std::vector<double> Batch<T>::targetVelocities(std::int64_t w) const {
  return partOfPairs(hostValues(w, &WorldView<T>::target), sizes_.nu, 1);
}
template <class T>
std::vector<double> Batch<T>::actuatorEfforts(std::int64_t w) const {
  return partOfPairs(hostValues(w, &WorldView<T>::actuator), sizes_.nu, 0);
}
template <class T>
std::vector<double> Batch<T>::actuatorPowers(std::int64_t w) const {
  return partOfPairs(hostValues(w, &WorldView<T>::actuator), sizes_.nu, 1);
}

template <class T>
void Batch<T>::setQ(std::int64_t w, const std::vector<double>& q) {
  setHostValues(w, &WorldView<T>::q, q, "q");
  flagInvalidState(w);
}

template <class T>
void Batch<T>::setU(std::int64_t w, const std::vector<double>& u) {
  setHostValues(w, &WorldView<T>::u, u, "u");
  flagInvalidState(w);
}

template <class T>
void Batch<T>::flagInvalidState(std::int64_t w) {
  const WorldView<T> x = hostView().world(w);
  bool finite = true;
  for (int i = 0; i < sizes_.nq; ++i) finite = finite && std::isfinite(x.q[i]);
  for (int i = 0; i < sizes_.nu; ++i) finite = finite && std::isfinite(x.u[i]);
  if (!finite) x.status[0] |= kStatusInvalidInitialState;
}

template <class T>
void Batch<T>::setAllStates(const std::vector<double>& q, const std::vector<double>& u) {
  setInitialState(kAllWorlds, q, u);
  for (std::int64_t w = 0; w < nWorlds_; ++w) {
    setQ(w, q);
    setU(w, u);
    setZ(w, std::vector<double>(sizes_.nz, 0.0));
    setTime(w, 0.0);
    hostView().world(w).status[0] = kStatusOk;
    flagInvalidState(w);
  }
}

template <class T>
void Batch<T>::setInitialState(std::int64_t w, const std::vector<double>& q, const std::vector<double>& u) {
  if (w == kAllWorlds) {
    for (std::int64_t x = 0; x < nWorlds_; ++x) setInitialState(x, q, u);
    return;
  }
  setHostValues(w, &WorldView<T>::initialQ, q, "initial q");
  setHostValues(w, &WorldView<T>::initialU, u, "initial u");
}

template <class T>
void Batch<T>::clearStatus(std::int64_t w) {
  checkWorld(w);
  touchHost();
  hostView().world(w).status[0] = kStatusOk;
}

template <class T>
void Batch<T>::checkElement(int i, int count, const char* kind) const {
  if (i < 0 || i >= count)
    throw std::out_of_range(std::string(kind) + " index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(count) + ")");
}

// ---- views --------------------------------------------------------------------------------------

template <class T>
BatchView<T> Batch<T>::hostView() {
  BatchView<T> v;
  v.nWorlds = nWorlds_;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = name##_.data();
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  v.name = params_.view(ParamId::name, params_.data(ParamId::name).data());
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
ModelView<T> Batch<T>::hostModelView() const {
  return compiled_.view();
}

// ---- runs on the backend ----------------------------------------------------------------------

template <class T>
BackendContext<T> Batch<T>::context() {
  return backend_->context(hostView());
}

template <class T>
void Batch<T>::afterBackendWrite() {
  backend_->notify(Change::BackendFields);
}

namespace {
// A number as %g writes it.
std::string shortNumber(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}
}  // namespace

template <class T>
StepSettings<T> Batch<T>::stepSettings(double dt, int nSteps, Integrator integrator) const {
  if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("step: dt: must be a positive finite number");
  if (nSteps < 0) throw std::invalid_argument("step: steps: must be >= 0");
  // The compliant law's constraints predict the penetration at the end of their own step
  // (soft_constraints.h): they step with it, by semi-implicit Euler.
  auto compliantStep = [&](const std::string& what, double timestep) {
    if (integrator != Integrator::SemiImplicitEuler)
      throw std::invalid_argument("step: integrator: " + what +
                                  " is under the compliant law's implicit step: it steps with semi-implicit Euler");
    if (std::abs(dt - timestep) > 1e-12 * timestep)
      throw std::invalid_argument("step: dt: " + what + " is under the compliant law's implicit step of " +
                                  shortNumber(timestep) + " s: step with that dt (or build it for " +
                                  shortNumber(dt) + ")");
  };
  for (const PlaneContact& e : model_->planeContacts())
    if (e.desc.law == kLawCompliant) compliantStep("plane contact '" + e.desc.name + "'", e.desc.timestep);
  for (const PairContact& e : model_->pairContacts())
    if (e.desc.law == kLawCompliant) compliantStep("pair contact '" + e.desc.name + "'", e.desc.timestep);
  for (const SoftLimit& e : model_->softLimits())
    if (e.desc.law == kLawCompliant) compliantStep("the limit on '" + e.desc.coordinate + "'", e.desc.timestep);
  return {T(dt), nSteps, integrator, T(constraintTolerance_), maxProjectionIterations_, observe_, autoReset_};
}

template <class T>
void Batch<T>::step(double dt, int nSteps, Integrator integrator) {
  const StepSettings<T> settings = stepSettings(dt, nSteps, integrator);
  if (nSteps == 0) return;
  lastDt_ = dt;
  lastIntegrator_ = integrator;
  backend_->ops().advance(context(), settings);
  afterBackendWrite();
}

template <class T>
void Batch<T>::evaluate() {
  backend_->ops().evaluate(context());
  afterBackendWrite();
}

template <class T>
std::string Batch<T>::describeWorldStatus(std::int64_t w) const {
  const std::int32_t bits = status(w);
  std::string text = describeStatus(bits);
  if (!(bits & kStatusSingularMassMatrix) || lastDt_ <= 0 || singularJointInertia(w)) return text;
  // The world's last state has a regular sweep: the singular one was met at a state the step reached.
  char step[160];
  std::snprintf(step, sizeof step, "%g s (%s)", lastDt_, lastIntegrator_ == Integrator::RK4 ? "rk4" : "euler");
  const std::string why = "the state diverged within a step of " + std::string(step) +
                          ": the articulated-body sweep met a singular joint inertia at a state the step reached, not at "
                          "the world's last state; try a smaller step (dt), or look for forces that grow without bound "
                          "(stiff contacts, springs, stops or actuator gains)";
  const std::string singular = "singular joint inertia in the articulated-body sweep";
  const std::size_t at = text.find(singular);
  return at == std::string::npos ? text + "; " + why : text.replace(at, singular.size(), why);
}

template <class T>
void Batch<T>::assemble(int maxIterations) {
  if (maxIterations < 1) throw std::invalid_argument("assemble: iterations: must be at least 1");
  backend_->ops().assemble(context(), T(constraintTolerance_), maxIterations);
  afterBackendWrite();
}

template <class T>
void Batch<T>::captureInitialState() {
  backend_->captureInitialState(hostView());
  afterBackendWrite();
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
  const auto* idx =
      static_cast<const std::int64_t*>(backend_->toBackend(worlds, count * sizeof(std::int64_t), space, 0));
  backend_->ops().resetIndices(context(), idx, count);
  afterBackendWrite();
}

template <class T>
void Batch<T>::resetWorldsMask(const std::uint8_t* mask, MemorySpace space) {
  const auto* m = static_cast<const std::uint8_t*>(backend_->toBackend(mask, nWorlds_, space, 0));
  backend_->ops().resetMask(context(), m);
  afterBackendWrite();
}

template <class T>
void Batch<T>::setStates(const std::int64_t* worlds, std::int64_t count, const T* q, const T* u, MemorySpace space) {
  if (count < 0) throw std::invalid_argument("setStates: count: must be >= 0");
  if (count == 0) return;
  const auto* idx =
      static_cast<const std::int64_t*>(backend_->toBackend(worlds, count * sizeof(std::int64_t), space, 0));
  const T* qb = static_cast<const T*>(backend_->toBackend(q, count * sizeof(T) * sizes_.nq, space, 1));
  const T* ub = static_cast<const T*>(backend_->toBackend(u, count * sizeof(T) * sizes_.nu, space, 2));
  backend_->ops().setStates(context(), idx, count, qb, ub);
  afterBackendWrite();
}

template <class T>
void Batch<T>::setConstraintTolerance(double tol, int maxIterations) {
  if (!(tol > 0) || !std::isfinite(tol)) throw std::invalid_argument("constraint tolerance: must be a positive finite number");
  if (maxIterations < 1) throw std::invalid_argument("constraint projection iterations: must be at least 1");
  constraintTolerance_ = tol;
  maxProjectionIterations_ = maxIterations;
}

// ---- moving data between the host copy and the backend's ----------------------------------------

template <class T>
void Batch<T>::upload() {
  backend_->upload(hostView(), params_);
}

template <class T>
void Batch<T>::download() {
  backend_->download(hostView());
}

template <class T>
void Batch<T>::synchronize() {
  backend_->synchronize();
}

template <class T>
void* Batch<T>::stream() const {
  return backend_->stream();
}

template <class T>
void Batch<T>::setStream(void* cudaStream) {
  backend_->setStream(cudaStream);
}

template <class T>
BatchView<T> Batch<T>::deviceView() {
  return backend_->deviceView(hostView());
}

// ---- recorded steps -------------------------------------------------------------------------------

template <class T>
std::unique_ptr<StepGraph<T>> Batch<T>::captureStep(double dt, int nSteps, Integrator integrator) {
  if (nSteps < 1) throw std::invalid_argument("captureStep: steps: must be >= 1");
  lastDt_ = dt;
  lastIntegrator_ = integrator;
  const StepSettings<T> settings = stepSettings(dt, nSteps, integrator);
  std::unique_ptr<StepGraph<T>> g(new StepGraph<T>(this, settings, backend_->parameterGeneration()));
  g->exec_ = backend_->record(hostView(), settings);
  return g;
}

template <class T>
StepGraph<T>::~StepGraph() {
  if (exec_) destroyRecordedStep(exec_);
}

template <class T>
void StepGraph<T>::launch() {
  if (!exec_) {
    batch_->step(double(settings_.dt), settings_.nSteps, settings_.integrator);
    return;
  }
  batch_->backend_->launch(exec_, generation_);
}

template class StepGraph<float>;
template class StepGraph<double>;
template class Batch<float>;
template class Batch<double>;
#define LOCKSTEP_INSTANTIATE(T, F)                                                                           \
  template std::vector<double> Batch<T>::hostValues(std::int64_t, Strided<F> WorldView<T>::*) const;        \
  template void Batch<T>::setHostValues(std::int64_t, Strided<F> WorldView<T>::*, const std::vector<double>&, \
                                        const char*);
LOCKSTEP_INSTANTIATE(float, float)
LOCKSTEP_INSTANTIATE(float, std::int32_t)
LOCKSTEP_INSTANTIATE(double, double)
LOCKSTEP_INSTANTIATE(double, std::int32_t)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
