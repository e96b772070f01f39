// Scene files (scene.h, docs/scene-format.md): JSON in, a validated Model, initial state and
// per-world overrides out. Every value is checked where it is read, so that the first problem is
// reported with its JSON path.
#include "lockstep/scene.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>

#include "json_node.h"
#include "text_file.h"
#include "lockstep/quantities.h"
#include "lockstep/urdf.h"

namespace lockstep {

namespace {

using io::JsonNode;

std::string inQuotes(const std::string& s) { return "'" + s + "'"; }

std::string directoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string stemOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = file.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? file : file.substr(0, dot);
}

// Where a name a scene may refer to is: the body carrying it and the name's frame on that body.
// Scene bodies are their own frames; URDF links welded into a body by fixed joints are not.
struct Frame {
  std::string body;  // "ground" for Ground
  Transformd X_BL = Transformd::identity();
  bool isBody = true;
};

class SceneReader {
 public:
  SceneReader(std::string source, std::string baseDirectory, const SceneOptions& options)
      : source_(std::move(source)), baseDirectory_(std::move(baseDirectory)), options_(options) {}

  // A URDF file on its own: the robot welded to Ground (or free, as the options say), default state
  // and simulation settings.
  Scene readUrdfFile(const std::string& path) {
    scene_.source = source_;
    scene_.name = stemOf(path);
    UrdfOptions options;
    options.repairInertia = options_.repairInertia;
    options.rootJoint = options_.urdfRoot.value_or(UrdfRootJoint::Fixed);
    const UrdfImport urdf = importUrdfFile(path, options);
    builder_.setGravity(urdf.gravity);
    for (const BodyDesc& b : urdf.bodies) builder_.addBody(b);
    scene_.warnings = urdf.warnings;
    try {
      scene_.model = builder_.build();
      validateJointInertias(*scene_.model);
    } catch (const ModelError& e) {
      throw InputError(source_ + ": " + e.what());
    }
    scene_.q0 = scene_.model->defaultQ();
    scene_.u0 = scene_.model->defaultU();
    return std::move(scene_);
  }

  Scene read(const std::string& text) {
    const nlohmann::json document = io::parseDocument(text, source_);
    const JsonNode root(document, "", source_);
    // "study" belongs to the study reader (study_file.h); a scene file may carry one.
    root.expectObject({"name", "description", "gravity", "urdf", "bodies", "linear_bushings", "spring_dampers",
                       "sphere_contacts", "limits", "actuators", "ground", "initial_state", "simulation", "per_world",
                       "study"});
    scene_.source = source_;
    scene_.name = root.has("name") ? root.at("name").string() : stemOf(source_);
    if (auto d = root.find("description")) scene_.description = d->string();
    frames_["ground"] = {"ground", Transformd::identity(), true};

    if (auto urdf = root.find("urdf")) readUrdf(*urdf);
    if (auto g = root.find("gravity")) builder_.setGravity(g->vec3());
    if (auto bodies = root.find("bodies")) readBodies(*bodies);
    if (auto e = root.find("linear_bushings"))
      for (const JsonNode& n : e->elements()) builder_.addLinearBushing(readBushing(n));
    if (auto e = root.find("spring_dampers"))
      for (const JsonNode& n : e->elements()) builder_.addSpringDamper(readSpring(n));
    if (auto e = root.find("sphere_contacts"))
      for (const JsonNode& n : e->elements()) builder_.addSphereContact(readContact(n));
    if (auto g = root.find("ground")) readGround(*g);
    if (auto e = root.find("limits")) readLimits(*e);
    if (auto e = root.find("actuators")) readActuators(*e);
    try {
      scene_.model = builder_.build();
      validateJointInertias(*scene_.model);
    } catch (const ModelError& e) {
      throw InputError(source_ + ": " + e.what());
    }
    const Model& model = *scene_.model;
    for (const Body& b : model.bodies()) joints_[b.jointName] = &b;
    resolveTargets();

    scene_.q0 = model.defaultQ();
    scene_.u0 = model.defaultU();
    if (auto s = root.find("initial_state")) readState(*s, scene_.q0, scene_.u0);
    if (auto s = root.find("simulation")) readSimulation(*s);
    if (auto p = root.find("per_world"))
      for (const JsonNode& n : p->elements()) scene_.perWorld.push_back(readOverride(n));
    return std::move(scene_);
  }

 private:
  // ---- names ----

  // Registers a new name, failing when it is taken.
  void defineName(const std::string& name, const Frame& frame, const JsonNode& node) {
    if (name.empty()) node.fail("must not be empty");
    if (!frames_.emplace(name, frame).second)
      node.fail(inQuotes(name) + (name == "ground" ? " is reserved for the Ground frame" : " is already used by another body or URDF link"));
  }

  std::vector<std::string> knownNames() const {
    std::vector<std::string> names;
    for (const auto& f : frames_) names.push_back(f.first);
    return names;
  }

  // The frame a body reference names ("ground", a body, or a URDF link).
  const Frame& resolve(const JsonNode& node) const {
    const std::string name = node.string();
    auto it = frames_.find(name);
    if (it == frames_.end()) node.fail("no body or link named " + inQuotes(name) + io::didYouMean(name, knownNames()));
    return it->second;
  }

  // A joint of the built model, by name.
  const Body& joint(const std::string& name, const JsonNode& node) const {
    auto it = joints_.find(name);
    if (it == joints_.end()) {
      std::vector<std::string> names;
      for (const auto& j : joints_) names.push_back(j.first);
      node.fail("no joint named " + inQuotes(name) + io::didYouMean(name, names));
    }
    return *it->second;
  }

  // A model check that reports through the scene file.
  template <class F>
  void check(F&& f) const {
    try {
      f();
    } catch (const ModelError& e) {
      throw InputError(source_ + ": " + e.what());
    }
  }

  // ---- model ----

  void readUrdf(const JsonNode& node) {
    node.expectObject({"path", "root_joint", "repair_inertia"});
    const JsonNode pathNode = node.at("path");
    std::string path = pathNode.string();
    if (path.empty()) pathNode.fail("must not be empty");
    if (path[0] != '/') path = baseDirectory_ + "/" + path;
    UrdfOptions options;
    options.repairInertia = options_.repairInertia;
    if (auto r = node.find("repair_inertia")) options.repairInertia = options.repairInertia || r->boolean();
    if (auto r = node.find("root_joint")) {
      try {
        options.rootJoint = parseUrdfRootJoint(r->string());
      } catch (const InputError& e) {
        r->fail(e.what());
      }
    }
    UrdfImport urdf;
    try {
      urdf = importUrdfFile(path, options);
    } catch (const InputError& e) {
      pathNode.fail(e.what());
    }
    addRobot(urdf, pathNode);
    urdfCollisionSpheres_ = urdf.collisionSpheres;
  }

  // Adds an imported robot's bodies and link names; `node` is where a name clash is reported.
  void addRobot(const UrdfImport& urdf, const JsonNode& node) {
    builder_.setGravity(urdf.gravity);
    for (const BodyDesc& b : urdf.bodies) builder_.addBody(b);
    for (const auto& [link, placement] : urdf.links)
      defineName(link, {placement.body, placement.X_BL, link == placement.body}, node);
    scene_.warnings.insert(scene_.warnings.end(), urdf.warnings.begin(), urdf.warnings.end());
    urdfLimits_ = urdf.limits;
  }

  // ---- joint stops and actuators ----

  // A coordinate name of the model being built: "joint" for one-coordinate joints, else "joint.axis"
  // (checked when the model is built; here only that it is a string).
  std::string coordinateName(const JsonNode& n) const {
    const std::string name = n.string();
    if (name.empty()) n.fail("must not be empty");
    return name;
  }

  // "limits": {"from_urdf": bool, "stiffness": k, "dissipation": d, "stops": [{"coordinate", "lower",
  // "upper", "stiffness", "dissipation"}]}: the URDF's <limit lower upper> with the default k and d,
  // then the listed stops (which replace a URDF stop on the same coordinate).
  void readLimits(const JsonNode& n) {
    n.expectObject({"from_urdf", "stiffness", "dissipation", "stops"});
    const bool fromUrdf = n.has("from_urdf") ? n.at("from_urdf").boolean() : true;
    const std::optional<double> k = n.has("stiffness") ? std::optional<double>(n.at("stiffness").nonNegative()) : std::nullopt;
    const std::optional<double> d = n.has("dissipation") ? std::optional<double>(n.at("dissipation").nonNegative()) : std::nullopt;
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
      for (const JsonNode& e : list->elements()) {
        e.expectObject({"coordinate", "lower", "upper", "stiffness", "dissipation"});
        JointStopDesc stop;
        stop.coordinate = coordinateName(e.at("coordinate"));
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
    for (const std::string& c : order) builder_.addJointStop(stops[c]);
  }

  // "actuators": [{"coordinates": name or [names], "mode", "kp", "kd", "target", "target_velocity",
  // "seed"}]; "target" is a number, {"uniform": [low, high]} or {"uniform": "limits", "margin": m}.
  void readActuators(const JsonNode& list) {
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
      for (const JsonNode& name : nodes) {
        a.coordinate = coordinateName(name);
        builder_.addActuator(a);
        t.coordinate = a.coordinate;
        t.mode = a.mode;
        pendingTargets_.push_back(t);
      }
    }
  }

  // The actuators' targets, once the model (and its stops) is built.
  void resolveTargets() {
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

  // Scalar or per-u array, each value checked by `value`.
  template <class F>
  std::vector<double> perSpeed(const JsonNode& node, int nu, F value) const {
    if (node.isNumber()) return std::vector<double>(nu, value(node));
    std::vector<double> out;
    if (!node.isArray()) node.fail("must be a number or an array of " + std::to_string(nu) + " numbers");
    for (const JsonNode& e : node.elements(nu)) out.push_back(value(e));
    return out;
  }

  void readBodies(const JsonNode& list) {
    const std::vector<JsonNode> nodes = list.elements();
    // Names first, so that parents may come after their children in the file.
    for (const JsonNode& n : nodes) {
      n.expectObject({"name", "parent", "mobilizer", "joint", "X_PF", "X_BM", "mass", "com", "inertia", "damping",
                      "effort_limit"});
      const JsonNode name = n.at("name");
      defineName(name.string(), {name.string(), Transformd::identity(), true}, name);
    }
    // The largest inertia of the model (round-off below it is accepted, validateMassProperties):
    // of the URDF robot's bodies and of the file's, where they read (errors are reported below).
    double inertiaScale = 0;
    auto include = [&](const SymMat33d& I) {
      const double trace = I.xx + I.yy + I.zz;
      if (std::isfinite(trace)) inertiaScale = std::max(inertiaScale, std::abs(trace));
    };
    for (const BodyDesc& b : builder_.bodies()) include(b.mass.inertia);
    for (const JsonNode& n : nodes) {
      try {
        include(n.at("inertia").inertia());
      } catch (const InputError&) {
      }
    }
    for (const JsonNode& n : nodes) {
      BodyDesc b;
      b.name = n.at("name").string();
      const JsonNode mobilizer = n.at("mobilizer");
      try {
        b.mobilizer = parseMobilizerType(mobilizer.string());
      } catch (const ModelError& e) {
        mobilizer.fail(e.what());
      }
      if (auto j = n.find("joint")) b.jointName = j->string();
      Transformd X_PF = Transformd::identity();
      if (auto x = n.find("X_PF")) X_PF = x->pose();
      if (auto x = n.find("X_BM")) b.X_BM = x->pose();
      if (auto p = n.find("parent")) {
        const Frame& parent = resolve(*p);
        if (parent.body == b.name) p->fail("a body cannot be its own parent");
        b.parent = parent.body;
        X_PF = parent.X_BL * X_PF;
      }
      b.X_PF = X_PF;
      b.mass.mass = n.at("mass").number();
      if (auto c = n.find("com")) b.mass.com = c->vec3();
      b.mass.inertia = n.at("inertia").inertia();
      check([&] { validateMassProperties(b.mass, n.path(), inertiaScale); });
      const int nu = mobilizerNu(b.mobilizer);
      if (auto d = n.find("damping")) b.damping = perSpeed(*d, nu, [](const JsonNode& e) { return e.nonNegative(); });
      if (auto e = n.find("effort_limit"))
        b.effortLimit = perSpeed(*e, nu, [](const JsonNode& x) { return x.positive(); });
      builder_.addBody(b);
    }
  }

  // Two ends of a force element or constraint on different bodies.
  void expectDifferentBodies(const Frame& a, const Frame& b, const JsonNode& node, const char* otherKey) const {
    if (a.body == b.body)
      node.fail("must be on a different body than " + std::string(otherKey) + " (both are on " + inQuotes(a.body) + ")");
  }

  std::array<double, 6> sixNonNegative(const JsonNode& node) const {
    std::array<double, 6> out;
    const std::vector<JsonNode> e = node.elements(6);
    for (int i = 0; i < 6; ++i) out[i] = e[i].nonNegative();
    return out;
  }

  LinearBushingDesc readBushing(const JsonNode& n) {
    n.expectObject({"name", "body1", "body2", "frame_on_body1", "frame_on_body2", "stiffness", "damping"});
    LinearBushingDesc d;
    if (auto x = n.find("name")) d.name = x->string();
    const Frame& f1 = resolve(n.at("body1"));
    const Frame& f2 = resolve(n.at("body2"));
    expectDifferentBodies(f2, f1, n.at("body2"), "body1");
    d.body1 = f1.body;
    d.body2 = f2.body;
    bushingEnds_.push_back({f1.X_BL, f2.X_BL});
    d.X_B1F = f1.X_BL * (n.has("frame_on_body1") ? n.at("frame_on_body1").pose() : Transformd::identity());
    d.X_B2M = f2.X_BL * (n.has("frame_on_body2") ? n.at("frame_on_body2").pose() : Transformd::identity());
    d.stiffness = sixNonNegative(n.at("stiffness"));
    d.damping = sixNonNegative(n.at("damping"));
    return d;
  }

  SpringDamperDesc readSpring(const JsonNode& n) {
    n.expectObject({"name", "bodyA", "p_AP", "bodyB", "p_BQ", "free_length", "stiffness", "damping"});
    SpringDamperDesc d;
    if (auto x = n.find("name")) d.name = x->string();
    const Frame& a = resolve(n.at("bodyA"));
    const Frame& b = resolve(n.at("bodyB"));
    expectDifferentBodies(b, a, n.at("bodyB"), "bodyA");
    d.bodyA = a.body;
    d.bodyB = b.body;
    springEnds_.push_back({a.X_BL, b.X_BL});
    d.p_AP = a.X_BL * n.at("p_AP").vec3();
    d.p_BQ = b.X_BL * n.at("p_BQ").vec3();
    d.freeLength = n.at("free_length").positive();
    d.stiffness = n.at("stiffness").nonNegative();
    d.damping = n.has("damping") ? n.at("damping").nonNegative() : 0.0;
    return d;
  }

  SphereContactDesc readContact(const JsonNode& n) {
    n.expectObject({"name", "bodyF", "center_on_F", "radius_on_F", "bodyB", "center_on_B", "radius_on_B",
                    "enforce_rolling", "enabled"});
    SphereContactDesc d;
    if (auto x = n.find("name")) d.name = x->string();
    const Frame& f = resolve(n.at("bodyF"));
    const Frame& b = resolve(n.at("bodyB"));
    expectDifferentBodies(b, f, n.at("bodyB"), "bodyF");
    d.bodyF = f.body;
    d.bodyB = b.body;
    contactEnds_.push_back({f.X_BL, b.X_BL});
    d.centerOnF = f.X_BL * n.at("center_on_F").vec3();
    d.centerOnB = b.X_BL * n.at("center_on_B").vec3();
    d.radiusOnF = n.at("radius_on_F").positive();
    d.radiusOnB = n.at("radius_on_B").positive();
    if (auto x = n.find("enforce_rolling")) d.enforceRolling = x->boolean();
    if (auto x = n.find("enabled")) d.enabledByDefault = x->boolean();
    return d;
  }

  // The half-space and material of "ground" (defaults for its spheres) or of one sphere (overrides).
  void readGroundParameters(const JsonNode& n, GroundContactDesc& d) const {
    if (auto x = n.find("normal")) {
      d.planeNormal = x->vec3();
      if (!(normSqr(d.planeNormal) > 0)) x->fail("must have a nonzero length");
    }
    if (auto x = n.find("point")) d.planePoint = x->vec3();
    GroundMaterial& m = d.material;
    if (auto x = n.find("stiffness")) m.stiffness = x->nonNegative();
    if (auto x = n.find("dissipation")) m.dissipation = x->nonNegative();
    if (auto x = n.find("static_friction")) m.staticFriction = x->nonNegative();
    if (auto x = n.find("dynamic_friction")) m.dynamicFriction = x->nonNegative();
    if (auto x = n.find("viscous_friction")) m.viscousFriction = x->nonNegative();
    if (auto x = n.find("transition_velocity")) m.transitionVelocity = x->positive();
    if (auto x = n.find("cf")) m.cf = x->positive();
    if (auto x = n.find("bd")) m.bd = x->nonNegative();
    if (auto x = n.find("bv")) m.bv = x->nonNegative();
  }

  // "ground": a half-space on Ground and the spheres on bodies that touch it (SmoothSphereHalfSpaceForce).
  void readGround(const JsonNode& n) {
    n.expectObject({"normal", "point", "stiffness", "dissipation", "static_friction", "dynamic_friction",
                    "viscous_friction", "transition_velocity", "cf", "bd", "bv", "contact_spheres"});
    GroundContactDesc defaults;
    readGroundParameters(n, defaults);
    std::map<std::string, int> names;
    auto add = [&](GroundContactDesc d, const JsonNode& where) {
      if (!names.emplace(d.name, 0).second) where.fail("the ground contact name " + inQuotes(d.name) + " is already used");
      builder_.addGroundContact(d);
    };
    for (const JsonNode& e : n.at("contact_spheres").elements()) {
      e.expectObject({"name", "body", "center", "radius", "from_urdf", "normal", "point", "stiffness", "dissipation",
                      "static_friction", "dynamic_friction", "viscous_friction", "transition_velocity", "cf", "bd",
                      "bv"});
      const JsonNode bodyNode = e.at("body");
      const Frame& f = resolve(bodyNode);
      if (f.body == "ground") bodyNode.fail("must be a body or link, not ground");
      GroundContactDesc d = defaults;
      d.body = f.body;
      readGroundParameters(e, d);
      const std::string link = bodyNode.string();
      const bool fromUrdf = e.has("from_urdf") && e.at("from_urdf").boolean();
      if (fromUrdf) {
        if (e.has("radius") || e.has("center")) e.fail("from_urdf takes the spheres' centers and radii from the URDF: give neither center nor radius");
        int k = 0;
        for (const UrdfCollisionSphere& c : urdfCollisionSpheres_) {
          if (c.link != link) continue;
          d.center = c.center;
          d.radius = c.radius;
          d.name = e.has("name") ? e.at("name").string() : link;
          if (k > 0) d.name += "_" + std::to_string(k);
          add(d, e);
          ++k;
        }
        if (k == 0) bodyNode.fail("the URDF has no <collision><sphere> on link " + inQuotes(link));
        continue;
      }
      d.name = e.has("name") ? e.at("name").string() : link;
      if (d.name.empty()) e.at("name").fail("must not be empty");
      d.center = f.X_BL * (e.has("center") ? e.at("center").vec3() : Vec3d::zero());
      d.radius = e.at("radius").positive();
      add(d, e);
    }
  }

  // ---- state, simulation, per-world overrides ----

  // Normalizes (or rejects) the quaternions of the joints in [first, first + count) of q.
  void normalizeQuaternions(std::vector<double>& q, int first, int count, const JsonNode& node) const {
    for (const Body& b : scene_.model->bodies()) {
      const int k = mobilizerQuaternionIndex(b.mobilizer);
      if (k < 0 || b.qOffset + k < first || b.qOffset + k + 4 > first + count) continue;
      io::normalizeQuaternion(&q[b.qOffset + k], node, "quaternion of joint " + inQuotes(b.jointName) + ": ");
    }
  }

  // {"q": [nq], "u": [nu], "joints": {name: {"q": ..., "u": ...}}}: full vectors first, then joints.
  // Returns which of q and u it set.
  std::pair<bool, bool> readState(const JsonNode& n, std::vector<double>& q, std::vector<double>& u) const {
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

  // A number (one-coordinate joints) or an array of n numbers.
  std::vector<double> perCoordinate(const JsonNode& node, int n, const char* what) const {
    if (node.isNumber() && n == 1) return {node.number()};
    if (!node.isArray()) node.fail("must be an array of " + std::to_string(n) + " numbers (the joint has " +
                                   std::to_string(n) + " " + what + ")");
    return node.numbers(n);
  }

  void readSimulation(const JsonNode& n) {
    n.expectObject({"dt", "steps", "integrator", "worlds", "record"});
    SimulationSettings& s = scene_.simulation;
    if (auto x = n.find("dt")) s.dt = x->positive();
    if (auto x = n.find("steps")) s.steps = static_cast<int>(x->integer(0, INT_MAX));
    if (auto x = n.find("worlds")) s.worlds = x->integer(1, std::int64_t(1) << 40);
    if (auto x = n.find("record"))  // names of recordable quantities (include/lockstep/quantities.h)
      for (const JsonNode& name : x->elements()) {
        s.record.push_back(name.string());
        if (s.record.back() != "all" && !findQuantity(s.record.back()))
          name.fail("no recordable quantity named " + inQuotes(s.record.back()) + "; `lockstep info SCENE` lists them");
      }
    if (auto x = n.find("integrator")) {
      const std::string name = x->string();
      if (name == "rk4") s.integrator = Integrator::RK4;
      else if (name == "euler") s.integrator = Integrator::SemiImplicitEuler;
      else x->fail("must be \"rk4\" or \"euler\" (got " + inQuotes(name) + ")");
    }
  }

  WorldOverride readOverride(const JsonNode& n) {
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
        if (auto x = e.find("dissipation")) so.values[3] = x->nonNegative();
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
          ao.gains = g;
        }
        if (auto x = e.find("target")) ao.targetPosition = x->number();
        if (auto x = e.find("target_velocity")) ao.targetVelocity = x->number();
        o.actuators.push_back(ao);
      }
    }
    return o;
  }

  // The speed of a coordinate named in a per-world entry; it must be one whose qdot is u.
  int speedOfCoordinate(const std::string& name, const JsonNode& node) const {
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

  // The index of the element called `name` in a list of the model's elements.
  template <class Elements>
  static int element(const Elements& elements, const std::string& name, const JsonNode& node, const char* kind) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (elements[i].desc.name == name) return static_cast<int>(i);
      names.push_back(elements[i].desc.name);
    }
    node.fail(std::string("no ") + kind + " named " + inQuotes(name) + io::didYouMean(name, names));
  }

  // An actuator's target as the file gives it, resolved once the model is built.
  struct PendingTarget {
    std::string coordinate, path;
    ActuatorMode mode = ActuatorMode::Position;
    double position = 0, velocity = 0, margin = 0;
    std::optional<std::pair<double, double>> uniform;
    bool fromLimits = false;
    std::uint64_t seed = 0;
  };
  std::vector<JointStopDesc> urdfLimits_;
  std::vector<PendingTarget> pendingTargets_;

  std::string source_, baseDirectory_;
  SceneOptions options_;
  Scene scene_;
  ModelBuilder builder_;
  std::map<std::string, Frame> frames_;
  std::map<std::string, const Body*> joints_;
  // X_BL of the frames each element's two ends were given on (identity unless a URDF link that was
  // welded into a body), in the order of Model::bushings(), springs() and contacts().
  std::vector<std::pair<Transformd, Transformd>> bushingEnds_, springEnds_, contactEnds_;
  std::vector<UrdfCollisionSphere> urdfCollisionSpheres_;
};

}  // namespace

Scene parseScene(const std::string& json, const std::string& source, const std::string& baseDirectory,
                 const SceneOptions& options) {
  return SceneReader(source, baseDirectory, options).read(json);
}

Scene loadSceneFile(const std::string& path, const SceneOptions& options) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".urdf") == 0)
    return SceneReader(path, directoryOf(path), options).readUrdfFile(path);
  if (options.urdfRoot)
    throw InputError(path + ": a root joint (--root) applies to a .urdf file read on its own; a scene file sets "
                     "\"root_joint\" in its \"urdf\" entry");
  return parseScene(io::readTextFile(path), path, directoryOf(path), options);
}

}  // namespace lockstep
