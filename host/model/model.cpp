#include "lockstep/engine/model.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "element_text.h"

namespace lockstep {

namespace {

const char* const kMobilizerNames[kMobilizerTypeCount] = {"weld", "pin", "slider", "universal", "cylinder",
                                                         "planar", "gimbal", "ball", "translation", "free"};

// Axis suffixes of each coordinate and speed, for column names.
std::vector<std::string> qAxes(MobilizerType t) {
  switch (t) {
    case MobilizerType::Weld: return {};
    case MobilizerType::Pin: case MobilizerType::Slider: return {""};
    case MobilizerType::Universal: return {"rx", "ry"};
    case MobilizerType::Cylinder: return {"rz", "z"};
    case MobilizerType::Planar: return {"rz", "x", "y"};
    case MobilizerType::Gimbal: return {"rx", "ry", "rz"};
    case MobilizerType::Ball: return {"qw", "qx", "qy", "qz"};
    case MobilizerType::Translation: return {"x", "y", "z"};
    case MobilizerType::Free: return {"qw", "qx", "qy", "qz", "x", "y", "z"};
  }
  return {};
}
std::vector<std::string> uAxes(MobilizerType t) {
  switch (t) {
    case MobilizerType::Ball: return {"wx", "wy", "wz"};
    case MobilizerType::Free: return {"wx", "wy", "wz", "vx", "vy", "vz"};
    default: return qAxes(t);
  }
}
std::string columnName(const std::string& joint, const std::string& axis) {
  return axis.empty() ? joint : joint + "." + axis;
}

// The trace of a body's central inertia (0 when not finite).
double inertiaTrace(const MassProperties& m) {
  const double t = m.inertia.xx + m.inertia.yy + m.inertia.zz;
  return std::isfinite(t) ? std::abs(t) : 0.0;
}

bool hasTranslation(MobilizerType t) {
  switch (t) {
    case MobilizerType::Slider: case MobilizerType::Cylinder: case MobilizerType::Planar:
    case MobilizerType::Translation: case MobilizerType::Free: return true;
    default: return false;
  }
}

}  // namespace

const char* mobilizerName(MobilizerType t) { return kMobilizerNames[static_cast<int>(t)]; }

MobilizerType parseMobilizerType(const std::string& s) {
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (int i = 0; i < kMobilizerTypeCount; ++i)
    if (lower == kMobilizerNames[i]) return static_cast<MobilizerType>(i);
  std::string all;
  for (int i = 0; i < kMobilizerTypeCount; ++i) all += std::string(i ? ", " : "") + kMobilizerNames[i];
  throw ModelError("unknown mobilizer type " + quoted(s) + " (expected one of: " + all + ")");
}

void validateFinite(double x, const std::string& where, const std::string& field) {
  if (!std::isfinite(x)) throw ModelError(where + ": " + field + ": must be a finite number");
}

void validateNonNegative(double x, const std::string& where, const std::string& field) {
  validateFinite(x, where, field);
  if (x < 0) {
    std::ostringstream os;
    os << where << ": " << field << ": must be >= 0 (got " << x << ")";
    throw ModelError(os.str());
  }
}

void validateMassProperties(const MassProperties& m, const std::string& where, double inertiaScale) {
  validateFinite(m.mass, where, "mass");
  if (m.mass < 0) {
    std::ostringstream os;
    os << where << ": mass: must be >= 0 (got " << m.mass << ")";
    throw ModelError(os.str());
  }
  for (int i = 0; i < 3; ++i) validateFinite(m.com[i], where, "center of mass");
  const SymMat33d& I = m.inertia;
  for (double x : {I.xx, I.yy, I.zz, I.xy, I.xz, I.yz}) validateFinite(x, where, "inertia");
  Eigen::Matrix3d E;
  E << I.xx, I.xy, I.xz, I.xy, I.yy, I.yz, I.xz, I.yz, I.zz;
  const Eigen::Vector3d p = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(E, Eigen::EigenvaluesOnly).eigenvalues();
  const double scale = std::max({std::abs(p(0)), std::abs(p(1)), std::abs(p(2)), 1e-300});
  // Relative to the inertia itself, or to round-off of the model's largest inertia (an inertia of
  // 1e-20 kg m^2 from a CAD export is noise next to a robot's links, whatever its shape).
  const double tol = std::max(kInertiaRelativeTolerance * scale, kInertiaRoundoff * inertiaScale);
  std::ostringstream os;
  os.precision(6);
  if (p(0) < -tol) {
    os << where << ": inertia: not positive semidefinite (principal moments " << p(0) << ", " << p(1) << ", " << p(2)
       << ")";
    throw ModelError(os.str());
  }
  // Physical inertias satisfy the triangle inequality between principal moments.
  if (p(0) + p(1) < p(2) - tol) {
    os << where << ": inertia: violates the triangle inequality (principal moments " << p(0) << " + " << p(1)
       << " < " << p(2) << ")";
    throw ModelError(os.str());
  }
}

void validateTransform(const Transformd& X, const std::string& where, const std::string& field) {
  for (int i = 0; i < 3; ++i) {
    validateFinite(X.p[i], where, field + " translation");
    for (int j = 0; j < 3; ++j) validateFinite(X.R(i, j), where, field + " rotation");
  }
  Eigen::Matrix3d R;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R(i, j) = X.R(i, j);
  const double orth = (R.transpose() * R - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff();
  if (orth > 1e-9 || R.determinant() < 0) {
    std::ostringstream os;
    os << where << ": " << field << ": not a rigid transform (rotation is not orthonormal with determinant +1; "
       << "|R^T R - 1| = " << orth << ", det = " << R.determinant() << ")";
    throw ModelError(os.str());
  }
}

const JointStop* Model::stopOnSpeed(int u) const {
  for (const JointStop& e : stops_)
    if (e.u == u) return &e;
  return nullptr;
}

const Actuator* Model::actuatorOnSpeed(int u) const {
  for (const Actuator& e : actuators_)
    if (e.u == u) return &e;
  return nullptr;
}

int Model::numConstraintEquations() const {
  int n = 0;
  for (const SphereContact& c : contacts_) n += c.desc.enforceRolling ? 3 : 1;
  return n;
}

int Model::bodyIndex(const std::string& name) const {
  if (name == "ground") return -1;
  for (int b = 0; b < numBodies(); ++b)
    if (bodies_[b].name == name) return b;
  throw ModelError("no body named " + quoted(name));
}

double Model::largestInertia() const {
  double largest = 0;
  for (const Body& b : bodies_) largest = std::max(largest, inertiaTrace(b.mass));
  return largest;
}

double Model::totalMass() const {
  double m = 0;
  for (const Body& b : bodies_) m += b.mass.mass;
  return m;
}

std::string textf(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(std::size_t(n) + 1, '\0');
  std::vsnprintf(&out[0], out.size(), format, again);
  va_end(again);
  out.resize(std::size_t(n));
  return out;
}

int ElementBuild::body(const std::string& name, const std::string& where, const char* field) const {
  if (name == "ground") return -1;
  const auto it = bodyIndex.find(name);
  if (it != bodyIndex.end()) return it->second;
  throw ModelError(where + ": " + field + ": no body named " + quoted(name));
}

void ElementBuild::coordinate(const std::string& name, const std::string& where, int* q, int* u) const {
  const auto it = std::find(model.qNames().begin(), model.qNames().end(), name);
  if (it == model.qNames().end()) throw ModelError(where + ": coordinate: no coordinate named " + quoted(name));
  *q = static_cast<int>(it - model.qNames().begin());
  for (const Body& b : model.bodies()) {
    if (*q < b.qOffset || *q >= b.qOffset + b.nq) continue;
    if (!mobilizerQdotIsU(b.mobilizer))
      throw ModelError(where + ": coordinate: " + quoted(name) + " belongs to a " + mobilizerName(b.mobilizer) +
                       " mobilizer, whose qdot is not u; joint stops and PD actuators (as Simbody's " +
                       "MobilityLinearStop) need a coordinate whose qdot is its speed");
    *u = b.uOffset + (*q - b.qOffset);
  }
}

// The joint inertia D = H^T IA H of a mobilizer whose body and outboard bodies are all massless
// and without inertia (massless, for a translation) is zero in some direction in every state. (A
// massless body with massive bodies outboard of it moves them, and is fine.) Bodies are in
// topological order, so one inward pass sums the subtrees.
void validateJointInertias(const Model& m) {
  const int nb = m.numBodies();
  std::vector<double> mass(nb), inertia(nb);  // of each body and everything outboard of it
  for (int b = nb - 1; b >= 0; --b) {
    mass[b] += m.body(b).mass.mass;
    inertia[b] += inertiaTrace(m.body(b).mass);
    if (const int p = m.body(b).parent; p >= 0) {
      mass[p] += mass[b];
      inertia[p] += inertia[b];
    }
  }
  for (int b = 0; b < nb; ++b) {
    const Body& body = m.body(b);
    if (body.nu == 0 || mass[b] > 0) continue;
    const bool translates = hasTranslation(body.mobilizer);
    if (inertia[b] > 0 && !translates) continue;
    throw ModelError("body " + quoted(body.name) + ": mass: the body and every body outboard of it have no mass" +
                     (translates ? "" : " and no inertia") + ", so its " + mobilizerName(body.mobilizer) +
                     " mobilizer " + quoted(body.jointName) + " has a singular joint inertia (it cannot be " +
                     "accelerated); give the body mass and inertia (a URDF link needs an <inertial>) or weld it " +
                     "(mobilizer \"weld\"; in URDF a fixed joint)");
  }
}

ModelBuilder& ModelBuilder::setGravity(const Vec3d& g) {
  gravity_ = g;
  return *this;
}

ModelBuilder& ModelBuilder::setMujocoStepping(bool on) {
  mujocoStepping_ = on;
  return *this;
}

ModelBuilder& ModelBuilder::compliantConstraints(double timestep) {
  for (std::size_t i = 0; i < groundContacts_.size(); ++i) {
    const GroundContactDesc& g = groundContacts_[i];
    PlaneContactDesc d;
    d.name = g.name.empty() ? "ground" + std::to_string(i) : g.name;
    d.body = g.body;
    d.law = kLawCompliant;
    d.shape = kShapeSphere;
    d.X_BG.p = g.center;
    d.size = {{g.radius, 0, 0}};
    d.planeNormal = g.planeNormal;
    d.planePoint = g.planePoint;
    d.friction = g.material.dynamicFriction;
    d.stiffness = g.material.stiffness;
    d.dissipation = g.material.dissipation;
    d.stictionVelocity = g.material.transitionVelocity;
    d.timestep = timestep;
    planeContacts_.push_back(d);
  }
  groundContacts_.clear();
  for (const JointStopDesc& s : stops_) {
    SoftLimitDesc d;
    d.coordinate = s.coordinate;
    d.lower = s.lower;
    d.upper = s.upper;
    d.law = kLawCompliant;
    d.stiffness = s.stiffness;
    d.dissipation = s.dissipation;
    d.timestep = timestep;
    softLimits_.push_back(d);
  }
  stops_.clear();
  return *this;
}

ModelBuilder& ModelBuilder::addBody(const BodyDesc& body) {
  bodies_.push_back(body);
  return *this;
}

ModelBuilder ModelBuilder::fromModel(const Model& m) {
  ModelBuilder mb;
  mb.setGravity(m.gravity());
  mb.setMujocoStepping(m.mujocoStepping());
  for (const Body& b : m.bodies()) {
    BodyDesc d;
    d.name = b.name;
    d.parent = b.parent < 0 ? "ground" : m.body(b.parent).name;
    d.mobilizer = b.mobilizer;
    d.jointName = b.jointName;
    d.X_PF = b.X_PF;
    d.X_BM = b.X_BM;
    d.mass = b.mass;
    d.damping.assign(m.damping().begin() + b.uOffset, m.damping().begin() + b.uOffset + b.nu);
    d.effortLimit.assign(m.effortLimit().begin() + b.uOffset, m.effortLimit().begin() + b.uOffset + b.nu);
    d.armature.assign(m.armature().begin() + b.uOffset, m.armature().begin() + b.uOffset + b.nu);
    d.stiffness.assign(m.jointStiffness().begin() + b.uOffset, m.jointStiffness().begin() + b.uOffset + b.nu);
    d.springReference.assign(m.springReference().begin() + b.uOffset, m.springReference().begin() + b.uOffset + b.nu);
    mb.addBody(d);
  }
#define LOCKSTEP_X(Kind, list, count, ...) \
  for (const Kind& e : m.list()) mb.add(e.desc);
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return mb;
}

std::shared_ptr<const Model> ModelBuilder::build() const {
  for (int i = 0; i < 3; ++i) validateFinite(gravity_[i], "model", "gravity");

  // Names: unique, non-empty, not "ground".
  std::map<std::string, int> byName;
  for (int i = 0; i < static_cast<int>(bodies_.size()); ++i) {
    const BodyDesc& b = bodies_[i];
    if (b.name.empty()) throw ModelError("body #" + std::to_string(i) + ": name: must not be empty");
    if (b.name == "ground") throw ModelError("body 'ground': name: reserved for the Ground frame");
    if (!byName.emplace(b.name, i).second) throw ModelError("body " + quoted(b.name) + ": name: defined twice");
  }
  // Parents exist; order bodies so that parents come first, detecting cycles.
  for (const BodyDesc& b : bodies_) {
    if (b.parent != "ground" && !byName.count(b.parent))
      throw ModelError("body " + quoted(b.name) + ": parent: no body named " + quoted(b.parent));
  }
  std::vector<int> order;
  std::vector<int> state(bodies_.size(), 0);  // 0 unvisited, 1 on the current path, 2 placed
  for (int start = 0; start < static_cast<int>(bodies_.size()); ++start) {
    std::vector<int> path;
    int i = start;
    while (state[i] == 0) {
      state[i] = 1;
      path.push_back(i);
      const std::string& parent = bodies_[i].parent;
      if (parent == "ground") break;
      const int p = byName.at(parent);
      if (state[p] == 1) throw ModelError("body " + quoted(bodies_[p].name) + ": parent: the mobilizer tree has a cycle through it");
      i = p;
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      state[*it] = 2;
      order.push_back(*it);
    }
  }

  double largestInertia = 0;
  for (const BodyDesc& b : bodies_) largestInertia = std::max(largestInertia, inertiaTrace(b.mass));

  auto model = std::make_shared<Model>();
  Model& m = *model;
  m.gravity_ = gravity_;
  m.mujocoStepping_ = mujocoStepping_;
  std::map<std::string, int> newIndex;
  std::map<std::string, int> jointNames;
  for (int i : order) {
    const BodyDesc& d = bodies_[i];
    const std::string where = "body " + quoted(d.name);
    validateMassProperties(d.mass, where, largestInertia);
    validateTransform(d.X_PF, where, "X_PF");
    validateTransform(d.X_BM, where, "X_BM");
    Body b;
    b.name = d.name;
    b.jointName = d.jointName.empty() ? d.name : d.jointName;
    if (!jointNames.emplace(b.jointName, i).second)
      throw ModelError(where + ": joint name: " + quoted(b.jointName) + " is used by another mobilizer");
    b.mobilizer = d.mobilizer;
    b.parent = d.parent == "ground" ? -1 : newIndex.at(d.parent);
    b.X_PF = d.X_PF;
    b.X_BM = d.X_BM;
    b.mass = d.mass;
    b.qOffset = m.nq_;
    b.uOffset = m.nu_;
    b.nq = mobilizerNq(d.mobilizer);
    b.nu = mobilizerNu(d.mobilizer);
    if (!d.damping.empty() && static_cast<int>(d.damping.size()) != b.nu)
      throw ModelError(where + ": damping: expected " + std::to_string(b.nu) + " values for a " +
                       mobilizerName(d.mobilizer) + " mobilizer, got " + std::to_string(d.damping.size()));
    if (!d.effortLimit.empty() && static_cast<int>(d.effortLimit.size()) != b.nu)
      throw ModelError(where + ": effort limit: expected " + std::to_string(b.nu) + " values, got " +
                       std::to_string(d.effortLimit.size()));
    for (const auto& [values, field] : {std::pair<const std::vector<double>*, const char*>{&d.armature, "armature"},
                                        {&d.stiffness, "stiffness"}, {&d.springReference, "spring reference"}})
      if (!values->empty() && static_cast<int>(values->size()) != b.nu)
        throw ModelError(where + ": " + field + ": expected " + std::to_string(b.nu) + " values, got " +
                         std::to_string(values->size()));
    for (int k = 0; k < b.nu; ++k) {
      const double a = d.armature.empty() ? 0.0 : d.armature[k];
      validateNonNegative(a, where, "armature");
      m.armature_.push_back(a);
      const double ks = d.stiffness.empty() ? 0.0 : d.stiffness[k];
      const double q0 = d.springReference.empty() ? 0.0 : d.springReference[k];
      validateNonNegative(ks, where, "stiffness");
      validateFinite(q0, where, "spring reference");
      if (ks != 0 && !mobilizerQdotIsU(d.mobilizer))
        throw ModelError(where + ": stiffness: a " + std::string(mobilizerName(d.mobilizer)) +
                         " mobilizer's qdot is not u; joint springs need coordinates whose qdot is their speed");
      m.jointStiffness_.push_back(ks);
      m.springReference_.push_back(q0);
      const double c = d.damping.empty() ? 0.0 : d.damping[k];
      validateNonNegative(c, where, "damping");
      m.damping_.push_back(c);
      double e = d.effortLimit.empty() ? std::numeric_limits<double>::infinity() : d.effortLimit[k];
      if (!(e > 0)) throw ModelError(where + ": effort limit: must be > 0");
      m.effortLimit_.push_back(e);
      m.defaultU_.push_back(0.0);
    }
    const std::vector<std::string> qa = qAxes(d.mobilizer), ua = uAxes(d.mobilizer);
    for (int k = 0; k < b.nq; ++k) {
      m.qNames_.push_back(columnName(b.jointName, qa[k]));
      m.defaultQ_.push_back(mobilizerQuaternionIndex(d.mobilizer) == 0 && k == 0 ? 1.0 : 0.0);
    }
    for (int k = 0; k < b.nu; ++k) m.uNames_.push_back(columnName(b.jointName, ua[k]));
    m.nq_ += b.nq;
    m.nu_ += b.nu;
    newIndex[d.name] = static_cast<int>(m.bodies_.size());
    m.bodies_.push_back(b);
  }
  // The elements, kind by kind in the registry's order, each by its kind's build rule
  // (host/model/elements_*.cpp).
  ElementBuild build{m, newIndex, 0, {}, {}};
#define LOCKSTEP_X(Kind, list, count, ...)                                  \
  build.speedsTaken.assign(static_cast<std::size_t>(m.nu_), 0);             \
  build.namesTaken.clear();                                                 \
  for (build.index = 0; build.index < list##_.size(); ++build.index)        \
    m.list##_.push_back(buildElement(list##_[build.index], build));
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  static const char* const kAxes[] = {"x", "y", "z"};
  static const char* const kQuaternion[] = {"w", "x", "y", "z"};
  for (const Sensor& e : m.sensors_) {
    const SensorDesc& d = e.desc;
    for (int k = 0; k < d.dimension; ++k)
      m.sensorDataNames_.push_back(d.dimension == 1 ? d.name
                                                    : d.name + "." + (d.dimension == 4 ? kQuaternion[k] : kAxes[k]));
    m.sensorDataSize_ += d.dimension;
  }

  if (m.numConstraintEquations() > 0 && (!m.planeContacts_.empty() || !m.pairContacts_.empty() || !m.softLimits_.empty()))
    throw ModelError("model: sphere contacts and MuJoCo's soft constraints (plane and pair contacts, joint limits) in one "
                     "model: not yet (use one or the other)");
  // A contact's MuJoCo body (cfrc_ext) must be one of the model's, carried by the contact's body.
  auto checkMujocoBody = [&](int index, int body, const std::string& where, const char* field) {
    if (index == -1) return;
    if (index < 0 || index >= static_cast<int>(m.mujocoBodies_.size()))
      throw ModelError(where + ": " + field + ": must be -1 or one of the model's " +
                       std::to_string(m.mujocoBodies_.size()) + " MuJoCo bodies");
    if (m.mujocoBodies_[index].body != body)
      throw ModelError(where + ": " + field + ": MuJoCo body '" + m.mujocoBodies_[index].desc.name +
                       "' is not on the contact's body");
  };
  for (const PlaneContact& e : m.planeContacts_)
    checkMujocoBody(e.desc.mujocoBody, e.body, "plane contact '" + e.desc.name + "'", "mujocoBody");
  for (const PairContact& e : m.pairContacts_) {
    checkMujocoBody(e.desc.mujocoBody1, e.body1, "pair contact '" + e.desc.name + "'", "mujocoBody1");
    checkMujocoBody(e.desc.mujocoBody2, e.body2, "pair contact '" + e.desc.name + "'", "mujocoBody2");
  }
  if (m.numConstraintEquations() > kMaxConstraintEquationsPerWorld)
    throw ModelError("model: sphere contacts: " + std::to_string(m.numConstraintEquations()) +
                     " constraint equations exceed the limit of " + std::to_string(kMaxConstraintEquationsPerWorld) +
                     " per world (3 per rolling contact, 1 otherwise)");

  // Auxiliary states: the energy dissipated by each bushing (the seed's dissipated-energy state),
  // then by joint damping and spring-dampers together.
  for (std::size_t i = 0; i < m.bushings_.size(); ++i)
    m.zNames_.push_back(m.bushings_[i].desc.name + ".dissipated");
  m.zNames_.push_back("dissipated");
  m.zNames_.push_back("actuation");  // minus the work of the actions and PD actuators (actuationState())
  // Then what each ground contact took out of the system: minus the work it did on its body.
  for (const GroundContact& e : m.groundContacts_) m.zNames_.push_back(e.desc.name + ".absorbed");
  m.nz_ = static_cast<int>(m.zNames_.size());
  return model;
}

}  // namespace lockstep
