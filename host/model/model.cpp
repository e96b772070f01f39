#include "lockstep/engine/model.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "lockstep/physics/force_elements.h"

namespace lockstep {

namespace {

const char* const kMobilizerNames[kMobilizerTypeCount] = {"weld", "pin", "slider", "universal", "cylinder",
                                                         "planar", "gimbal", "ball", "translation", "free"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

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

void validateBushingParameters(const std::array<double, 6>& stiffness, const std::array<double, 6>& damping,
                               const std::string& where) {
  for (int i = 0; i < 6; ++i) {
    validateNonNegative(stiffness[i], where, "stiffness[" + std::to_string(i) + "]");
    validateNonNegative(damping[i], where, "damping[" + std::to_string(i) + "]");
  }
}

void validateSpringParameters(double freeLength, double stiffness, double damping, const std::string& where) {
  validateFinite(freeLength, where, "free length");
  if (!(freeLength > 0)) {
    std::ostringstream os;
    os << where << ": free length: must be strictly positive (got " << freeLength << ")";
    throw ModelError(os.str());
  }
  validateNonNegative(stiffness, where, "stiffness");
  validateNonNegative(damping, where, "damping");
}

void validateSphereRadii(double radiusOnF, double radiusOnB, const std::string& where) {
  for (const auto& [r, field] : {std::pair<double, const char*>{radiusOnF, "radius on F"}, {radiusOnB, "radius on B"}}) {
    validateFinite(r, where, field);
    if (!(r > 0)) {
      std::ostringstream os;
      os << where << ": " << field << ": must be > 0 (got " << r << ")";
      throw ModelError(os.str());
    }
  }
}

void validateGroundSphere(const Vec3d& center, double radius, const std::string& where) {
  for (int k = 0; k < 3; ++k) validateFinite(center[k], where, "center");
  validateFinite(radius, where, "radius");
  if (!(radius > 0)) {
    std::ostringstream os;
    os << where << ": radius: must be > 0 (got " << radius << ")";
    throw ModelError(os.str());
  }
}

void validateGroundPlane(const Vec3d& normal, const Vec3d& point, const std::string& where) {
  for (int k = 0; k < 3; ++k) {
    validateFinite(normal[k], where, "normal");
    validateFinite(point[k], where, "point");
  }
  // The largest component, not |n|^2, which under- or overflows for components near 1e-170 or 1e155.
  const double largest = std::max({std::abs(normal[0]), std::abs(normal[1]), std::abs(normal[2])});
  if (!(largest > 0)) throw ModelError(where + ": normal: must have a nonzero length");
}

void validateGroundMaterial(const GroundMaterial& p, const std::string& where) {
  validateNonNegative(p.stiffness, where, "stiffness");
  validateNonNegative(p.dissipation, where, "dissipation");
  validateNonNegative(p.staticFriction, where, "static friction");
  validateNonNegative(p.dynamicFriction, where, "dynamic friction");
  validateNonNegative(p.viscousFriction, where, "viscous friction");
  if (p.staticFriction < p.dynamicFriction) {
    std::ostringstream os;
    os << where << ": static friction: must be >= the dynamic friction (got " << p.staticFriction << " < "
       << p.dynamicFriction << ")";
    throw ModelError(os.str());
  }
  validateNonNegative(p.bd, where, "bd");
  validateNonNegative(p.bv, where, "bv");
  for (const auto& [x, field] : {std::pair<double, const char*>{p.transitionVelocity, "transition velocity"}, {p.cf, "cf"}}) {
    validateFinite(x, where, field);
    if (!(x > 0)) {
      std::ostringstream os;
      os << where << ": " << field << ": must be > 0 (got " << x << ")";
      throw ModelError(os.str());
    }
  }
}

void validateStopParameters(double lower, double upper, double stiffness, double dissipation, const std::string& where) {
  if (std::isnan(lower)) throw ModelError(where + ": lower: must be a number (-infinity: no lower stop)");
  if (std::isnan(upper)) throw ModelError(where + ": upper: must be a number (infinity: no upper stop)");
  if (lower > upper) {
    std::ostringstream os;
    os << where << ": lower: must be <= upper (got " << lower << " > " << upper << ")";
    throw ModelError(os.str());
  }
  validateNonNegative(stiffness, where, "stiffness");
  validateNonNegative(dissipation, where, "dissipation");
}

void validateActuatorParameters(double mode, double kp, double kd, const std::string& where) {
  if (!(mode == 0 || mode == 1 || mode == 2))
    throw ModelError(where + ": mode: must be 0 (torque), 1 (position) or 2 (velocity)");
  validateNonNegative(kp, where, "kp");
  validateNonNegative(kd, where, "kd");
}

void validateActuatorControl(double gear, double controlLower, double controlUpper, const std::string& where) {
  validateFinite(gear, where, "gear");
  if (std::isnan(controlLower)) throw ModelError(where + ": control lower: must be a number (-infinity: unbounded)");
  if (std::isnan(controlUpper)) throw ModelError(where + ": control upper: must be a number (infinity: unbounded)");
  if (controlLower > controlUpper) {
    std::ostringstream os;
    os << where << ": control lower: must be <= control upper (got " << controlLower << " > " << controlUpper << ")";
    throw ModelError(os.str());
  }
}

namespace {
const char* const kActuatorModeNames[3] = {"torque", "position", "velocity"};
}  // namespace

const char* actuatorModeName(ActuatorMode mode) { return kActuatorModeNames[static_cast<int>(mode)]; }

ActuatorMode parseActuatorMode(const std::string& s) {
  for (int i = 0; i < 3; ++i)
    if (s == kActuatorModeNames[i]) return static_cast<ActuatorMode>(i);
  throw ModelError("unknown actuator mode " + quoted(s) + " (expected one of: torque, position, velocity)");
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

ModelBuilder& ModelBuilder::addBody(const BodyDesc& body) {
  bodies_.push_back(body);
  return *this;
}

ModelBuilder& ModelBuilder::addLinearBushing(const LinearBushingDesc& bushing) {
  bushings_.push_back(bushing);
  return *this;
}

ModelBuilder& ModelBuilder::addSpringDamper(const SpringDamperDesc& spring) {
  springs_.push_back(spring);
  return *this;
}

ModelBuilder& ModelBuilder::addSphereContact(const SphereContactDesc& contact) {
  contacts_.push_back(contact);
  return *this;
}

ModelBuilder& ModelBuilder::addGroundContact(const GroundContactDesc& contact) {
  groundContacts_.push_back(contact);
  return *this;
}

ModelBuilder& ModelBuilder::addJointStop(const JointStopDesc& stop) {
  stops_.push_back(stop);
  return *this;
}

ModelBuilder& ModelBuilder::addActuator(const ActuatorDesc& actuator) {
  actuators_.push_back(actuator);
  return *this;
}

ModelBuilder& ModelBuilder::addSite(const SiteDesc& site) {
  sites_.push_back(site);
  return *this;
}

ModelBuilder& ModelBuilder::addSensor(const SensorDesc& sensor) {
  sensors_.push_back(sensor);
  return *this;
}

ModelBuilder ModelBuilder::fromModel(const Model& m) {
  ModelBuilder mb;
  mb.setGravity(m.gravity());
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
  for (const LinearBushing& e : m.bushings()) mb.addLinearBushing(e.desc);
  for (const SpringDamper& e : m.springs()) mb.addSpringDamper(e.desc);
  for (const SphereContact& e : m.contacts()) mb.addSphereContact(e.desc);
  for (const GroundContact& e : m.groundContacts()) mb.addGroundContact(e.desc);
  for (const JointStop& e : m.stops()) mb.addJointStop(e.desc);
  for (const Actuator& e : m.actuators()) mb.addActuator(e.desc);
  for (const Site& e : m.sites()) mb.addSite(e.desc);
  for (const Sensor& e : m.sensors()) mb.addSensor(e.desc);
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
  // Force elements and constraints: bodies resolved, parameters checked.
  auto elementName = [](const char* kind, const std::string& name, std::size_t) {
    return std::string(kind) + " " + quoted(name);
  };
  // Unnamed elements are called bushing0, spring0, contact0, ... in the order they were added.
  auto named = [](auto desc, const char* prefix, std::size_t i) {
    if (desc.name.empty()) desc.name = prefix + std::to_string(i);
    return desc;
  };
  auto resolve = [&](const std::string& body, const std::string& where, const char* field) {
    if (body == "ground") return -1;
    auto it = newIndex.find(body);
    if (it == newIndex.end()) throw ModelError(where + ": " + field + ": no body named " + quoted(body));
    return it->second;
  };
  for (std::size_t i = 0; i < bushings_.size(); ++i) {
    const LinearBushingDesc d = named(bushings_[i], "bushing", i);
    const std::string where = elementName("bushing", d.name, i);
    LinearBushing e{d, resolve(d.body1, where, "body1"), resolve(d.body2, where, "body2")};
    if (e.body1 == e.body2) throw ModelError(where + ": body2: must differ from body1 (" + quoted(d.body1) + ")");
    validateTransform(d.X_B1F, where, "frame on body1");
    validateTransform(d.X_B2M, where, "frame on body2");
    validateBushingParameters(d.stiffness, d.damping, where);
    m.bushings_.push_back(e);
  }
  for (std::size_t i = 0; i < springs_.size(); ++i) {
    const SpringDamperDesc d = named(springs_[i], "spring", i);
    const std::string where = elementName("spring-damper", d.name, i);
    SpringDamper e{d, resolve(d.bodyA, where, "bodyA"), resolve(d.bodyB, where, "bodyB")};
    if (e.bodyA == e.bodyB) throw ModelError(where + ": bodyB: must differ from bodyA (" + quoted(d.bodyA) + ")");
    for (int k = 0; k < 3; ++k) {
      validateFinite(d.p_AP[k], where, "p_AP");
      validateFinite(d.p_BQ[k], where, "p_BQ");
    }
    validateSpringParameters(d.freeLength, d.stiffness, d.damping, where);
    m.springs_.push_back(e);
  }
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const SphereContactDesc d = named(contacts_[i], "contact", i);
    const std::string where = elementName("sphere contact", d.name, i);
    SphereContact e{d, resolve(d.bodyF, where, "bodyF"), resolve(d.bodyB, where, "bodyB")};
    if (e.bodyF == e.bodyB) throw ModelError(where + ": bodyB: must differ from bodyF (" + quoted(d.bodyF) + ")");
    for (int k = 0; k < 3; ++k) {
      validateFinite(d.centerOnF[k], where, "center on F");
      validateFinite(d.centerOnB[k], where, "center on B");
    }
    validateSphereRadii(d.radiusOnF, d.radiusOnB, where);
    m.contacts_.push_back(e);
  }

  for (std::size_t i = 0; i < groundContacts_.size(); ++i) {
    const GroundContactDesc d = named(groundContacts_[i], "ground", i);
    const std::string where = elementName("ground contact", d.name, i);
    GroundContact e{d, resolve(d.body, where, "body")};
    if (e.body < 0) throw ModelError(where + ": body: must be a body, not ground");
    validateGroundSphere(d.center, d.radius, where);
    validateGroundPlane(d.planeNormal, d.planePoint, where);
    validateGroundMaterial(d.material, where);
    // Stored unit, so that a float batch sees the same direction as a double one (a component of
    // 1e155 has no float).
    e.desc.planeNormal = unitVector(d.planeNormal);
    m.groundContacts_.push_back(e);
  }

  // Joint stops and actuators: on coordinates whose qdot is their speed u (Simbody's
  // MobilityLinearStop supports no others), at most one of each per coordinate.
  auto coordinateOf = [&](const std::string& name, const std::string& where, int* q, int* u) {
    const auto it = std::find(m.qNames_.begin(), m.qNames_.end(), name);
    if (it == m.qNames_.end()) throw ModelError(where + ": coordinate: no coordinate named " + quoted(name));
    *q = static_cast<int>(it - m.qNames_.begin());
    for (const Body& b : m.bodies_) {
      if (*q < b.qOffset || *q >= b.qOffset + b.nq) continue;
      if (!mobilizerQdotIsU(b.mobilizer))
        throw ModelError(where + ": coordinate: " + quoted(name) + " belongs to a " + mobilizerName(b.mobilizer) +
                         " mobilizer, whose qdot is not u; joint stops and PD actuators (as Simbody's " +
                         "MobilityLinearStop) need a coordinate whose qdot is its speed");
      *u = b.uOffset + (*q - b.qOffset);
    }
  };
  std::vector<char> stopped(m.nu_, 0), actuated(m.nu_, 0);
  for (const JointStopDesc& d : stops_) {
    const std::string where = "joint stop " + quoted(d.coordinate);
    JointStop e{d, 0, 0};
    coordinateOf(d.coordinate, where, &e.q, &e.u);
    if (stopped[e.u]++) throw ModelError(where + ": coordinate: has two joint stops");
    validateStopParameters(d.lower, d.upper, d.stiffness, d.dissipation, where);
    m.stops_.push_back(e);
  }
  for (const ActuatorDesc& d : actuators_) {
    const std::string where = "actuator " + quoted(d.coordinate);
    Actuator e{d, 0, 0};
    coordinateOf(d.coordinate, where, &e.q, &e.u);
    if (actuated[e.u]++) throw ModelError(where + ": coordinate: has two actuators");
    validateActuatorParameters(static_cast<int>(d.mode), d.kp, d.kd, where);
    validateActuatorControl(d.gear, d.controlLower, d.controlUpper, where);
    m.actuators_.push_back(e);
  }

  std::set<std::string> siteNames;
  for (const SiteDesc& d : sites_) {
    const std::string where = "site " + quoted(d.name);
    if (d.name.empty()) throw ModelError("site: name: must not be empty");
    if (!siteNames.insert(d.name).second) throw ModelError(where + ": name: defined twice");
    if (d.body != "ground" && !newIndex.count(d.body)) throw ModelError(where + ": body: no body named " + quoted(d.body));
    validateTransform(d.X_BS, where, "X_BS");
    m.sites_.push_back({d, d.body == "ground" ? -1 : newIndex.at(d.body)});
  }
  std::set<std::string> sensorNames;
  for (const SensorDesc& d : sensors_) {
    const std::string where = "sensor " + quoted(d.name);
    if (!sensorNames.insert(d.name).second) throw ModelError(where + ": name: defined twice");
    if (d.body != "ground" && !newIndex.count(d.body)) throw ModelError(where + ": body: no body named " + quoted(d.body));
    validateTransform(d.X_BS, where, "X_BS");
    int coordinate = -1, speed = -1;
    if (!d.coordinate.empty()) {
      const auto it = std::find(m.qNames_.begin(), m.qNames_.end(), d.coordinate);
      if (it == m.qNames_.end()) throw ModelError(where + ": coordinate: no coordinate named " + quoted(d.coordinate));
      coordinate = static_cast<int>(it - m.qNames_.begin());
      for (const Body& b : m.bodies_)
        if (coordinate >= b.qOffset && coordinate < b.qOffset + b.nq && b.nq == b.nu) speed = b.uOffset + coordinate - b.qOffset;
      if (speed < 0) throw ModelError(where + ": coordinate: " + quoted(d.coordinate) + " is not the integral of a speed");
    }
    static const char* const kAxes[] = {"x", "y", "z"};
    static const char* const kQuaternion[] = {"w", "x", "y", "z"};
    for (int k = 0; k < d.dimension; ++k)
      m.sensorDataNames_.push_back(d.dimension == 1 ? d.name
                                                    : d.name + "." + (d.dimension == 4 ? kQuaternion[k] : kAxes[k]));
    m.sensors_.push_back({d, d.body == "ground" ? -1 : newIndex.at(d.body), coordinate, speed, m.sensorDataSize_});
    m.sensorDataSize_ += d.dimension;
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
