// The scene reader's collision geoms (scene_reader.h, docs/scene-format.md, "Collision geoms"):
// spheres and capsules on bodies, half-spaces on Ground, and the contacts between them under the
// compliant law's implicit step, every pair that may touch by the rules below.
#include <algorithm>
#include <cmath>
#include <set>

#include "scene_reader.h"

namespace lockstep::io {

namespace {

// Every two geoms that may touch make a pair contact with rows of its own (the step's broad phase
// skips those out of reach): the section's geoms, and the contacts they make, are bounded so that a
// file's size cannot make the model's size grow with its square.
constexpr std::size_t kMaxCollisionGeoms = 4096;
constexpr std::size_t kMaxCollisionContacts = 20000;
// The largest radius, half-length and distance from its body's origin (or a plane's point from
// Ground's) of a geom, in metres: within it, double's rounding leaves a contact's distance good to
// about 1e-10 m. A sphere of radius 1e11 under a 10 cm ball would lose the ball's penetration, 1e-5
// m, to rounding: the ball would fall through it.
constexpr double kMaxGeomExtent = 1e6;

// One geom as read: its body, shape and frame on the body (a capsule's axis: z), its size (MuJoCo's:
// a sphere's radius; a capsule's radius and half-length), a half-space's normal and point in Ground,
// and its material.
struct CollisionGeom {
  std::string name, body;
  PlaneContactShape shape = kShapeSphere;
  bool plane = false;
  Transformd X_BG = Transformd::identity();
  Vec3d size = Vec3d::zero(), normal = {{0, 0, 1}}, point = Vec3d::zero();
  CompliantMaterial material;
  bool lagged = true;
};

// A plane or pair contact under the compliant law, with the pair's material, for steps of h.
template <class Desc>
Desc compliant(Desc d, const CompliantMaterial& m, bool lagged, double h) {
  d.law = kLawCompliant;
  d.friction = m.friction;
  d.stiffness = m.stiffness;
  d.dissipation = m.dissipation;
  d.stictionVelocity = m.stictionVelocity;
  d.lagged = lagged;
  d.timestep = h;
  return d;
}

void readMaterial(const JsonNode& n, CompliantMaterial& m, bool& lagged) {
  if (auto x = n.find("stiffness")) m.stiffness = x->nonNegative();
  if (auto x = n.find("dissipation")) m.dissipation = x->nonNegative();
  if (auto x = n.find("friction")) m.friction = x->nonNegative();
  if (auto x = n.find("stiction_velocity")) m.stictionVelocity = x->positive();
  if (auto x = n.find("lagged")) lagged = x->boolean();
}

}  // namespace

void SceneReader::readCollisionGeoms(const JsonNode& n, double timestep) {
  n.expectObject({"stiffness", "dissipation", "friction", "stiction_velocity", "lagged", "geoms", "exclude"});
  CollisionGeom defaults;
  readMaterial(n, defaults.material, defaults.lagged);
  std::vector<CollisionGeom> geoms;
  std::set<std::string> names;
  const std::vector<JsonNode> list = n.at("geoms").elements();
  if (list.size() > kMaxCollisionGeoms)
    n.at("geoms").fail("has " + std::to_string(list.size()) + " geoms, over the limit of " +
                       std::to_string(kMaxCollisionGeoms) + " (every two are tested for contact)");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonNode& e = list[i];
    e.expectObject({"name", "body", "shape", "center", "radius", "from", "to", "normal", "point", "stiffness",
                    "dissipation", "friction", "stiction_velocity", "lagged"});
    CollisionGeom g = defaults;
    const Frame& f = resolve(e.at("body"));
    g.body = f.body;
    g.name = e.has("name") ? e.at("name").string() : "geom" + std::to_string(i);
    if (g.name.empty()) e.at("name").fail("must not be empty");
    if (!names.insert(g.name).second)
      e.at("name").fail("the collision geom name " + inQuotes(g.name) + " is already used");
    readMaterial(e, g.material, g.lagged);
    const std::string shape = e.at("shape").string();
    auto refuse = [&](std::initializer_list<const char*> keys) {
      for (const char* key : keys)
        if (e.has(key)) e.at(key).fail("does not apply to a " + shape);
    };
    auto bounded = [&](const char* key, double x) {
      if (!(std::abs(x) <= kMaxGeomExtent))
        e.at(key).fail("is beyond 1e6 m (" + numberText(x) + "): contact distances there lose their precision");
      return x;
    };
    auto boundedPoint = [&](const char* key, const Vec3d& p) {
      for (int k = 0; k < 3; ++k) bounded(key, p[k]);
      return p;
    };
    if (shape == "sphere") {
      refuse({"from", "to", "normal", "point"});
      g.shape = kShapeSphere;
      g.X_BG.p = f.X_BL * (e.has("center") ? boundedPoint("center", e.at("center").vec3()) : Vec3d::zero());
      g.size = {{bounded("radius", e.at("radius").positive()), 0, 0}};
    } else if (shape == "capsule") {
      refuse({"center", "normal", "point"});
      g.shape = kShapeCapsule;
      const Vec3d from = f.X_BL * boundedPoint("from", e.at("from").vec3());
      const Vec3d to = f.X_BL * boundedPoint("to", e.at("to").vec3()), axis = to - from;
      const double length = norm(axis);
      if (!(length > 0)) e.at("to").fail("must differ from \"from\" (a capsule's axis)");
      g.X_BG = {rotationTaking({{0, 0, 1}}, axis / length, /*halfTurnAxis=*/0), (from + to) / 2.0};
      g.size = {{bounded("radius", e.at("radius").positive()), length / 2, 0}};
    } else if (shape == "plane") {
      if (g.body != "ground")
        e.at("body").fail("a plane is a half-space fixed in Ground: its body must be ground (a moving body's geoms "
                          "are spheres and capsules)");
      refuse({"center", "radius", "from", "to"});
      g.plane = true;
      if (auto x = e.find("normal")) {
        g.normal = x->vec3();
        const double largest = std::max({std::abs(g.normal[0]), std::abs(g.normal[1]), std::abs(g.normal[2])});
        if (!(largest > 0)) x->fail("must have a nonzero length");
        g.normal = g.normal / largest;
        g.normal = g.normal / norm(g.normal);
      }
      if (auto x = e.find("point")) g.point = boundedPoint("point", x->vec3());
    } else {
      e.at("shape").fail("must be \"sphere\", \"capsule\" or \"plane\" (got " + inQuotes(shape) + ")");
    }
    geoms.push_back(g);
  }
  // Bodies whose geoms do not touch: parent and child (as MuJoCo's rule, but for Ground's children),
  // and the listed pairs.
  std::set<std::pair<std::string, std::string>> excluded;
  auto exclude = [&](const std::string& a, const std::string& b) {
    excluded.insert({a, b});
    excluded.insert({b, a});
  };
  for (const BodyDesc& b : builder_.bodies())
    if (b.parent != "ground") exclude(b.name, b.parent);
  if (auto x = n.find("exclude"))
    for (const JsonNode& pair : x->elements()) {
      const std::vector<JsonNode> ends = pair.elements(2);
      exclude(resolve(ends[0]).body, resolve(ends[1]).body);
    }
  std::size_t contacts = 0;
  for (std::size_t i = 0; i < geoms.size(); ++i)
    for (std::size_t j = i + 1; j < geoms.size(); ++j) {
      const CollisionGeom *a = &geoms[i], *b = &geoms[j];
      if (a->body == b->body || (a->body == "ground" && b->body == "ground") || excluded.count({a->body, b->body}))
        continue;
      if (++contacts > kMaxCollisionContacts)
        n.at("geoms").fail("make more than " + std::to_string(kMaxCollisionContacts) +
                           " contacts (every two geoms that may touch), the limit of a scene; exclude body pairs "
                           "that never touch (\"exclude\")");
      const CompliantMaterial m = pairMaterial(a->material, b->material);
      const bool lagged = a->lagged && b->lagged;
      if (a->plane || b->plane) {  // a half-space on Ground and a body's sphere or capsule
        if (b->plane) std::swap(a, b);
        PlaneContactDesc d;
        d.name = a->name + "/" + b->name;
        d.body = b->body;
        d.shape = b->shape;
        d.X_BG = b->X_BG;
        d.size = b->size;
        d.planeNormal = a->normal;
        d.planePoint = a->point;
        builder_.add(compliant(d, m, lagged, timestep));
        continue;
      }
      if (a->shape > b->shape) std::swap(a, b);  // MuJoCo's order: the sphere first
      PairContactDesc d;
      d.name = a->name + "/" + b->name;
      d.body1 = a->body;
      d.body2 = b->body;
      d.shape1 = a->shape;
      d.shape2 = b->shape;
      d.X_BG1 = a->X_BG;
      d.X_BG2 = b->X_BG;
      d.size1 = a->size;
      d.size2 = b->size;
      builder_.add(compliant(d, m, lagged, timestep));
    }
}

}  // namespace lockstep::io
