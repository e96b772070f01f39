// The scene reader's joint stops and actuators (scene_reader.h, docs/scene-format.md): "limits",
// "actuators" and the actuators' targets, and the coordinates that per-world values name.
#include <cmath>
#include <limits>
#include <map>

#include "scene_reader.h"

namespace lockstep::io {

std::string SceneReader::coordinateName(const JsonNode& n) const {
  const std::string name = n.string();
  if (name.empty()) n.fail("must not be empty");
  return name;
}

void SceneReader::readLimits(const JsonNode& n) {
  n.expectObject({"from_urdf", "stiffness", "dissipation", "stops"});
  const bool fromUrdf = n.has("from_urdf") ? n.at("from_urdf").boolean() : true;
  const std::optional<double> k = n.has("stiffness") ? std::optional<double>(n.at("stiffness").nonNegative()) : std::nullopt;
  const std::optional<double> d = n.has("dissipation") ? std::optional<double>(n.at("dissipation").nonNegative()) : std::nullopt;
  stopStiffness_ = k;
  stopDissipation_ = d;
  std::map<std::string, JointStopDesc> stops;  // by coordinate
  std::vector<std::string> order;
  if (fromUrdf && !urdfLimits_.empty()) {
    if (!k || !d)
      n.fail("the URDF's joint limits become stops: give their \"stiffness\" and \"dissipation\" (or \"from_urdf\": false)");
    for (JointStopDesc stop : urdfLimits_) {
      stop.stiffness = *k;
      stop.dissipation = *d;
      order.push_back(stop.coordinate);
      stops[stop.coordinate] = stop;
    }
  }
  if (auto list = n.find("stops")) {
    std::map<std::string, std::string> listed;  // coordinate -> path of its stop
    for (const JsonNode& e : list->elements()) {
      e.expectObject({"coordinate", "lower", "upper", "stiffness", "dissipation"});
      JointStopDesc stop;
      stop.coordinate = coordinateName(e.at("coordinate"));
      if (!listed.emplace(stop.coordinate, e.path()).second)
        e.at("coordinate").fail("coordinate " + inQuotes(stop.coordinate) + " already has a stop (" +
                                listed[stop.coordinate] + "); give one stop per coordinate");
      if (auto x = e.find("lower")) stop.lower = x->number();
      if (auto x = e.find("upper")) stop.upper = x->number();
      if (stop.lower > stop.upper) e.at("lower").fail("must be <= upper");
      if (auto x = e.find("stiffness")) stop.stiffness = x->nonNegative();
      else if (k) stop.stiffness = *k;
      else e.fail("missing key 'stiffness' (or give a default \"stiffness\" in \"limits\")");
      if (auto x = e.find("dissipation")) stop.dissipation = x->nonNegative();
      else if (d) stop.dissipation = *d;
      else e.fail("missing key 'dissipation' (or give a default \"dissipation\" in \"limits\")");
      if (!stops.count(stop.coordinate)) order.push_back(stop.coordinate);
      stops[stop.coordinate] = stop;
    }
  }
  for (const std::string& c : order) builder_.add(stops[c]);
}

void SceneReader::readActuators(const JsonNode& list) {
  for (const JsonNode& e : list.elements()) {
    e.expectObject({"coordinates", "mode", "kp", "kd", "target", "target_velocity", "seed"});
    ActuatorDesc a;
    if (auto x = e.find("mode")) {
      try {
        a.mode = parseActuatorMode(x->string());
      } catch (const ModelError& err) {
        x->fail(err.what());
      }
    }
    a.kp = e.has("kp") ? e.at("kp").nonNegative() : 0.0;
    a.kd = e.has("kd") ? e.at("kd").nonNegative() : 0.0;
    if (a.mode == ActuatorMode::Position && !e.has("kp")) e.fail("missing key 'kp' (a position actuator's stiffness)");
    if (a.mode != ActuatorMode::Torque && !e.has("kd")) e.fail("missing key 'kd' (the actuator's damping)");
    expectGainsUsed(e, a.mode);
    PendingTarget t;
    t.path = e.path();
    if (auto x = e.find("target_velocity")) t.velocity = x->number();
    if (auto x = e.find("seed")) t.seed = static_cast<std::uint64_t>(x->integer(0, std::int64_t(1) << 53));
    if (auto x = e.find("target")) {
      if (x->isNumber()) {
        t.position = x->number();
      } else {
        x->expectObject({"uniform", "margin"});
        const JsonNode range = x->at("uniform");
        if (range.isArray()) {
          const std::vector<double> v = range.numbers(2);
          if (v[0] > v[1]) range.fail("must be [low, high] with low <= high");
          t.uniform = std::make_pair(v[0], v[1]);
        } else if (range.string() == "limits") {
          t.fromLimits = true;
        } else {
          range.fail("must be [low, high] or \"limits\" (the coordinate's joint stop bounds)");
        }
        if (auto m = x->find("margin")) {
          t.margin = m->nonNegative();
          if (!(t.margin < 0.5)) m->fail("must be below 0.5 (a fraction of the range kept clear at each end)");
        }
      }
    }
    const JsonNode names = e.at("coordinates");
    std::vector<JsonNode> nodes;
    if (names.isArray()) nodes = names.elements();
    else nodes.push_back(names);
    if (nodes.empty()) names.fail("must name at least one coordinate");
    for (const JsonNode& name : nodes) {
      a.coordinate = coordinateName(name);
      builder_.add(a);
      t.coordinate = a.coordinate;
      t.mode = a.mode;
      pendingTargets_.push_back(t);
    }
  }
}

void SceneReader::expectGainsUsed(const JsonNode& e, ActuatorMode mode) {
  if (mode != ActuatorMode::Position && e.has("kp"))
    e.at("kp").fail(std::string("a ") + actuatorModeName(mode) + " actuator has no kp (it acts in position mode only)");
  if (mode == ActuatorMode::Torque && e.has("kd"))
    e.at("kd").fail("a torque actuator has no kd (it acts in position and velocity modes)");
}

void SceneReader::resolveTargets() {
  const Model& model = *scene_.model;
  for (const PendingTarget& t : pendingTargets_) {
    TargetSpec spec;
    const Actuator* a = nullptr;
    for (const Actuator& x : model.actuators())
      if (x.desc.coordinate == t.coordinate) a = &x;
    spec.u = a->u;
    spec.position = t.position;
    spec.velocity = t.velocity;
    spec.seed = t.seed;
    spec.uniform = t.uniform;
    if (t.fromLimits) {
      const JointStop* stop = model.stopOnSpeed(a->u);
      if (!stop || !std::isfinite(stop->desc.lower) || !std::isfinite(stop->desc.upper))
        throw InputError(source_ + ": " + t.path + ".target: coordinate " + inQuotes(t.coordinate) +
                         " has no joint stop with finite bounds to draw its target within");
      const double margin = t.margin * (stop->desc.upper - stop->desc.lower);
      spec.uniform = std::make_pair(stop->desc.lower + margin, stop->desc.upper - margin);
    }
    scene_.targets.push_back(spec);
  }
}

double SceneReader::newStopValue(const std::optional<double>& fallback, const JsonNode& e, const std::string& coordinate,
                           const char* key) {
  if (fallback) return *fallback;
  e.fail(std::string("missing key '") + key + "' (coordinate " + inQuotes(coordinate) +
         " has no stop in the scene to take it from, and \"limits\" gives no default \"" + key + "\")");
}

int SceneReader::speedOfCoordinate(const std::string& name, const JsonNode& node) const {
  const Model& model = *scene_.model;
  if (model.stops().empty() && model.actuators().empty())
    node.fail("the scene declares no joint stop and no actuator (\"limits\", \"actuators\"); per-world values "
              "need at least one");
  const auto it = std::find(model.qNames().begin(), model.qNames().end(), name);
  if (it == model.qNames().end())
    node.fail("no coordinate named " + inQuotes(name) + io::didYouMean(name, model.qNames()));
  const int q = static_cast<int>(it - model.qNames().begin());
  for (const Body& b : model.bodies())
    if (q >= b.qOffset && q < b.qOffset + b.nq) {
      if (!mobilizerQdotIsU(b.mobilizer))
        node.fail("coordinate " + inQuotes(name) + " belongs to a " + mobilizerName(b.mobilizer) +
                  " mobilizer, whose qdot is not u (joint stops and PD actuators need one whose qdot is its speed)");
      return b.uOffset + (q - b.qOffset);
    }
  node.fail("no coordinate named " + inQuotes(name));
}

}  // namespace lockstep::io
