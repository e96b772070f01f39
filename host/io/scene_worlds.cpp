// The scene reader's initial state, simulation settings and per-world values (scene_reader.h,
// docs/scene-format.md): "initial_state", "simulation" and "per_world".
#include <algorithm>
#include <array>
#include <climits>
#include <limits>

#include "scene_reader.h"
#include "lockstep/engine/quantities.h"

namespace lockstep::io {

void SceneReader::normalizeQuaternions(std::vector<double>& q, int first, int count, const JsonNode& node) const {
  for (const Body& b : scene_.model->bodies()) {
    const int k = mobilizerQuaternionIndex(b.mobilizer);
    if (k < 0 || b.qOffset + k < first || b.qOffset + k + 4 > first + count) continue;
    io::normalizeQuaternion(&q[b.qOffset + k], node, "quaternion of joint " + inQuotes(b.jointName) + ": ");
  }
}

std::pair<bool, bool> SceneReader::readState(const JsonNode& n, std::vector<double>& q, std::vector<double>& u) const {
  bool setQ = false, setU = false;
  const Model& model = *scene_.model;
  n.expectObject({"q", "u", "joints"});
  if (auto x = n.find("q")) {
    q = x->numbers(model.nq());
    normalizeQuaternions(q, 0, model.nq(), *x);
    setQ = true;
  }
  if (auto x = n.find("u")) {
    u = x->numbers(model.nu());
    setU = true;
  }
  if (auto joints = n.find("joints")) {
    for (const auto& [name, j] : joints->members()) {
      const Body& b = joint(name, j);
      j.expectObject({"q", "u"});
      if (auto x = j.find("q")) {
        const std::vector<double> v = perCoordinate(*x, b.nq, "coordinates");
        std::copy(v.begin(), v.end(), q.begin() + b.qOffset);
        normalizeQuaternions(q, b.qOffset, b.nq, *x);
        setQ = true;
      }
      if (auto x = j.find("u")) {
        const std::vector<double> v = perCoordinate(*x, b.nu, "speeds");
        std::copy(v.begin(), v.end(), u.begin() + b.uOffset);
        setU = true;
      }
    }
  }
  return {setQ, setU};
}

std::vector<double> SceneReader::perCoordinate(const JsonNode& node, int n, const char* what) const {
  if (node.isNumber() && n == 1) return {node.number()};
  if (!node.isArray()) node.fail("must be an array of " + std::to_string(n) + " numbers (the joint has " +
                                 std::to_string(n) + " " + what + ")");
  return node.numbers(n);
}

void SceneReader::readSimulation(const JsonNode& n) {
  n.expectObject({"dt", "steps", "integrator", "worlds", "record"});
  SimulationSettings& s = scene_.simulation;
  if (auto x = n.find("dt")) s.dt = x->positive();
  if (auto x = n.find("steps")) s.steps = static_cast<int>(x->integer(0, INT_MAX));
  if (auto x = n.find("worlds")) s.worlds = x->integer(1, std::int64_t(1) << 40);
  if (auto x = n.find("record")) {  // names of recordable quantities (include/lockstep/engine/quantities.h)
    if (x->elements().empty())
      x->fail("must name at least one quantity (leave \"record\" out for the default set)");
    for (const JsonNode& name : x->elements()) {
      s.record.push_back(name.string());
      if (s.record.back() != "all" && !findQuantity(s.record.back()))
        name.fail("no recordable quantity named " + inQuotes(s.record.back()) + "; `lockstep info SCENE` lists them");
    }
  }
  if (auto x = n.find("integrator")) {
    const std::string name = x->string();
    if (name == "rk4") s.integrator = Integrator::RK4;
    else if (name == "euler" || name == "implicit") s.integrator = Integrator::SemiImplicitEuler;
    else x->fail("must be \"rk4\", \"euler\" or \"implicit\" (got " + inQuotes(name) + ")");
  }
}

WorldOverride SceneReader::readOverride(const JsonNode& n) {
  const Model& model = *scene_.model;
  n.expectObject({"worlds", "gravity", "mass_properties", "damping", "initial_state", "linear_bushings",
                  "spring_dampers", "sphere_contacts", "limits", "actuators"});
  WorldOverride o;
  o.path = n.path();
  const JsonNode worlds = n.at("worlds");
  const std::int64_t maxWorld = (std::int64_t(1) << 40) - 1;
  if (worlds.isNumber()) {
    o.worlds.push_back(worlds.integer(0, maxWorld));
  } else {
    for (const JsonNode& w : worlds.elements()) o.worlds.push_back(w.integer(0, maxWorld));
    if (o.worlds.empty()) worlds.fail("must name at least one world");
  }
  if (auto g = n.find("gravity")) o.gravity = g->vec3();
  if (auto mp = n.find("mass_properties")) {
    for (const auto& [name, m] : mp->members()) {
      auto it = frames_.find(name);
      if (it == frames_.end() || name == "ground")
        m.fail("no body named " + inQuotes(name) + io::didYouMean(name, knownNames()));
      if (!it->second.isBody)
        m.fail("URDF link " + inQuotes(name) + " was welded into body " + inQuotes(it->second.body) +
               " by a fixed joint; override the mass properties of " + inQuotes(it->second.body) + " instead");
      const int body = model.bodyIndex(name);
      m.expectObject({"mass", "com", "inertia"});
      MassProperties values = model.body(body).mass;
      if (auto x = m.find("mass")) values.mass = x->number();
      if (auto x = m.find("com")) values.com = x->vec3();
      if (auto x = m.find("inertia")) values.inertia = x->inertia();
      const std::string where = m.path();  // (lambdas cannot capture structured bindings in C++17)
      check([&] { validateMassProperties(values, where, model.largestInertia()); });
      o.massProperties.emplace_back(body, values);
    }
  }
  if (auto d = n.find("damping")) {
    std::vector<double> c = model.damping();
    if (d->isArray()) {
      const std::vector<JsonNode> e = d->elements(model.nu());
      for (int i = 0; i < model.nu(); ++i) c[i] = e[i].nonNegative();
    } else if (d->isObject()) {
      for (const auto& [name, value] : d->members()) {
        const Body& b = joint(name, value);
        if (b.nu == 0) value.fail("joint " + inQuotes(name) + " has no generalized speeds to damp");
        const std::vector<double> v = perSpeed(value, b.nu, [](const JsonNode& x) { return x.nonNegative(); });
        std::copy(v.begin(), v.end(), c.begin() + b.uOffset);
      }
    } else {
      d->fail("must be an array of " + std::to_string(model.nu()) + " numbers or an object by joint name");
    }
    o.damping = c;
  }
  if (auto s = n.find("initial_state")) {
    std::vector<double> q = scene_.q0, u = scene_.u0;
    const auto [setQ, setU] = readState(*s, q, u);
    if (setQ) o.q = q;
    if (setU) o.u = u;
  }
  if (auto list = n.find("linear_bushings")) {
    for (const auto& [name, e] : list->members()) {
      e.expectObject({"stiffness", "damping", "frame_on_body1", "frame_on_body2"});
      BushingOverride b;
      b.index = element(model.bushings(), name, e, "linear bushing");
      const LinearBushingDesc& d = model.bushings()[b.index].desc;
      if (auto x = e.find("stiffness")) b.stiffness = sixNonNegative(*x);
      if (auto x = e.find("damping")) b.damping = sixNonNegative(*x);
      if (e.has("frame_on_body1") || e.has("frame_on_body2")) {
        const auto& [X_B1L, X_B2L] = bushingEnds_[b.index];
        b.frames = {e.has("frame_on_body1") ? X_B1L * e.at("frame_on_body1").pose() : d.X_B1F,
                    e.has("frame_on_body2") ? X_B2L * e.at("frame_on_body2").pose() : d.X_B2M};
      }
      o.bushings.push_back(b);
    }
  }
  if (auto list = n.find("spring_dampers")) {
    for (const auto& [name, e] : list->members()) {
      e.expectObject({"free_length", "stiffness", "damping", "p_AP", "p_BQ"});
      SpringOverride sp;
      sp.index = element(model.springs(), name, e, "spring-damper");
      const SpringDamperDesc& d = model.springs()[sp.index].desc;
      if (e.has("free_length") || e.has("stiffness") || e.has("damping")) {
        sp.parameters = {e.has("free_length") ? e.at("free_length").positive() : d.freeLength,
                         e.has("stiffness") ? e.at("stiffness").nonNegative() : d.stiffness,
                         e.has("damping") ? e.at("damping").nonNegative() : d.damping};
      }
      if (e.has("p_AP") || e.has("p_BQ")) {
        const auto& [X_AL, X_BL] = springEnds_[sp.index];
        sp.points = {e.has("p_AP") ? X_AL * e.at("p_AP").vec3() : d.p_AP,
                     e.has("p_BQ") ? X_BL * e.at("p_BQ").vec3() : d.p_BQ};
      }
      o.springs.push_back(sp);
    }
  }
  if (auto list = n.find("sphere_contacts")) {
    for (const auto& [name, e] : list->members()) {
      e.expectObject({"center_on_F", "center_on_B", "radius_on_F", "radius_on_B", "enabled"});
      ContactOverride c;
      c.index = element(model.contacts(), name, e, "sphere contact");
      const SphereContactDesc& d = model.contacts()[c.index].desc;
      if (e.has("center_on_F") || e.has("center_on_B")) {
        const auto& [X_FL, X_BL] = contactEnds_[c.index];
        c.centers = {e.has("center_on_F") ? X_FL * e.at("center_on_F").vec3() : d.centerOnF,
                     e.has("center_on_B") ? X_BL * e.at("center_on_B").vec3() : d.centerOnB};
      }
      if (e.has("radius_on_F") || e.has("radius_on_B")) {
        c.radii = {e.has("radius_on_F") ? e.at("radius_on_F").positive() : d.radiusOnF,
                   e.has("radius_on_B") ? e.at("radius_on_B").positive() : d.radiusOnB};
      }
      if (auto x = e.find("enabled")) c.enabled = x->boolean();
      o.contacts.push_back(c);
    }
  }
  if (auto list = n.find("limits")) {
    for (const auto& [name, e] : list->members()) {
      e.expectObject({"lower", "upper", "stiffness", "dissipation"});
      const int u = speedOfCoordinate(name, e);
      const JointStop* stop = model.stopOnSpeed(u);
      const double inf = std::numeric_limits<double>::infinity();
      StopOverride so{u, stop ? std::array<double, 4>{stop->desc.lower, stop->desc.upper, stop->desc.stiffness,
                                                      stop->desc.dissipation}
                              : std::array<double, 4>{-inf, inf, 0.0, 0.0}};
      if (auto x = e.find("lower")) so.values[0] = x->number();
      if (auto x = e.find("upper")) so.values[1] = x->number();
      if (auto x = e.find("stiffness")) so.values[2] = x->nonNegative();
      else if (!stop) so.values[2] = newStopValue(stopStiffness_, e, name, "stiffness");
      if (auto x = e.find("dissipation")) so.values[3] = x->nonNegative();
      else if (!stop) so.values[3] = newStopValue(stopDissipation_, e, name, "dissipation");
      const std::string where = e.path();
      check([&] { validateStopParameters(so.values[0], so.values[1], so.values[2], so.values[3], where); });
      o.stops.push_back(so);
    }
  }
  if (auto list = n.find("actuators")) {
    for (const auto& [name, e] : list->members()) {
      e.expectObject({"mode", "kp", "kd", "target", "target_velocity"});
      ActuatorOverride ao{speedOfCoordinate(name, e), std::nullopt, std::nullopt, std::nullopt};
      if (e.has("mode") || e.has("kp") || e.has("kd")) {
        const Actuator* a = model.actuatorOnSpeed(ao.u);
        std::array<double, 3> g = a ? std::array<double, 3>{double(static_cast<int>(a->desc.mode)), a->desc.kp, a->desc.kd}
                                    : std::array<double, 3>{0.0, 0.0, 0.0};
        if (auto x = e.find("mode")) {
          try {
            g[0] = static_cast<int>(parseActuatorMode(x->string()));
          } catch (const ModelError& err) {
            x->fail(err.what());
          }
        }
        if (auto x = e.find("kp")) g[1] = x->nonNegative();
        if (auto x = e.find("kd")) g[2] = x->nonNegative();
        // As in "actuators": a position actuator needs kp and kd, a velocity one kd, unless this
        // coordinate's actuator in the scene already has them (it is of a mode that uses them).
        const ActuatorMode mode = static_cast<ActuatorMode>(static_cast<int>(g[0]));
        const ActuatorMode given = a ? a->desc.mode : ActuatorMode::Torque;
        if (mode == ActuatorMode::Position && !e.has("kp") && given != ActuatorMode::Position)
          e.fail("missing key 'kp' (coordinate " + inQuotes(name) + " has no position actuator in the scene to take it from)");
        if (mode != ActuatorMode::Torque && !e.has("kd") && given == ActuatorMode::Torque)
          e.fail("missing key 'kd' (coordinate " + inQuotes(name) + " has no " + (a ? "position or velocity " : "") +
                 "actuator in the scene to take it from)");
        expectGainsUsed(e, mode);
        ao.gains = g;
      }
      if (auto x = e.find("target")) ao.targetPosition = x->number();
      if (auto x = e.find("target_velocity")) ao.targetVelocity = x->number();
      o.actuators.push_back(ao);
    }
  }
  return o;
}

}  // namespace lockstep::io
