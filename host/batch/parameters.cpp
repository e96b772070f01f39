// Per-world parameters: the model's values as the shared defaults, one element's block of values
// at a time (validated as the model builder validates that element), by public name for studies
// and scenes, and the typed accessors of the C++ API, all over the one ParameterStore.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/fields.h"

namespace lockstep {

namespace {

MassProperties massPropertiesOf(const std::vector<double>& v) {
  MassProperties mp;
  mp.mass = v[0];
  mp.com = vec3At(v, 1);
  mp.inertia = {v[4], v[5], v[6], v[7], v[8], v[9]};
  return mp;
}

// Why a stop or an actuator cannot be turned on in some worlds of a model that declares none.
const char* const kNoSpeedForces =
    "the model declares no joint stop and no actuator, so their code is compiled out of its steps; declare one "
    "(ModelBuilder::add with a JointStopDesc or an ActuatorDesc, a scene's \"limits\" or \"actuators\") to set them per world";

// Whether generalized speed u is the qdot of a coordinate (its mobilizer is neither Ball nor Free).
bool speedHasCoordinate(const Model& m, int u) {
  for (const Body& b : m.bodies())
    if (u >= b.uOffset && u < b.uOffset + b.nu) return mobilizerQdotIsU(b.mobilizer);
  return false;
}

const FieldInfo& infoOf(ParamId id) { return parameterFields()[int(id)]; }

// "world 3 spring-damper 'spring'": where a parameter value belongs, for error messages.
std::string describeElement(const Model& m, ParamId id, std::int64_t w, int element) {
  std::string s = w < 0 ? "all worlds" : "world " + std::to_string(w);
  const Per per = infoOf(id).per;
  if (per != Per::World) s += std::string(" ") + elementWord(per) + " '" + elementNames(m, per)[element] + "'";
  return s;
}

}  // namespace

std::vector<double> modelParameterBlock(const Model& m, ParamId id, int e) {
  std::vector<double> v;
  switch (id) {
    case ParamId::massProps: {
      const MassProperties& mp = m.body(e).mass;
      v = {mp.mass, mp.com[0], mp.com[1], mp.com[2], mp.inertia.xx, mp.inertia.yy, mp.inertia.zz,
           mp.inertia.xy, mp.inertia.xz, mp.inertia.yz};
      break;
    }
    case ParamId::gravity: appendVec3(v, m.gravity()); break;
    case ParamId::damping: v = {m.damping()[e]}; break;
    case ParamId::effortLimit: v = {m.effortLimit()[e]}; break;
    case ParamId::armature: v = {m.armature()[e]}; break;
    case ParamId::jointSpring: v = {m.jointStiffness()[e], m.springReference()[e]}; break;
    case ParamId::actuatorControl: {
      const Actuator* a = m.actuatorOnSpeed(e);
      const double inf = std::numeric_limits<double>::infinity();
      v = a ? std::vector<double>{a->desc.gear, a->desc.controlLower, a->desc.controlUpper}
            : std::vector<double>{1.0, -inf, inf};
      break;
    }
    case ParamId::stopParams: {
      const JointStop* stop = m.stopOnSpeed(e);
      const double inf = std::numeric_limits<double>::infinity();
      v = stop ? std::vector<double>{stop->desc.lower, stop->desc.upper, stop->desc.stiffness, stop->desc.dissipation}
               : std::vector<double>{-inf, inf, 0.0, 0.0};
      break;
    }
    case ParamId::actuatorGains: {
      const Actuator* a = m.actuatorOnSpeed(e);
      v = a ? std::vector<double>{double(static_cast<int>(a->desc.mode)), a->desc.kp, a->desc.kd}
            : std::vector<double>{0.0, 0.0, 0.0};
      break;
    }
    default: {  // a parameter of a body element: its kind's (host/model/elements_*.cpp)
      switch (infoOf(id).per) {
#define LOCKSTEP_X(Kind, list, count, per, ...) \
  case Per::per: return parameterBlock(m.list().at(e), id);
        LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
        default: break;
      }
    }
  }
  return v;
}

void validateParameterBlock(const Model& m, ParamId id, int e, const std::vector<double>& v, const std::string& where) {
  const FieldInfo& info = infoOf(id);
  if (static_cast<int>(v.size()) != info.width())
    throw std::invalid_argument(where + ": " + info.name + ": expected " + std::to_string(info.width()) +
                                " values, got " + std::to_string(v.size()));
  switch (id) {
    case ParamId::massProps: validateMassProperties(massPropertiesOf(v), where, m.largestInertia()); break;
    case ParamId::gravity:
      for (double x : v) validateFinite(x, where, "gravity");
      break;
    case ParamId::damping: validateNonNegative(v[0], where, "damping"); break;
    case ParamId::effortLimit:
      if (!(v[0] > 0)) throw ModelError(where + ": effort limit: must be > 0 (infinity: unbounded)");
      break;
    case ParamId::armature:
      validateNonNegative(v[0], where, "armature");
      if (v[0] != 0 && std::none_of(m.armature().begin(), m.armature().end(), [](double a) { return a != 0; }))
        throw ModelError(where + ": armature: the model has none, so its code is compiled out of its steps; give "
                         "some speed an armature in the model to set it per world");
      break;
    case ParamId::jointSpring:
      validateNonNegative(v[0], where, "stiffness");
      validateFinite(v[1], where, "reference");
      if (v[0] != 0 && !speedHasCoordinate(m, e))
        throw ModelError(where + ": stiffness: its mobilizer's qdot is not u; joint springs need a coordinate whose "
                         "qdot is its speed");
      if (v[0] != 0 &&
          std::none_of(m.jointStiffness().begin(), m.jointStiffness().end(), [](double k) { return k != 0; }))
        throw ModelError(where + ": stiffness: the model has no joint spring, so its code is compiled out of its "
                         "steps; give some coordinate a stiffness in the model to set it per world");
      break;
    case ParamId::actuatorControl:
      validateActuatorControl(v[0], v[1], v[2], where);
      if ((v[0] != 1 || v[1] > -INFINITY || v[2] < INFINITY) && m.actuators().empty() && m.stops().empty())
        throw ModelError(where + ": gear: " + kNoSpeedForces);
      break;
    case ParamId::stopParams:
      validateStopParameters(v[0], v[1], v[2], v[3], where);
      if ((v[0] > -INFINITY || v[1] < INFINITY) && !speedHasCoordinate(m, e))
        throw ModelError(where + ": stop: its mobilizer's qdot is not u; joint stops (as Simbody's MobilityLinearStop) "
                         "need a coordinate whose qdot is its speed");
      if ((v[0] > -INFINITY || v[1] < INFINITY) && m.stops().empty() && m.actuators().empty())
        throw ModelError(where + ": stop: " + kNoSpeedForces);
      break;
    case ParamId::actuatorGains:
      validateActuatorParameters(v[0], v[1], v[2], where);
      if (v[0] != 0 && !speedHasCoordinate(m, e))
        throw ModelError(where + ": mode: its mobilizer's qdot is not u; PD actuators need a coordinate whose qdot is "
                         "its speed (torque mode only)");
      if (v[0] != 0 && m.stops().empty() && m.actuators().empty()) throw ModelError(where + ": mode: " + kNoSpeedForces);
      break;
    default: {  // a parameter of a body element: its kind's (host/model/elements_*.cpp)
      switch (info.per) {
#define LOCKSTEP_X(Kind, list, count, per, ...) \
  case Per::per: return validateParameterBlock(m.list(), id, v, where);
        LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
        default: break;
      }
    }
  }
}

// ---- the store ---------------------------------------------------------------------------------

template <class T>
ParameterStore<T>::ParameterStore(const Model& m, const Sizes& s, std::int64_t nWorlds) : nWorlds_(nWorlds) {
  for (int p = 0; p < kParamCount; ++p) {
    const ParamId id = ParamId(p);
    Entry& e = entries_[p];
    e.count = infoOf(id).count(s);
    const std::int64_t elements = perCount(infoOf(id).per, s);
    for (std::int64_t k = 0; k < elements; ++k)
      for (double x : modelParameterBlock(m, id, static_cast<int>(k))) e.data.push_back(T(x));
  }
}

template <class T>
void ParameterStore<T>::set(ParamId id, std::int64_t w, std::int64_t c, double value) {
  Entry& e = entries_[int(id)];
  if (w == kAllWorlds) {
    if (!e.perWorld) e.data[c] = T(value);
    else
      for (std::int64_t x = 0; x < nWorlds_; ++x) worldValues(id, x)[c] = T(value);
    return;
  }
  if (!e.perWorld) {  // one copy per world from now on, each starting from the shared values
    const AlignedVector<T> shared = std::move(e.data);
    e.data.assign(shared.size() * static_cast<std::size_t>(nWorlds_), T(0));
    e.perWorld = true;
    for (std::int64_t x = 0; x < nWorlds_; ++x)
      for (std::int64_t k = 0; k < e.count; ++k) worldValues(id, x)[k] = shared[k];
  }
  worldValues(id, w)[c] = T(value);
}

template class ParameterStore<float>;
template class ParameterStore<double>;

// ---- Batch: parameters by element block and by name --------------------------------------------

template <class T>
std::vector<double> Batch<T>::parameterBlock(ParamId id, std::int64_t w, int element) const {
  checkWorld(w);
  const FieldInfo& info = infoOf(id);
  checkElement(element, static_cast<int>(perCount(info.per, sizes_)), info.name);
  std::vector<double> v(info.width());
  for (int k = 0; k < info.width(); ++k) v[k] = double(params_.value(id, w, std::int64_t(element) * info.width() + k));
  return v;
}

template <class T>
void Batch<T>::setParameterBlock(ParamId id, std::int64_t w, int element, const std::vector<double>& v) {
  if (w != kAllWorlds) checkWorld(w);
  const FieldInfo& info = infoOf(id);
  checkElement(element, static_cast<int>(perCount(info.per, sizes_)), info.name);
  validateParameterBlock(*model_, id, element, v, describeElement(*model_, id, w, element));
  touchHost();
  for (int k = 0; k < info.width(); ++k) params_.set(id, w, std::int64_t(element) * info.width() + k, v[k]);
}

template <class T>
bool Batch<T>::isPerWorld(const std::string& param) const {
  for (int p = 0; p < kParamCount; ++p)
    if (param == infoOf(ParamId(p)).name) return params_.perWorld(ParamId(p));
  throw std::invalid_argument("no per-world parameter named '" + param + "'");
}

template <class T>
std::vector<std::string> Batch<T>::parameterNames() const {
  std::vector<std::string> names;
  for (const FieldInfo& f : parameterFields())
    for (std::string& n : publicNames(*model_, f)) names.push_back(std::move(n));
  return names;
}

namespace {
FieldComponent findParameter(const Model& m, const std::string& name) {
  const std::optional<FieldComponent> found = findPublicName(m, parameterFields(), name);
  if (!found)
    throw std::invalid_argument("no per-world parameter named '" + name +
                                "' (`lockstep info` lists them; the grammar is in docs/study-format.md)");
  return *found;
}
ParamId idOf(const FieldInfo* f) { return ParamId(f - parameterFields().data()); }
}  // namespace

template <class T>
void Batch<T>::setParameter(std::int64_t w, const std::string& name, double value) {
  setParameter(w, findParameter(*model_, name), value);
}

template <class T>
void Batch<T>::setParameter(std::int64_t w, const FieldComponent& c, double value) {
  if (c.field < parameterFields().data() || c.field >= parameterFields().data() + kParamCount)
    throw std::invalid_argument(std::string("setParameter: '") + c.field->name + "' is not a per-world parameter");
  const ParamId id = idOf(c.field);
  const int width = c.field->width();
  const int element = static_cast<int>(c.component / width);
  // One component changes; each world's block (the shared one while there is one) is checked whole.
  const bool eachWorld = w == kAllWorlds && params_.perWorld(id);
  for (std::int64_t x = eachWorld ? 0 : w; x < (eachWorld ? nWorlds_ : w + 1); ++x) {
    std::vector<double> block = parameterBlock(id, x == kAllWorlds ? 0 : x, element);
    block[c.component % width] = value;
    validateParameterBlock(*model_, id, element, block, describeElement(*model_, id, x, element));
  }
  touchHost();
  params_.set(id, w, c.component, value);
}

template <class T>
double Batch<T>::parameter(std::int64_t w, const std::string& name) const {
  const FieldComponent c = findParameter(*model_, name);
  checkWorld(w);
  return double(params_.value(idOf(c.field), w, c.component));
}

// ---- typed accessors --------------------------------------------------------------------------

template <class T>
void Batch<T>::setMassProperties(std::int64_t w, int body, const MassProperties& mp) {
  setParameterBlock(ParamId::massProps, w, body,
                    {mp.mass, mp.com[0], mp.com[1], mp.com[2], mp.inertia.xx, mp.inertia.yy, mp.inertia.zz,
                     mp.inertia.xy, mp.inertia.xz, mp.inertia.yz});
}
template <class T>
MassProperties Batch<T>::massProperties(std::int64_t w, int body) const {
  return massPropertiesOf(parameterBlock(ParamId::massProps, w, body));
}
template <class T>
void Batch<T>::setGravity(std::int64_t w, const Vec3d& g) {
  setParameterBlock(ParamId::gravity, w, 0, {g[0], g[1], g[2]});
}
template <class T>
Vec3d Batch<T>::gravity(std::int64_t w) const {
  return vec3At(parameterBlock(ParamId::gravity, w, 0), 0);
}
template <class T>
void Batch<T>::setDamping(std::int64_t w, const std::vector<double>& c) {
  if (static_cast<int>(c.size()) != sizes_.nu)
    throw std::invalid_argument("damping: expected " + std::to_string(sizes_.nu) + " values, got " + std::to_string(c.size()));
  for (int i = 0; i < sizes_.nu; ++i)
    validateNonNegative(c[i], describeElement(*model_, ParamId::damping, w, i), "damping");
  for (int i = 0; i < sizes_.nu; ++i) setParameterBlock(ParamId::damping, w, i, {c[i]});
}
template <class T>
std::vector<double> Batch<T>::damping(std::int64_t w) const {
  std::vector<double> out(sizes_.nu);
  for (int i = 0; i < sizes_.nu; ++i) out[i] = parameterBlock(ParamId::damping, w, i)[0];
  return out;
}

template <class T>
void Batch<T>::setBushingFrames(std::int64_t w, int i, const Transformd& X_B1F, const Transformd& X_B2M) {
  std::vector<double> v;
  appendTransform(v, X_B1F);
  appendTransform(v, X_B2M);
  setParameterBlock(ParamId::bushingFrames, w, i, v);
}
template <class T>
void Batch<T>::setBushingStiffness(std::int64_t w, int i, const std::array<double, 6>& k) {
  setParameterBlock(ParamId::bushingStiffness, w, i, {k.begin(), k.end()});
}
template <class T>
void Batch<T>::setBushingDamping(std::int64_t w, int i, const std::array<double, 6>& c) {
  setParameterBlock(ParamId::bushingDamping, w, i, {c.begin(), c.end()});
}
template <class T>
Transformd Batch<T>::bushingFrameOnBody1(std::int64_t w, int i) const {
  return transformAt(parameterBlock(ParamId::bushingFrames, w, i), 0);
}
template <class T>
Transformd Batch<T>::bushingFrameOnBody2(std::int64_t w, int i) const {
  return transformAt(parameterBlock(ParamId::bushingFrames, w, i), 12);
}
template <class T>
std::array<double, 6> Batch<T>::bushingStiffness(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::bushingStiffness, w, i);
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}
template <class T>
std::array<double, 6> Batch<T>::bushingDamping(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::bushingDamping, w, i);
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

template <class T>
void Batch<T>::setSpringParameters(std::int64_t w, int i, double freeLength, double stiffness, double damping) {
  setParameterBlock(ParamId::springParams, w, i, {freeLength, stiffness, damping});
}
template <class T>
void Batch<T>::setSpringPoints(std::int64_t w, int i, const Vec3d& p_AP, const Vec3d& p_BQ) {
  setParameterBlock(ParamId::springPoints, w, i, {p_AP[0], p_AP[1], p_AP[2], p_BQ[0], p_BQ[1], p_BQ[2]});
}
template <class T>
std::array<double, 3> Batch<T>::springParameters(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::springParams, w, i);
  return {v[0], v[1], v[2]};
}
template <class T>
std::array<Vec3d, 2> Batch<T>::springPoints(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::springPoints, w, i);
  return {vec3At(v, 0), vec3At(v, 3)};
}

template <class T>
void Batch<T>::setSphereCenters(std::int64_t w, int i, const Vec3d& onF, const Vec3d& onB) {
  setParameterBlock(ParamId::sphereCenters, w, i, {onF[0], onF[1], onF[2], onB[0], onB[1], onB[2]});
}
template <class T>
void Batch<T>::setSphereRadii(std::int64_t w, int i, double radiusOnF, double radiusOnB) {
  setParameterBlock(ParamId::sphereRadii, w, i, {radiusOnF, radiusOnB});
}
template <class T>
void Batch<T>::setContactEnabled(std::int64_t w, int i, bool enabled) {
  setParameterBlock(ParamId::contactEnabled, w, i, {enabled ? 1.0 : 0.0});
}
template <class T>
std::array<Vec3d, 2> Batch<T>::sphereCenters(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::sphereCenters, w, i);
  return {vec3At(v, 0), vec3At(v, 3)};
}
template <class T>
std::array<double, 2> Batch<T>::sphereRadii(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::sphereRadii, w, i);
  return {v[0], v[1]};
}
template <class T>
void Batch<T>::setGroundSphere(std::int64_t w, int i, const Vec3d& center, double radius) {
  setParameterBlock(ParamId::groundSphere, w, i, {center[0], center[1], center[2], radius});
}

template <class T>
void Batch<T>::setGroundPlane(std::int64_t w, int i, const Vec3d& normal, const Vec3d& point) {
  setParameterBlock(ParamId::groundPlane, w, i, {normal[0], normal[1], normal[2], point[0], point[1], point[2]});
}

template <class T>
void Batch<T>::setGroundMaterial(std::int64_t w, int i, const GroundMaterial& p) {
  setParameterBlock(ParamId::groundMaterial, w, i,
                    {p.stiffness, p.dissipation, p.staticFriction, p.dynamicFriction, p.viscousFriction,
                     p.transitionVelocity, p.cf, p.bd, p.bv});
}

template <class T>
GroundMaterial Batch<T>::groundMaterial(std::int64_t w, int i) const {
  const std::vector<double> v = parameterBlock(ParamId::groundMaterial, w, i);
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
}

template <class T>
bool Batch<T>::contactEnabled(std::int64_t w, int i) const {
  return parameterBlock(ParamId::contactEnabled, w, i)[0] != 0;
}

template <class T>
void Batch<T>::setJointStop(std::int64_t w, int u, double lower, double upper, double stiffness, double dissipation) {
  setParameterBlock(ParamId::stopParams, w, u, {lower, upper, stiffness, dissipation});
}
template <class T>
std::array<double, 4> Batch<T>::jointStop(std::int64_t w, int u) const {
  const std::vector<double> v = parameterBlock(ParamId::stopParams, w, u);
  return {v[0], v[1], v[2], v[3]};
}
template <class T>
void Batch<T>::setActuatorGains(std::int64_t w, int u, ActuatorMode mode, double kp, double kd) {
  setParameterBlock(ParamId::actuatorGains, w, u, {double(static_cast<int>(mode)), kp, kd});
}
template <class T>
std::array<double, 3> Batch<T>::actuatorGains(std::int64_t w, int u) const {
  const std::vector<double> v = parameterBlock(ParamId::actuatorGains, w, u);
  return {v[0], v[1], v[2]};
}

#define LOCKSTEP_INSTANTIATE(T)                                                                           \
  template std::vector<double> Batch<T>::parameterBlock(ParamId, std::int64_t, int) const;                \
  template void Batch<T>::setParameterBlock(ParamId, std::int64_t, int, const std::vector<double>&);       \
  template bool Batch<T>::isPerWorld(const std::string&) const;                                           \
  template std::vector<std::string> Batch<T>::parameterNames() const;                                     \
  template void Batch<T>::setParameter(std::int64_t, const std::string&, double);                         \
  template void Batch<T>::setParameter(std::int64_t, const FieldComponent&, double);                      \
  template double Batch<T>::parameter(std::int64_t, const std::string&) const;                            \
  template void Batch<T>::setMassProperties(std::int64_t, int, const MassProperties&);                    \
  template MassProperties Batch<T>::massProperties(std::int64_t, int) const;                              \
  template void Batch<T>::setGravity(std::int64_t, const Vec3d&);                                         \
  template Vec3d Batch<T>::gravity(std::int64_t) const;                                                   \
  template void Batch<T>::setDamping(std::int64_t, const std::vector<double>&);                           \
  template std::vector<double> Batch<T>::damping(std::int64_t) const;                                     \
  template void Batch<T>::setBushingFrames(std::int64_t, int, const Transformd&, const Transformd&);      \
  template void Batch<T>::setBushingStiffness(std::int64_t, int, const std::array<double, 6>&);           \
  template void Batch<T>::setBushingDamping(std::int64_t, int, const std::array<double, 6>&);             \
  template Transformd Batch<T>::bushingFrameOnBody1(std::int64_t, int) const;                             \
  template Transformd Batch<T>::bushingFrameOnBody2(std::int64_t, int) const;                             \
  template std::array<double, 6> Batch<T>::bushingStiffness(std::int64_t, int) const;                     \
  template std::array<double, 6> Batch<T>::bushingDamping(std::int64_t, int) const;                       \
  template void Batch<T>::setSpringParameters(std::int64_t, int, double, double, double);                 \
  template void Batch<T>::setSpringPoints(std::int64_t, int, const Vec3d&, const Vec3d&);                 \
  template std::array<double, 3> Batch<T>::springParameters(std::int64_t, int) const;                     \
  template std::array<Vec3d, 2> Batch<T>::springPoints(std::int64_t, int) const;                          \
  template void Batch<T>::setSphereCenters(std::int64_t, int, const Vec3d&, const Vec3d&);                \
  template void Batch<T>::setSphereRadii(std::int64_t, int, double, double);                              \
  template void Batch<T>::setContactEnabled(std::int64_t, int, bool);                                     \
  template std::array<Vec3d, 2> Batch<T>::sphereCenters(std::int64_t, int) const;                         \
  template std::array<double, 2> Batch<T>::sphereRadii(std::int64_t, int) const;                          \
  template bool Batch<T>::contactEnabled(std::int64_t, int) const;                                        \
  template void Batch<T>::setGroundSphere(std::int64_t, int, const Vec3d&, double);                       \
  template void Batch<T>::setGroundPlane(std::int64_t, int, const Vec3d&, const Vec3d&);                  \
  template void Batch<T>::setGroundMaterial(std::int64_t, int, const GroundMaterial&);                    \
  template GroundMaterial Batch<T>::groundMaterial(std::int64_t, int) const;                              \
  template void Batch<T>::setJointStop(std::int64_t, int, double, double, double, double);               \
  template std::array<double, 4> Batch<T>::jointStop(std::int64_t, int) const;                           \
  template void Batch<T>::setActuatorGains(std::int64_t, int, ActuatorMode, double, double);              \
  template std::array<double, 3> Batch<T>::actuatorGains(std::int64_t, int) const;
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
