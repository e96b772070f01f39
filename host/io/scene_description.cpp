// What a scene's model is made of, as text (`lockstep info SCENE`, Python's Model.info).
#include "lockstep/io/scene_description.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "lockstep/engine/fields.h"
#include "lockstep/engine/quantities.h"

namespace lockstep {

namespace {

// Appends printf-formatted text to out.
[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  const std::size_t at = out.size();
  out.resize(at + std::size_t(n) + 1);
  std::vsnprintf(&out[at], std::size_t(n) + 1, format, again);
  va_end(again);
  out.resize(at + std::size_t(n));
}

std::string format(const Vec3d& v) {
  std::ostringstream os;
  os << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return os.str();
}

template <class C>
std::string format(const C& values) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  return os.str() + ")";
}

std::string bodyName(const Model& m, int b) { return b < 0 ? "ground" : m.body(b).name; }

// The names of a list, separated by spaces.
std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// What the elements of a Per are called in a name pattern, and in a group heading.
const char* elementWord(Per per) {
  switch (per) {
    case Per::World: return "world";
    case Per::Coordinate: return "coordinate";
    case Per::Speed: return "speed";
    case Per::Aux: return "auxiliary state";
    case Per::Body: return "body";
    case Per::Bushing: return "bushing";
    case Per::Spring: return "spring-damper";
    case Per::Contact: return "sphere contact";
    case Per::Equation: return "constraint equation";
    case Per::Ground: return "ground contact";
    case Per::Sensor: return "sensor value";
  }
  return "";
}

// The public names of a field as one pattern: prefix.<element>.{part,part} ("body.<body>.{x,y,z}"),
// with the parts' common "head." written once ("bushing.<bushing>.X_FM.{r00,...,z}").
std::string namePattern(const FieldInfo& f) {
  std::string n = f.prefix;
  static const char* const kPlaceholder[] = {"", "coordinate", "speed", "z", "body", "bushing", "spring",
                                             "contact", "equation", "ground", "sensor"};  // by Per
  static_assert(sizeof kPlaceholder / sizeof kPlaceholder[0] == static_cast<int>(Per::Sensor) + 1);
  if (f.per != Per::World) n += std::string(".<") + kPlaceholder[static_cast<int>(f.per)] + ">";
  if (f.parts.empty()) return n;
  if (f.parts.size() == 1) return n + "." + f.parts[0];
  std::string head = f.parts[0].substr(0, f.parts[0].find('.') + 1);
  for (const std::string& p : f.parts)
    if (p.compare(0, head.size(), head) != 0) head.clear();
  n += "." + head + "{";
  for (std::size_t k = 0; k < f.parts.size(); ++k) n += (k ? "," : "") + f.parts[k].substr(head.size());
  return n + "}";
}

// Fields grouped by what they are counted per, each group headed by its elements' names.
void appendNames(std::string& out, const Model& m, const std::vector<const FieldInfo*>& fields, bool withName) {
  for (Per per : {Per::World, Per::Coordinate, Per::Speed, Per::Aux, Per::Body, Per::Bushing, Per::Spring,
                  Per::Contact, Per::Equation, Per::Ground, Per::Sensor}) {
    std::vector<const FieldInfo*> group;
    for (const FieldInfo* f : fields)
      if (f->per == per) group.push_back(f);
    const std::vector<std::string> elements = elementNames(m, per);
    if (group.empty() || (per != Per::World && elements.empty())) continue;
    if (per == Per::World) appendf(out, "  per world\n");
    else appendf(out, "  per %s: %s\n", elementWord(per), join(elements).c_str());
    for (const FieldInfo* f : group) {
      // The description after the pattern, or on a line of its own under a long pattern.
      const std::string pattern = namePattern(*f);
      std::string head = withName ? f->name : "";
      if (withName) head += std::string(std::max<std::size_t>(1, 29 - std::min<std::size_t>(29, head.size())), ' ');
      head += pattern;
      if (pattern.size() > 48) appendf(out, "    %s\n          %s\n", head.c_str(), f->doc);
      else appendf(out, "    %-*s %s\n", withName ? 77 : 48, head.c_str(), f->doc);
    }
  }
}

// Every name `simulate --record` takes, and every per-world parameter's public name.
void appendRecordableNames(std::string& out, const Model& m) {
  std::vector<const FieldInfo*> quantities, parameters;
  for (const Quantity& q : recordableQuantities()) quantities.push_back(&q.info);
  for (const FieldInfo& f : parameterFields()) parameters.push_back(&f);
  appendf(out, "recordable quantities (simulate --out FILE --record NAME,...; all: every one), their columns, what they are\n");
  appendNames(out, m, quantities, true);
  appendf(out, "per-world parameters (public names, as in study files)\n");
  appendNames(out, m, parameters, false);
}

}  // namespace

std::string describeScene(const Scene& scene) {
  std::string out;
  const Model& m = *scene.model;

  appendf(out, "scene         %s (%s)\n", scene.name.c_str(), scene.source.c_str());
  if (!scene.description.empty()) appendf(out, "description   %s\n", scene.description.c_str());
  appendf(out, "gravity       %s m/s^2\n", format(m.gravity()).c_str());
  appendf(out, "total mass    %g kg\n", m.totalMass());
  appendf(out, "bodies        %d\n", m.numBodies());
  appendf(out, "  %-24s %-24s %-12s %-24s %s\n", "name", "parent", "mobilizer", "joint", "mass [kg]");
  for (int b = 0; b < m.numBodies(); ++b) {
    const Body& body = m.body(b);
    appendf(out, "  %-24s %-24s %-12s %-24s %g\n", body.name.c_str(), bodyName(m, body.parent).c_str(),
                mobilizerName(body.mobilizer), body.jointName.c_str(), body.mass.mass);
  }
  appendf(out, "nq %-10d %s\n", m.nq(), join(m.qNames()).c_str());
  appendf(out, "nu %-10d %s\n", m.nu(), join(m.uNames()).c_str());
  appendf(out, "nz %-10d %s\n", m.nz(), join(m.zNames()).c_str());

  appendf(out, "force elements %zu\n", m.bushings().size() + m.springs().size());
  for (const LinearBushing& e : m.bushings()) {
    appendf(out, "  linear bushing '%s': %s -> %s, stiffness %s, damping %s\n", e.desc.name.c_str(),
                bodyName(m, e.body1).c_str(), bodyName(m, e.body2).c_str(), format(e.desc.stiffness).c_str(),
                format(e.desc.damping).c_str());
  }
  for (const SpringDamper& e : m.springs()) {
    appendf(out, "  spring-damper '%s': %s point %s -> %s point %s, free length %g, stiffness %g, damping %g\n",
                e.desc.name.c_str(), bodyName(m, e.bodyA).c_str(), format(e.desc.p_AP).c_str(),
                bodyName(m, e.bodyB).c_str(), format(e.desc.p_BQ).c_str(), e.desc.freeLength, e.desc.stiffness,
                e.desc.damping);
  }
  appendf(out, "ground contacts %zu (spheres on bodies against half-spaces on Ground; contacts between moving "
              "bodies are not modelled)\n", m.groundContacts().size());
  for (const GroundContact& c : m.groundContacts()) {
    const GroundMaterial& p = c.desc.material;
    appendf(out, "  ground contact '%s': %s sphere at %s radius %g; half-space normal %s through %s; E %g, c %g, "
                "us %g, ud %g, uv %g, vt %g, cf %g, bd %g, bv %g\n",
                c.desc.name.c_str(), bodyName(m, c.body).c_str(), format(c.desc.center).c_str(), c.desc.radius,
                format(c.desc.planeNormal).c_str(), format(c.desc.planePoint).c_str(), p.stiffness, p.dissipation,
                p.staticFriction, p.dynamicFriction, p.viscousFriction, p.transitionVelocity, p.cf, p.bd, p.bv);
  }
  appendf(out, "joint stops   %zu\n", m.stops().size());
  for (const JointStop& e : m.stops())
    appendf(out, "  stop on %-20s lower %g, upper %g, stiffness %g, dissipation %g\n", e.desc.coordinate.c_str(),
                e.desc.lower, e.desc.upper, e.desc.stiffness, e.desc.dissipation);
  appendf(out, "actuators     %zu (other speeds: torque actions only)\n", m.actuators().size());
  for (const Actuator& e : m.actuators()) {
    char target[160] = "";
    for (const TargetSpec& t : scene.targets) {
      if (t.u != e.u) continue;
      if (t.uniform)
        std::snprintf(target, sizeof target, ", target uniform in [%g, %g] per world (seed %llu)", t.uniform->first,
                      t.uniform->second, static_cast<unsigned long long>(t.seed));
      else
        std::snprintf(target, sizeof target, ", target %g", t.position);
      if (t.velocity != 0) std::snprintf(target + std::strlen(target), sizeof target - std::strlen(target),
                                         ", velocity target %g", t.velocity);
    }
    char control[160] = "";
    if (e.desc.gear != 1 || std::isfinite(e.desc.controlLower) || std::isfinite(e.desc.controlUpper))
      std::snprintf(control, sizeof control, ", action a control in [%g, %g] times gear %g", e.desc.controlLower,
                    e.desc.controlUpper, e.desc.gear);
    appendf(out, "  actuator on %-16s %s, kp %g, kd %g, effort limit %g%s%s\n", e.desc.coordinate.c_str(),
                actuatorModeName(e.desc.mode), e.desc.kp, e.desc.kd, m.effortLimit()[e.u], control, target);
  }
  appendf(out, "constraints   %zu (%d equations)\n", m.contacts().size(), m.numConstraintEquations());
  for (const SphereContact& c : m.contacts()) {
    appendf(out, "  sphere contact '%s': %s sphere at %s radius %g, %s sphere at %s radius %g, %s, %s\n",
                c.desc.name.c_str(), bodyName(m, c.bodyF).c_str(), format(c.desc.centerOnF).c_str(), c.desc.radiusOnF,
                bodyName(m, c.bodyB).c_str(), format(c.desc.centerOnB).c_str(), c.desc.radiusOnB,
                c.desc.enforceRolling ? "rolling" : "no rolling", c.desc.enabledByDefault ? "enabled" : "disabled");
  }

  if (!m.sites().empty()) {
    appendf(out, "sites         %zu\n", m.sites().size());
    for (const Site& site : m.sites())
      appendf(out, "  site '%s' on %s at %s\n", site.desc.name.c_str(), bodyName(m, site.body).c_str(),
                  format(site.desc.X_BS.p).c_str());
  }
  if (!m.sensors().empty()) {
    appendf(out, "sensors       %zu (%d values: record them as \"sensors\")\n", m.sensors().size(), m.sensorDataSize());
    for (const Sensor& s : m.sensors())
      appendf(out, "  sensor '%s': %s of %s '%s'%s\n", s.desc.name.c_str(), s.desc.type.c_str(), s.desc.objectType.c_str(),
                  s.desc.object.c_str(), s.desc.dimension ? "" : " (not computed by Lockstep)");
  }

  appendf(out, "parameters\n");
  for (int b = 0; b < m.numBodies(); ++b) {
    const Body& body = m.body(b);
    std::vector<double> damping, limits, armature, stiffness, reference;
    for (int k = 0; k < body.nu; ++k) {
      damping.push_back(m.damping()[body.uOffset + k]);
      limits.push_back(m.effortLimit()[body.uOffset + k]);
      armature.push_back(m.armature()[body.uOffset + k]);
      stiffness.push_back(m.jointStiffness()[body.uOffset + k]);
      reference.push_back(m.springReference()[body.uOffset + k]);
    }
    auto nonzero = [](const std::vector<double>& v) { return std::any_of(v.begin(), v.end(), [](double x) { return x != 0; }); };
    const bool limited = std::any_of(limits.begin(), limits.end(), [](double e) { return std::isfinite(e); });
    if (nonzero(damping) || limited || nonzero(armature) || nonzero(stiffness)) {
      std::string extra;
      if (nonzero(armature)) extra += ", armature " + format(armature);
      if (nonzero(stiffness)) extra += ", spring stiffness " + format(stiffness) + " about " + format(reference);
      appendf(out, "  joint %-20s damping %s, effort limit %s%s\n", body.jointName.c_str(), format(damping).c_str(),
                  format(limits).c_str(), extra.c_str());
    }
  }
  const SimulationSettings& s = scene.simulation;
  appendf(out, "  simulation defaults: dt %g s, %d steps, %s, %lld worlds\n", s.dt, s.steps,
              s.integrator == Integrator::RK4 ? "rk4" : "euler", static_cast<long long>(s.worlds));
  for (const WorldOverride& w : scene.perWorld) {
    std::string what;
    if (w.gravity) what += " gravity";
    if (!w.massProperties.empty()) what += " mass-properties";
    if (w.damping) what += " damping";
    if (w.q) what += " q";
    if (w.u) what += " u";
    for (const BushingOverride& b : w.bushings) what += " bushing '" + m.bushings()[b.index].desc.name + "'";
    for (const SpringOverride& sp : w.springs) what += " spring-damper '" + m.springs()[sp.index].desc.name + "'";
    for (const ContactOverride& c : w.contacts) what += " sphere contact '" + m.contacts()[c.index].desc.name + "'";
    for (const StopOverride& st : w.stops) what += " stop '" + m.uNames()[st.u] + "'";
    for (const ActuatorOverride& a : w.actuators) what += " actuator '" + m.uNames()[a.u] + "'";
    appendf(out, "  %s: worlds %s:%s\n", w.path.c_str(), format(w.worlds).c_str(), what.c_str());
  }
  appendRecordableNames(out, m);
  return out;
}


}  // namespace lockstep
