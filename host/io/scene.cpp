// Scene files (scene.h, docs/scene-format.md): the entry points, and the reader's model part
// (scene_reader.h): names, the URDF, bodies, force elements and ground contact.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "scene_reader.h"
#include "text_file.h"

namespace lockstep {

namespace io {

namespace {

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

}  // namespace

Scene SceneReader::readUrdfFile(const std::string& path) {
  scene_.source = source_;
  scene_.name = stemOf(path);
  UrdfOptions options;
  options.repairInertia = options_.repairInertia;
  options.rootJoint = options_.urdfRoot.value_or(UrdfRootJoint::Fixed);
  const UrdfImport urdf = importUrdfFile(path, options);
  builder_.setGravity(urdf.gravity);
  for (const BodyDesc& b : urdf.bodies) builder_.addBody(b);
  scene_.warnings = urdf.warnings;
  scene_.visuals = urdf.visuals;
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

Scene SceneReader::readMjcfFile(const std::string& path) {
  scene_.source = source_;
  MjcfOptions mjcfOptions;
  if (options_.mjcfLaw) mjcfOptions.law = *options_.mjcfLaw;
  addMjcf(importMjcfFile(path, mjcfOptions), nullptr);
  scene_.name = mjcf_->modelName.empty() ? stemOf(path) : mjcf_->modelName;
  try {
    scene_.model = mjcf_->model;  // built once, by the import
    validateJointInertias(*scene_.model);
  } catch (const ModelError& e) {
    throw InputError(source_ + ": " + e.what());
  }
  scene_.q0 = mjcf_->q0;
  scene_.u0 = scene_.model->defaultU();
  scene_.simulation.dt = mjcf_->timestep;
  if (mjcf_->law == MjcfOptions::ContactLaw::Mujoco) scene_.simulation.integrator = mjcf_->integrator;
  if (!mjcf_->compliantPairs.empty()) scene_.warnings.push_back(compliantPairsWarning(mjcf_->compliantPairs.size()));
  keepMjcf();
  return std::move(scene_);
}

std::string SceneReader::compliantPairsWarning(std::size_t pairs) {
  return "contacts between moving bodies (" + std::to_string(pairs) + " pairs of spheres and capsules) exist under "
         "the compliant law in its implicit step only: a scene with \"simulation\": {\"integrator\": \"implicit\"} "
         "has them (docs/contact-laws.md); this explicit step lets the bodies pass through each other";
}

void SceneReader::readMjcf(const JsonNode& node) {
  node.expectObject({"path", "contact_law", "contact", "stops", "corner_radius_fraction", "geoms"});
  if (rootHasUrdf_) node.fail("a scene takes one robot: \"urdf\" or \"mjcf\", not both");
  const JsonNode pathNode = node.at("path");
  std::string path = pathNode.string();
  if (path.empty()) pathNode.fail("must not be empty");
  if (path[0] != '/') path = baseDirectory_ + "/" + path;
  MjcfOptions options;
  if (auto v = node.find("contact_law")) {
    try {
      options.law = parseMjcfContactLaw(v->string());
    } catch (const InputError& e) {
      v->fail(e.what());
    }
  }
  if (auto c = node.find("contact")) {
    c->expectObject({"stiffness", "dissipation", "transition_velocity"});
    if (auto v = c->find("stiffness")) options.contactStiffness = v->nonNegative();
    if (auto v = c->find("dissipation")) options.contactDissipation = v->nonNegative();
    if (auto v = c->find("transition_velocity")) options.transitionVelocity = v->positive();
  }
  if (auto c = node.find("stops")) {
    c->expectObject({"stiffness", "dissipation"});
    if (auto v = c->find("stiffness")) options.stopStiffness = v->nonNegative();
    if (auto v = c->find("dissipation")) options.stopDissipation = v->nonNegative();
  }
  if (auto v = node.find("corner_radius_fraction")) {
    options.cornerRadiusFraction = v->positive();
    if (options.cornerRadiusFraction >= 1) v->fail("must be < 1 (a fraction of the smallest half-size)");
  }
  if (auto g = node.find("geoms")) {
    for (const auto& [name, e] : g->members()) {
      e.expectObject({"stiffness", "dissipation", "friction"});
      MjcfOptions::GeomMaterial m;
      if (auto v = e.find("stiffness")) m.stiffness = v->nonNegative();
      if (auto v = e.find("dissipation")) m.dissipation = v->nonNegative();
      if (auto v = e.find("friction")) m.friction = v->nonNegative();
      options.geoms[name] = m;
    }
  }
  MjcfImport mjcf;
  try {
    mjcf = importMjcfFile(path, options);
  } catch (const InputError& e) {
    pathNode.fail(e.what());
  }
  if (auto g = node.find("geoms")) {
    std::set<std::string> known;
    for (const GroundContactDesc& d : mjcf.builder.groundContacts()) known.insert(d.name.substr(0, d.name.find_first_of(".@")));
    // A compliant pair is named "geom1/geom2" (a geom's name may hold '/' too).
    auto inPair = [&](const std::string& name) {
      for (const PairContactDesc& d : mjcf.compliantPairs)
        if (d.name.rfind(name + "/", 0) == 0 ||
            (d.name.size() > name.size() &&
             d.name.compare(d.name.size() - name.size() - 1, std::string::npos, "/" + name) == 0))
          return true;
      return false;
    };
    for (const auto& [name, e] : g->members())
      if (!known.count(name) && !inPair(name))
        e.fail("no geom named " + inQuotes(name) + " touches the ground or another body in " + path);
  }
  addMjcf(mjcf, &pathNode);
}

void SceneReader::addMjcf(const MjcfImport& mjcf, const JsonNode* node) {
  builder_ = mjcf.builder;
  for (const BodyDesc& b : mjcf.builder.bodies()) {
    if (node) defineName(b.name, {b.name, Transformd::identity(), true}, *node);
    else frames_[b.name] = {b.name, Transformd::identity(), true};
  }
  for (const SiteDesc& site : mjcf.builder.sites())
    if (!frames_.count(site.name)) frames_[site.name] = {site.body, site.X_BS, false};
  scene_.warnings.insert(scene_.warnings.end(), mjcf.warnings.begin(), mjcf.warnings.end());
  mjcf_ = mjcf;
  scene_.visuals = mjcf.visuals;
}

Scene SceneReader::read(const std::string& text) {
  const nlohmann::json document = io::parseDocument(text, source_);
  const JsonNode root(document, "", source_);
  // "study" belongs to the study reader (study_file.h); a scene file may carry one.
  root.expectObject({"name", "description", "gravity", "urdf", "mjcf", "bodies", "linear_bushings", "spring_dampers", "constant_forces",
                     "sphere_contacts", "limits", "actuators", "ground", "collision_geoms", "initial_state",
                     "simulation", "per_world", "study"});
  scene_.source = source_;
  scene_.name = root.has("name") ? root.at("name").string() : stemOf(source_);
  if (auto d = root.find("description")) scene_.description = d->string();
  frames_["ground"] = {"ground", Transformd::identity(), true};

  if (auto urdf = root.find("urdf")) readUrdf(*urdf);
  rootHasUrdf_ = root.has("urdf");
  if (auto mjcf = root.find("mjcf")) readMjcf(*mjcf);
  if (auto g = root.find("gravity")) builder_.setGravity(g->vec3());
  if (auto bodies = root.find("bodies")) readBodies(*bodies);
  if (auto e = root.find("linear_bushings"))
    for (const JsonNode& n : e->elements()) builder_.add(readBushing(n));
  if (auto e = root.find("spring_dampers"))
    for (const JsonNode& n : e->elements()) builder_.add(readSpring(n));
  if (auto e = root.find("constant_forces"))
    for (const JsonNode& n : e->elements()) builder_.add(readConstantForce(n));
  if (auto e = root.find("sphere_contacts"))
    for (const JsonNode& n : e->elements()) builder_.add(readContact(n));
  if (auto g = root.find("ground")) readGround(*g);
  if (auto e = root.find("limits")) readLimits(*e);
  if (auto e = root.find("actuators")) readActuators(*e);
  // A scene that adds nothing to its MJCF robot's model takes the model the import built.
  bool addsToModel = !mjcf_;
  for (const char* key : {"gravity", "bodies", "linear_bushings", "spring_dampers", "constant_forces",
                          "sphere_contacts", "ground", "collision_geoms", "limits", "actuators"})
    addsToModel = addsToModel || root.has(key);
  // "integrator": "implicit": the ground contacts and joint stops as the compliant law's constraints of
  // the implicit step (ModelBuilder::compliantConstraints), at the scene's dt (read here, before the
  // model is built; the rest of "simulation" below). Its collision geoms are the compliant law's.
  const auto sim = root.find("simulation");
  const auto integrator = sim ? sim->find("integrator") : std::nullopt;
  if (integrator && integrator->string() == "implicit") {
    const auto dt = sim->find("dt");
    const double h = dt ? dt->positive() : mjcf_ ? mjcf_->timestep : scene_.simulation.dt;
    builder_.compliantConstraints(h);
    if (mjcf_)  // the robot's own contacts between bodies under the compliant law
      for (PairContactDesc d : mjcf_->compliantPairs) {
        d.timestep = h;
        builder_.add(d);
      }
    if (auto c = root.find("collision_geoms")) readCollisionGeoms(*c, h);
    addsToModel = true;
  } else if (mjcf_ && !mjcf_->compliantPairs.empty()) {
    scene_.warnings.push_back(compliantPairsWarning(mjcf_->compliantPairs.size()));
  }
  if (auto c = root.find("collision_geoms"); c && !(integrator && integrator->string() == "implicit")) {
    c->fail("contacts between bodies are the compliant law's, in its implicit step: set \"simulation\": "
            "{\"integrator\": \"implicit\", \"dt\": ...} (docs/contact-laws.md)");
  }
  try {
    scene_.model = addsToModel ? builder_.build() : mjcf_->model;
    validateJointInertias(*scene_.model);
  } catch (const ModelError& e) {
    throw InputError(source_ + ": " + e.what());
  }
  const Model& model = *scene_.model;
  for (const Body& b : model.bodies()) joints_[b.jointName] = &b;
  resolveTargets();

  scene_.q0 = mjcf_ ? mjcfInitialQ(model, *mjcf_) : model.defaultQ();
  scene_.u0 = model.defaultU();
  if (mjcf_) scene_.simulation.dt = mjcf_->timestep;
  // MuJoCo's law steps as MuJoCo does: the XML's integrator (the compliant law's stiff contacts keep RK4).
  if (mjcf_ && mjcf_->law == MjcfOptions::ContactLaw::Mujoco) scene_.simulation.integrator = mjcf_->integrator;
  if (auto s = root.find("initial_state")) readState(*s, scene_.q0, scene_.u0);
  if (auto s = root.find("simulation")) readSimulation(*s);
  if (auto p = root.find("per_world"))
    for (const JsonNode& n : p->elements()) scene_.perWorld.push_back(readOverride(n));
  keepMjcf();
  return std::move(scene_);
}

// MuJoCo's qpos0 of the robot's bodies, by name, in the whole model's q (the scene's own bodies,
// added after the robot's, at their default).
std::vector<double> SceneReader::mjcfInitialQ(const Model& model, const MjcfImport& mjcf) {
  if (&model == mjcf.model.get()) return mjcf.q0;
  std::vector<double> q = model.defaultQ();
  for (const Body& from : mjcf.model->bodies()) {
    const Body& to = model.bodies()[model.bodyIndex(from.name)];
    for (int k = 0; k < from.nq; ++k) q[to.qOffset + k] = mjcf.q0[from.qOffset + k];
  }
  return q;
}

void SceneReader::keepMjcf() {
  if (!mjcf_) return;
  mjcf_->visuals.clear();  // the scene's own (Scene::visuals)
  scene_.mjcf = std::make_shared<const MjcfImport>(std::move(*mjcf_));
  mjcf_.reset();
}

void SceneReader::defineName(const std::string& name, const Frame& frame, const JsonNode& node) {
  if (name.empty()) node.fail("must not be empty");
  if (!frames_.emplace(name, frame).second)
    node.fail(inQuotes(name) + (name == "ground" ? " is reserved for the Ground frame" : " is already used by another body or URDF link"));
}

std::vector<std::string> SceneReader::knownNames() const {
  std::vector<std::string> names;
  for (const auto& f : frames_) names.push_back(f.first);
  return names;
}

const Frame& SceneReader::resolve(const JsonNode& node) const {
  const std::string name = node.string();
  auto it = frames_.find(name);
  if (it == frames_.end()) node.fail("no body or link named " + inQuotes(name) + io::didYouMean(name, knownNames()));
  return it->second;
}

const Body& SceneReader::joint(const std::string& name, const JsonNode& node) const {
  auto it = joints_.find(name);
  if (it == joints_.end()) {
    std::vector<std::string> names;
    for (const auto& j : joints_) names.push_back(j.first);
    node.fail("no joint named " + inQuotes(name) + io::didYouMean(name, names));
  }
  return *it->second;
}

void SceneReader::readUrdf(const JsonNode& node) {
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

void SceneReader::addRobot(const UrdfImport& urdf, const JsonNode& node) {
  builder_.setGravity(urdf.gravity);
  for (const BodyDesc& b : urdf.bodies) builder_.addBody(b);
  for (const auto& [link, placement] : urdf.links)
    defineName(link, {placement.body, placement.X_BL, link == placement.body}, node);
  scene_.warnings.insert(scene_.warnings.end(), urdf.warnings.begin(), urdf.warnings.end());
  urdfLimits_ = urdf.limits;
  scene_.visuals = urdf.visuals;
}

void SceneReader::readBodies(const JsonNode& list) {
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

void SceneReader::expectDifferentBodies(const Frame& a, const Frame& b, const JsonNode& node, const char* otherKey) const {
  if (a.body == b.body)
    node.fail("must be on a different body than " + std::string(otherKey) + " (both are on " + inQuotes(a.body) + ")");
}

std::array<double, 6> SceneReader::sixNonNegative(const JsonNode& node) const {
  std::array<double, 6> out;
  const std::vector<JsonNode> e = node.elements(6);
  for (int i = 0; i < 6; ++i) out[i] = e[i].nonNegative();
  return out;
}

LinearBushingDesc SceneReader::readBushing(const JsonNode& n) {
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

SpringDamperDesc SceneReader::readSpring(const JsonNode& n) {
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

ConstantForceDesc SceneReader::readConstantForce(const JsonNode& n) {
  n.expectObject({"name", "body", "station", "force"});
  ConstantForceDesc d;
  if (auto x = n.find("name")) d.name = x->string();
  const Frame& b = resolve(n.at("body"));
  d.body = b.body;
  d.station = b.X_BL * (n.has("station") ? n.at("station").vec3() : Vec3d::zero());
  d.force = n.at("force").vec3();
  return d;
}

SphereContactDesc SceneReader::readContact(const JsonNode& n) {
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

void SceneReader::readGroundParameters(const JsonNode& n, GroundContactDesc& d) const {
  if (auto x = n.find("normal")) {
    d.planeNormal = x->vec3();
    const Vec3d& n = d.planeNormal;  // its largest component: |n|^2 under- or overflows near 1e-170 or 1e155
    if (!(std::max({std::abs(n[0]), std::abs(n[1]), std::abs(n[2])}) > 0)) x->fail("must have a nonzero length");
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

void SceneReader::readGround(const JsonNode& n) {
  n.expectObject({"normal", "point", "stiffness", "dissipation", "static_friction", "dynamic_friction",
                  "viscous_friction", "transition_velocity", "cf", "bd", "bv", "contact_spheres"});
  GroundContactDesc defaults;
  readGroundParameters(n, defaults);
  std::map<std::string, int> names;
  auto add = [&](GroundContactDesc d, const JsonNode& where) {
    if (!names.emplace(d.name, 0).second) where.fail("the ground contact name " + inQuotes(d.name) + " is already used");
    const GroundMaterial& m = d.material;
    if (m.staticFriction < m.dynamicFriction)
      where.fail("static_friction (" + numberText(m.staticFriction) + ") must be >= dynamic_friction (" +
                 numberText(m.dynamicFriction) + "), here or in \"ground\"");
    builder_.add(d);
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

}  // namespace io

Scene parseScene(const std::string& json, const std::string& source, const std::string& baseDirectory,
                 const SceneOptions& options) {
  return io::SceneReader(source, baseDirectory, options).read(json);
}

Scene loadSceneFile(const std::string& path, const SceneOptions& options) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".urdf") == 0)
    return io::SceneReader(path, io::directoryOf(path), options).readUrdfFile(path);
  if (isMjcfPath(path) && !options.urdfRoot)
    return io::SceneReader(path, io::directoryOf(path), options).readMjcfFile(path);
  if (options.urdfRoot)
    throw InputError(path + ": a root joint (--root) applies to a .urdf file read on its own; a scene file sets "
                     "\"root_joint\" in its \"urdf\" entry");
  if (options.mjcfLaw)
    throw InputError(path + ": a contact law (--contact-law) applies to an MJCF (.xml) file read on its own; a scene "
                     "file sets \"contact_law\" in its \"mjcf\" entry");
  return parseScene(io::readTextFile(path), path, io::directoryOf(path), options);
}

}  // namespace lockstep
