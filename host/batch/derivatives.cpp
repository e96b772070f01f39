// A Batch's linearizations: the Jacobians of one step or one evaluation of every world, computed on
// the backend by the per-world code on dual numbers (physics/derivatives.h, docs/derivatives.md).
#include "derivatives.h"

#include "batch_backend.h"
#include "device_memory.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace lockstep {

namespace {

// The flat index (registry order, physics/derivatives.h) of a parameter component named publicly.
std::int32_t flatParameterIndex(const Model& model, const Sizes& s, const std::string& name) {
  const std::optional<FieldComponent> found = findPublicName(model, parameterFields(), name);
  if (!found)
    throw std::invalid_argument("linearize: params: no per-world parameter named \"" + name +
                                "\" (Batch::parameterNames() and `lockstep info` list them)");
  std::int64_t offset = 0;
  for (const FieldInfo& f : parameterFields()) {
    if (&f == found->field) return static_cast<std::int32_t>(offset + found->component);
    offset += f.count(s);
  }
  throw std::logic_error("linearize: parameter \"" + name + "\" found outside the parameter registry");
}

}  // namespace

template <class T>
void Batch<T>::linearize(double dt, Integrator integrator, const std::vector<std::string>& params, WorldRange worlds) {
  StepSettings<T> s = stepSettings(dt, 1, integrator);
  s.observe = false;
  s.autoReset = false;
  linearizeOn(Linearization::Step, s, params, worlds);
}

template <class T>
void Batch<T>::linearizeEvaluation(const std::vector<std::string>& params, WorldRange worlds) {
  linearizeOn(Linearization::Evaluation, stepSettings(1.0, 1, Integrator::RK4), params, worlds);
}

template <class T>
void Batch<T>::linearizeOn(Linearization what, const StepSettings<T>& settings,
                           const std::vector<std::string>& params, WorldRange worlds) {
  if (worlds.count < 0) worlds.count = nWorlds_ - worlds.first;
  if (worlds.first < 0 || worlds.first > nWorlds_ || worlds.count > nWorlds_ - worlds.first)
    throw std::out_of_range("linearize: worlds [" + std::to_string(worlds.first) + ", " +
                            std::to_string(worlds.first + worlds.count) + ") are not in the batch's [0, " +
                            std::to_string(nWorlds_) + ")");
  // A capsule's point against an ellipsoid is found by a bisection along the capsule on the slope of
  // the ellipsoid's distance (physics/soft_constraints.h), whose rate the dual step does not have.
  for (const PairContact& e : model_->pairContacts())
    if (e.desc.shape1 == kShapeCapsule && e.desc.shape2 == kShapeEllipsoid)
      throw std::invalid_argument("linearize: pair contact \"" + e.desc.name +
                                  "\": a capsule against an ellipsoid, whose contact point's derivatives "
                                  "Lockstep does not give yet");
  using D = DualOf<T>;
  const Sizes& s = sizes_;
  std::vector<std::int32_t> paramIndex;
  std::set<std::string> seen;
  for (const std::string& name : params) {
    if (!seen.insert(name).second)
      throw std::invalid_argument("linearize: params: \"" + name + "\" is named twice");
    paramIndex.push_back(flatParameterIndex(*model_, s, name));
  }
  JacobianShape shape{what, jacobianRows(s, what), 3 * s.nu + static_cast<int>(params.size()), params};
  const DualWorldLayout layout = DualWorldLayout::of(s);
  const std::int64_t perWorld = std::int64_t(shape.rows) * shape.columns;
  const std::int64_t dualWorldBytes = layout.total * std::int64_t(sizeof(D)) + layout.ints * 4;
  const std::int64_t slots = backend_->linearizationSlots(dualWorldBytes);
  // Memory, before allocating: the Jacobians (host copy, and device copy on CUDA) and the dual worlds.
  if (!derivatives_ || derivatives_->jacobian.size() != std::size_t(perWorld * nWorlds_)) {
    const BatchMemory need =
        backend_->linearizationMemory(perWorld * nWorlds_ * std::int64_t(sizeof(T)), slots * dualWorldBytes);
    const std::string why = whyBatchDoesNotFit(need, memoryAvailable(backend_->onDevice()));
    if (!why.empty())
      throw BatchMemoryError("linearize: the Jacobians of " + std::to_string(nWorlds_) + " worlds (" +
                             std::to_string(shape.rows) + " x " + std::to_string(shape.columns) + " each, " +
                             gibText(double(need.hostBytes + need.deviceBytes), 1) + " with their dual worlds) do not fit: " +
                             why);
  }
  if (!derivatives_) derivatives_ = std::make_unique<Derivatives>();
  Derivatives& d = *derivatives_;
  const bool keep = d.shape.what == shape.what && d.shape.columns == shape.columns && d.shape.params == shape.params &&
                    d.jacobian.size() == std::size_t(perWorld * nWorlds_);
  d.shape = JacobianShape{};  // no valid result until this one is complete
  if (!keep) d.jacobian.assign(static_cast<std::size_t>(perWorld * nWorlds_), std::numeric_limits<T>::quiet_NaN());

  LinearizeRequest<T> request{};
  request.what = what;
  request.settings = {D(settings.dt), 1, settings.integrator, D(settings.constraintTolerance),
                      settings.maxProjectionIterations, false, false};
  request.dirs.nu = s.nu;
  request.dirs.nParams = static_cast<std::int32_t>(paramIndex.size());
  request.layout = layout;
  request.slots = slots;
  request.first = worlds.first;
  request.count = worlds.count;
  // The backend's buffers (parameter indices, frames as duals, dual worlds, its copy of the
  // Jacobians), the run, and the worlds linearized back in the host copy.
  backend_->linearize(hostView(), request, paramIndex, d.jacobian, keep);
  d.shape = std::move(shape);
}

template <class T>
const typename Batch<T>::JacobianShape& Batch<T>::jacobianShape() const {
  static const JacobianShape none{};
  return derivatives_ ? derivatives_->shape : none;
}

template <class T>
std::vector<double> Batch<T>::jacobian(std::int64_t w, JacobianBlock block) const {
  checkWorld(w);
  const JacobianShape& shape = jacobianShape();
  if (shape.columns == 0) throw std::logic_error("jacobian: no linearization yet: call linearize() first");
  const int nu = sizes_.nu;
  int first = 0, count = shape.columns;
  if (block == JacobianBlock::State) count = 2 * nu;
  if (block == JacobianBlock::Action) first = 2 * nu, count = nu;
  if (block == JacobianBlock::Parameters) first = 3 * nu, count = shape.columns - 3 * nu;
  std::vector<double> out(static_cast<std::size_t>(shape.rows) * count);
  for (int r = 0; r < shape.rows; ++r)
    for (int k = 0; k < count; ++k)
      out[std::size_t(r) * count + k] =
          double(derivatives_->jacobian[std::size_t((std::int64_t(r) * shape.columns + first + k) * nWorlds_ + w)]);
  return out;
}

template <class T>
FieldView Batch<T>::jacobianView(MemorySpace space) {
  const JacobianShape& shape = jacobianShape();
  if (shape.columns == 0) throw std::logic_error("jacobianView: no linearization yet: call linearize() first");
  FieldView v;
  v.name = "jacobian";
  v.onDevice = space == MemorySpace::Backend && backend_->onDevice();
  v.data = space == MemorySpace::Backend ? backend_->backendJacobian(derivatives_->jacobian)
                                         : static_cast<void*>(derivatives_->jacobian.data());
  v.elementType = sizeof(T) == 4 ? FieldView::Type::Float32 : FieldView::Type::Float64;
  v.worlds = nWorlds_;
  v.components = std::int64_t(shape.rows) * shape.columns;
  v.worldStride = 1;
  v.componentStride = nWorlds_;
  return v;
}

#define LOCKSTEP_INSTANTIATE(T)                                                                             \
  template void Batch<T>::linearize(double, Integrator, const std::vector<std::string>&, WorldRange);       \
  template void Batch<T>::linearizeEvaluation(const std::vector<std::string>&, WorldRange);                 \
  template void Batch<T>::linearizeOn(Linearization, const StepSettings<T>&, const std::vector<std::string>&,  \
                                      WorldRange);                                                          \
  template const Batch<T>::JacobianShape& Batch<T>::jacobianShape() const;                                  \
  template std::vector<double> Batch<T>::jacobian(std::int64_t, JacobianBlock) const;                       \
  template FieldView Batch<T>::jacobianView(MemorySpace);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
