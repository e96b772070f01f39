// The contacts: GroundContact (Simbody 3.7's SmoothSphereHalfSpaceForce, a sphere on a body against
// a half-space on Ground) and SphereContact (simbody-SphereOnSphereContact.txt, a bilateral
// constraint). Their rules as model elements: build, parameter checks, description and topology
// (model.h, "what each element kind defines"). Their physics: physics/force_elements.h and
// physics/constraints.h.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "element_text.h"
#include "lockstep/physics/force_elements.h"

namespace lockstep {

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

// ---- GroundContact ----

GroundContact buildElement(const GroundContactDesc& desc, ElementBuild& build) {
  GroundContactDesc d = desc;
  d.name = elementName(d.name, "ground", build.index);
  const std::string where = build.where("ground contact", d.name);
  GroundContact e{d, build.body(d.body, where, "body")};
  if (e.body < 0) throw ModelError(where + ": body: must be a body, not ground");
  validateGroundSphere(d.center, d.radius, where);
  validateGroundPlane(d.planeNormal, d.planePoint, where);
  validateGroundMaterial(d.material, where);
  // Stored unit, so that a float batch sees the same direction as a double one (a component of
  // 1e155 has no float).
  e.desc.planeNormal = unitVector(d.planeNormal);
  return e;
}

ElementTopology elementTopology(const Model&, const GroundContact& e) { return {e.body, -1, 0, -1}; }

std::string describeElement(const Model& m, const GroundContact& c) {
  const GroundMaterial& p = c.desc.material;
  return textf("ground contact '%s': %s sphere at %s radius %g; half-space normal %s through %s; E %g, c %g, "
               "us %g, ud %g, uv %g, vt %g, cf %g, bd %g, bv %g",
               c.desc.name.c_str(), bodyName(m, c.body).c_str(), formatVec(c.desc.center).c_str(), c.desc.radius,
               formatVec(c.desc.planeNormal).c_str(), formatVec(c.desc.planePoint).c_str(), p.stiffness,
               p.dissipation, p.staticFriction, p.dynamicFriction, p.viscousFriction, p.transitionVelocity, p.cf,
               p.bd, p.bv);
}

InfoSection infoSection(const Model& m, const std::vector<GroundContact>&) {
  // (Under MuJoCo's law a model's contacts are plane and pair contacts: no empty heading here.)
  return {"ground contacts",
          " (spheres on bodies against half-spaces on Ground, stepped explicitly; contacts between moving bodies are "
          "the implicit step's: a scene's collision_geoms)",
          /*showEmpty=*/m.planeContacts().empty() && m.pairContacts().empty()};
}

std::vector<double> parameterBlock(const GroundContact& e, ParamId id) {
  std::vector<double> v;
  const GroundContactDesc& d = e.desc;
  switch (id) {
    case ParamId::groundSphere:
      appendVec3(v, d.center);
      v.push_back(d.radius);
      break;
    case ParamId::groundPlane:
      appendVec3(v, d.planeNormal);
      appendVec3(v, d.planePoint);
      break;
    case ParamId::groundMaterial: {
      const GroundMaterial& p = d.material;
      v = {p.stiffness, p.dissipation, p.staticFriction, p.dynamicFriction, p.viscousFriction,
           p.transitionVelocity, p.cf, p.bd, p.bv};
      break;
    }
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<GroundContact>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::groundSphere: validateGroundSphere(vec3At(v, 0), v[3], where); break;
    case ParamId::groundPlane: validateGroundPlane(vec3At(v, 0), vec3At(v, 3), where); break;
    case ParamId::groundMaterial:
      validateGroundMaterial({v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]}, where);
      break;
    default: break;
  }
}

// ---- SphereContact ----

namespace {

// The nearest common ancestor of two bodies (-1: Ground), by walking up from the deeper one.
int commonAncestor(const Model& m, int a, int b) {
  auto depth = [&](int x) {
    int d = 0;
    for (; x >= 0; x = m.body(x).parent) ++d;
    return d;
  };
  int da = depth(a), db = depth(b);
  for (; da > db; --da) a = m.body(a).parent;
  for (; db > da; --db) b = m.body(b).parent;
  while (a != b) {
    a = m.body(a).parent;
    b = m.body(b).parent;
  }
  return a;
}

}  // namespace

SphereContact buildElement(const SphereContactDesc& desc, ElementBuild& build) {
  SphereContactDesc d = desc;
  d.name = elementName(d.name, "contact", build.index);
  const std::string where = build.where("sphere contact", d.name);
  SphereContact e{d, build.body(d.bodyF, where, "bodyF"), build.body(d.bodyB, where, "bodyB")};
  if (e.bodyF == e.bodyB) throw ModelError(where + ": bodyB: must differ from bodyF (" + quoted(d.bodyF) + ")");
  for (int k = 0; k < 3; ++k) {
    validateFinite(d.centerOnF[k], where, "center on F");
    validateFinite(d.centerOnB[k], where, "center on B");
  }
  validateSphereRadii(d.radiusOnF, d.radiusOnB, where);
  return e;
}

ElementTopology elementTopology(const Model& m, const SphereContact& e) {
  return {e.bodyF, e.bodyB, e.desc.enforceRolling ? kContactRolling : 0, commonAncestor(m, e.bodyF, e.bodyB)};
}

std::string describeElement(const Model& m, const SphereContact& c) {
  return textf("sphere contact '%s': %s sphere at %s radius %g, %s sphere at %s radius %g, %s, %s",
               c.desc.name.c_str(), bodyName(m, c.bodyF).c_str(), formatVec(c.desc.centerOnF).c_str(),
               c.desc.radiusOnF, bodyName(m, c.bodyB).c_str(), formatVec(c.desc.centerOnB).c_str(), c.desc.radiusOnB,
               c.desc.enforceRolling ? "rolling" : "no rolling", c.desc.enabledByDefault ? "enabled" : "disabled");
}

std::vector<double> parameterBlock(const SphereContact& e, ParamId id) {
  std::vector<double> v;
  switch (id) {
    case ParamId::sphereCenters:
      appendVec3(v, e.desc.centerOnF);
      appendVec3(v, e.desc.centerOnB);
      break;
    case ParamId::sphereRadii: v = {e.desc.radiusOnF, e.desc.radiusOnB}; break;
    case ParamId::contactEnabled: v = {e.desc.enabledByDefault ? 1.0 : 0.0}; break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<SphereContact>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::sphereCenters:
      for (int k = 0; k < 6; ++k) validateFinite(v[k], where, k < 3 ? "center on F" : "center on B");
      break;
    case ParamId::sphereRadii: validateSphereRadii(v[0], v[1], where); break;
    case ParamId::contactEnabled:
      if (v[0] != 0 && v[0] != 1) throw ModelError(where + ": enabled: must be 0 or 1");
      break;
    default: break;
  }
}

InfoSection infoSection(const Model& m, const std::vector<SphereContact>&) {
  return {"constraints", " (" + std::to_string(m.numConstraintEquations()) + " equations)"};
}

}  // namespace lockstep
