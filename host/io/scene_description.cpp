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

// What the scene adds to an element's line: an actuator's targets (the scene's, not the model's).
template <class Kind>
std::string sceneNote(const Scene&, const Kind&) {
  return "";
}
std::string sceneNote(const Scene& scene, const Actuator& e) {
  char target[160] = "";
  for (const TargetSpec& t : scene.targets) {
    if (t.u != e.u) continue;
    if (t.uniform)
      std::snprintf(target, sizeof target, ", target uniform in [%g, %g] per world (seed %llu)", t.uniform->first,
                    t.uniform->second, static_cast<unsigned long long>(t.seed));
    else
      std::snprintf(target, sizeof target, ", target %g", t.position);
    if (t.velocity != 0)
      std::snprintf(target + std::strlen(target), sizeof target - std::strlen(target), ", velocity target %g",
                    t.velocity);
  }
  return target;
}

// The public names of a field as one pattern: prefix.<element>.{part,part} ("body.<body>.{x,y,z}"),
// with the parts' common "head." written once ("bushing.<bushing>.X_FM.{r00,...,z}").
std::string namePattern(const FieldInfo& f) {
  std::string n = f.prefix;
  if (f.per != Per::World) n += std::string(".<") + elementPlaceholder(f.per) + ">";
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
  for (Per per : everyPer()) {
    std::vector<const FieldInfo*> group;
    for (const FieldInfo* f : fields)
      if (f->per == per) group.push_back(f);
    const std::vector<std::string> elements = elementNames(m, per);
    if (group.empty() || (per != Per::World && elements.empty())) continue;
    if (per == Per::World) appendf(out, "  per world\n");
    else appendf(out, "  per %s: %s\n", per == Per::Speed ? "speed" : elementWord(per), join(elements).c_str());
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

  // Each element kind under its heading (kinds next to each other with the same heading share it).
  std::vector<std::pair<InfoSection, std::vector<std::string>>> sections;
  auto add = [&](const InfoSection& section, std::vector<std::string> lines) {
    if (!sections.empty() && sections.back().first.heading == section.heading) {
      for (std::string& l : lines) sections.back().second.push_back(std::move(l));
      return;
    }
    sections.push_back({section, std::move(lines)});
  };
#define LOCKSTEP_X(Kind, list, count, ...)                                       \
  {                                                                            \
    std::vector<std::string> lines;                                            \
    for (const Kind& e : m.list()) lines.push_back(describeElement(m, e) + sceneNote(scene, e)); \
    add(infoSection(m, m.list()), std::move(lines));                           \
  }
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  for (const auto& [section, lines] : sections) {
    if (lines.empty() && !section.showEmpty) continue;
    appendf(out, "%-13s %zu%s\n", section.heading.c_str(), lines.size(), section.note.c_str());
    for (const std::string& line : lines) appendf(out, "  %s\n", line.c_str());
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
