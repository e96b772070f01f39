#include "lockstep/engine/fields.h"
#include "lockstep/physics/soft_constraints.h"

#include <sstream>
#include <type_traits>
#include <unordered_map>

namespace lockstep {

namespace {

std::vector<std::string> splitWords(const char* s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

template <class T>
std::vector<FieldInfo> listWorldFields() {
  std::vector<FieldInfo> out;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  out.push_back({#name, per, role, prefix, splitWords(parts), doc, std::is_same<type, std::int32_t>::value});
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return out;
}

template <class T>
std::vector<FieldInfo> listParameterFields() {
  std::vector<FieldInfo> out;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  out.push_back({#name, per, role, prefix, splitWords(parts), doc, false});
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return out;
}

const char* const kAxes[3] = {"x", "y", "z"};

}  // namespace

const std::vector<FieldInfo>& worldFields() {
  static const std::vector<FieldInfo> fields = listWorldFields<double>();
  return fields;
}

const std::vector<FieldInfo>& parameterFields() {
  static const std::vector<FieldInfo> fields = listParameterFields<double>();
  return fields;
}

const FieldInfo* findField(const std::string& name) {
  for (const auto* list : {&worldFields(), &parameterFields()})
    for (const FieldInfo& f : *list)
      if (name == f.name) return &f;
  return nullptr;
}

Sizes sizesOf(const Model& m) {
  Sizes s;
  s.nb = m.numBodies();
  s.nq = m.nq();
  s.nu = m.nu();
  s.nz = m.nz();
  for (const Body& b : m.bodies()) s.nd += b.nu * b.nu;
#define LOCKSTEP_X(Kind, list, count, ...) s.count = static_cast<std::int32_t>(m.list().size());
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  s.nc = m.numConstraintEquations();
  for (const PlaneContact& e : m.planeContacts()) {
    s.nSoftPoints += softPointSlots(e.desc.shape);
    s.nSoftRows += softPointSlots(e.desc.shape) * softRowsPerPoint(e.desc.condim, e.desc.elliptic);
  }
  for (const PairContact& e : m.pairContacts()) {
    s.nSoftPoints += softPairSlots(e.desc.shape1, e.desc.shape2);
    s.nSoftRows += softPairSlots(e.desc.shape1, e.desc.shape2) * softRowsPerPoint(e.desc.condim, e.desc.elliptic);
  }
  s.nSoftRows += 2 * static_cast<std::int32_t>(m.softLimits().size());
  for (const PlaneContact& e : m.planeContacts()) s.softCompliant |= e.desc.law == kLawCompliant ? 1 : 0;
  for (const PairContact& e : m.pairContacts()) s.softCompliant |= e.desc.law == kLawCompliant ? 1 : 0;
  for (const SoftLimit& e : m.softLimits()) s.softCompliant |= e.desc.law == kLawCompliant ? 1 : 0;
  s.mujocoStepping = m.mujocoStepping() || s.nSoftRows > 0 ? 1 : 0;
  for (const MujocoJoint& j : m.mujocoJoints()) {
    const int type = j.desc.type;
    s.nMujocoQpos += type == kMujocoFree ? 7 : type == kMujocoBall ? 4 : 1;
    s.nMujocoDof += type == kMujocoFree ? 6 : type == kMujocoBall ? 3 : 1;
  }
  s.nSensorData = m.sensorDataSize();
  for (int i = 0; i < m.nu(); ++i) {
    s.nArmatures += m.armature()[i] != 0;
    s.nJointSprings += m.jointStiffness()[i] != 0;
  }
  return s;
}

std::vector<std::string> elementNames(const Model& m, Per per) {
  std::vector<std::string> out;
  switch (per) {
    case Per::World: return {""};
    case Per::Coordinate: return m.qNames();
    case Per::Speed: return m.uNames();
    case Per::Aux: return m.zNames();
    case Per::Body:
      for (const Body& b : m.bodies()) out.push_back(b.name);
      return out;
#define LOCKSTEP_X(Kind, list, count, per, ...)      \
  case Per::per:                                      \
    for (const Kind& e : m.list()) out.push_back(e.desc.name); \
    return out;
      LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
    case Per::Equation:
      // The equations of each contact in order: x, y, z when rolling is enforced, z otherwise.
      for (const auto& e : m.contacts()) {
        if (e.desc.enforceRolling) {
          for (const char* axis : kAxes) out.push_back(e.desc.name + "." + axis);
        } else {
          out.push_back(e.desc.name + ".z");
        }
      }
      return out;
    case Per::SoftPoint:
      for (const PlaneContact& e : m.planeContacts())
        for (int k = 0; k < softPointSlots(e.desc.shape); ++k) out.push_back(e.desc.name + "." + std::to_string(k));
      for (const PairContact& e : m.pairContacts())
        for (int k = 0; k < softPairSlots(e.desc.shape1, e.desc.shape2); ++k)
          out.push_back(e.desc.name + "." + std::to_string(k));
      return out;
    case Per::SensorValue: return m.sensorDataNames();
    case Per::MujocoQpos:
    case Per::MujocoDof:
      // MuJoCo's order: a free joint's position then quaternion (qpos), linear then angular velocity
      // (qvel); a ball's quaternion and angular velocity; a hinge's or slide's one value.
      for (const MujocoJoint& j : m.mujocoJoints()) {
        const bool qpos = per == Per::MujocoQpos;
        std::vector<const char*> axes;
        switch (j.desc.type) {
          case kMujocoFree:
            axes = qpos ? std::vector<const char*>{"x", "y", "z", "qw", "qx", "qy", "qz"}
                        : std::vector<const char*>{"vx", "vy", "vz", "wx", "wy", "wz"};
            break;
          case kMujocoBall:
            axes = qpos ? std::vector<const char*>{"qw", "qx", "qy", "qz"} : std::vector<const char*>{"wx", "wy", "wz"};
            break;
          default: out.push_back(j.desc.name); continue;
        }
        for (const char* a : axes) out.push_back(j.desc.name + "." + a);
      }
      return out;
  }
  return out;
}

const char* elementWord(Per per) {
  switch (per) {
    case Per::World: return "world";
    case Per::Coordinate: return "coordinate";
    case Per::Speed: return "generalized speed";
    case Per::Aux: return "auxiliary state";
    case Per::Body: return "body";
#define LOCKSTEP_X(Kind, list, count, per, array, topology, word, placeholder) \
  case Per::per: return word;
      LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
    case Per::Equation: return "constraint equation";
    case Per::SoftPoint: return "contact point";
    case Per::SensorValue: return "sensor value";
    case Per::MujocoQpos: return "MuJoCo qpos";
    case Per::MujocoDof: return "MuJoCo degree of freedom";
  }
  return "";
}

const char* elementPlaceholder(Per per) {
  switch (per) {
    case Per::World: return "";
    case Per::Coordinate: return "coordinate";
    case Per::Speed: return "speed";
    case Per::Aux: return "z";
    case Per::Body: return "body";
#define LOCKSTEP_X(Kind, list, count, per, array, topology, word, placeholder) \
  case Per::per: return placeholder;
      LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
    case Per::Equation: return "equation";
    case Per::SoftPoint: return "point";
    case Per::SensorValue: return "sensor";
    case Per::MujocoQpos: return "qpos";
    case Per::MujocoDof: return "dof";
  }
  return "";
}

std::string elementsWord(Per per) {
  switch (per) {
    case Per::World: return "worlds";
    case Per::Coordinate: return "generalized coordinates";
    case Per::Equation: return "constraint equations (enabled sphere contacts)";
    case Per::MujocoQpos: return "MuJoCo joints (no qpos)";
    case Per::MujocoDof: return "MuJoCo joints (no qvel)";
    default: {
      const std::string word = elementWord(per);
      return word.back() == 'y' ? word.substr(0, word.size() - 1) + "ies" : word + "s";
    }
  }
}

std::vector<Per> everyPer() {
  std::vector<Per> out;
  for (int p = 0; p <= static_cast<int>(Per::MujocoDof); ++p) out.push_back(static_cast<Per>(p));
  return out;
}

namespace {
std::string joinName(const FieldInfo& f, const std::string& element, std::int64_t part) {
  std::string n = f.prefix;
  if (!element.empty()) n += "." + element;
  if (!f.parts.empty()) n += "." + f.parts[part];
  return n;
}
}  // namespace

std::string publicName(const Model& m, const FieldInfo& f, std::int64_t component) {
  const std::vector<std::string> elements = elementNames(m, f.per);
  return joinName(f, elements.at(component / f.width()), component % f.width());
}

std::vector<std::string> publicNames(const Model& m, const FieldInfo& f) {
  std::vector<std::string> out;
  for (const std::string& e : elementNames(m, f.per))
    for (int k = 0; k < f.width(); ++k) out.push_back(joinName(f, e, k));
  return out;
}

std::optional<FieldComponent> findPublicName(const Model& m, const std::vector<FieldInfo>& fields,
                                             const std::string& name) {
  for (const FieldInfo& f : fields) {
    if (name.compare(0, std::char_traits<char>::length(f.prefix), f.prefix) != 0) continue;
    const std::vector<std::string> names = publicNames(m, f);
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == name) return FieldComponent{&f, static_cast<std::int64_t>(c)};
  }
  return std::nullopt;
}

}  // namespace lockstep
