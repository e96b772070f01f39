// The force elements between bodies: LinearBushing (simbody-LinearBushing.txt), SpringDamper
// (drake-LinearSpringDamper.txt) and ConstantForce (Simbody's Force::ConstantForce). Their rules as model elements: build, parameter checks,
// description and topology (model.h, "what each element kind defines"). Their physics:
// physics/force_elements.h.
#include <algorithm>
#include <sstream>

#include "element_text.h"

namespace lockstep {

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

// ---- LinearBushing ----

LinearBushing buildElement(const LinearBushingDesc& desc, ElementBuild& build) {
  LinearBushingDesc d = desc;
  d.name = elementName(d.name, "bushing", build.index);
  const std::string where = build.where("bushing", d.name);
  LinearBushing e{d, build.body(d.body1, where, "body1"), build.body(d.body2, where, "body2")};
  if (e.body1 == e.body2) throw ModelError(where + ": body2: must differ from body1 (" + quoted(d.body1) + ")");
  validateTransform(d.X_B1F, where, "frame on body1");
  validateTransform(d.X_B2M, where, "frame on body2");
  validateBushingParameters(d.stiffness, d.damping, where);
  return e;
}

ElementTopology elementTopology(const Model&, const LinearBushing& e) { return {e.body1, e.body2, 0, -1}; }

std::string describeElement(const Model& m, const LinearBushing& e) {
  return textf("linear bushing '%s': %s -> %s, stiffness %s, damping %s", e.desc.name.c_str(),
               bodyName(m, e.body1).c_str(), bodyName(m, e.body2).c_str(), formatList(e.desc.stiffness).c_str(),
               formatList(e.desc.damping).c_str());
}

std::vector<double> parameterBlock(const LinearBushing& e, ParamId id) {
  std::vector<double> v;
  switch (id) {
    case ParamId::bushingFrames:
      appendTransform(v, e.desc.X_B1F);
      appendTransform(v, e.desc.X_B2M);
      break;
    case ParamId::bushingStiffness: v.assign(e.desc.stiffness.begin(), e.desc.stiffness.end()); break;
    case ParamId::bushingDamping: v.assign(e.desc.damping.begin(), e.desc.damping.end()); break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<LinearBushing>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  std::array<double, 6> k{}, none{};
  switch (id) {
    case ParamId::bushingFrames:
      validateTransform(transformAt(v, 0), where, "frame on body1");
      validateTransform(transformAt(v, 12), where, "frame on body2");
      break;
    case ParamId::bushingStiffness:
      std::copy(v.begin(), v.end(), k.begin());
      validateBushingParameters(k, none, where);
      break;
    case ParamId::bushingDamping:
      std::copy(v.begin(), v.end(), k.begin());
      validateBushingParameters(none, k, where);
      break;
    default: break;
  }
}

// Bushings and spring-dampers share the heading, with their total count.
InfoSection infoSection(const Model&, const std::vector<LinearBushing>&) { return {"force elements", ""}; }

// ---- SpringDamper ----

SpringDamper buildElement(const SpringDamperDesc& desc, ElementBuild& build) {
  SpringDamperDesc d = desc;
  d.name = elementName(d.name, "spring", build.index);
  const std::string where = build.where("spring-damper", d.name);
  SpringDamper e{d, build.body(d.bodyA, where, "bodyA"), build.body(d.bodyB, where, "bodyB")};
  if (e.bodyA == e.bodyB) throw ModelError(where + ": bodyB: must differ from bodyA (" + quoted(d.bodyA) + ")");
  for (int k = 0; k < 3; ++k) {
    validateFinite(d.p_AP[k], where, "p_AP");
    validateFinite(d.p_BQ[k], where, "p_BQ");
  }
  validateSpringParameters(d.freeLength, d.stiffness, d.damping, where);
  return e;
}

ElementTopology elementTopology(const Model&, const SpringDamper& e) { return {e.bodyA, e.bodyB, 0, -1}; }

std::string describeElement(const Model& m, const SpringDamper& e) {
  return textf("spring-damper '%s': %s point %s -> %s point %s, free length %g, stiffness %g, damping %g",
               e.desc.name.c_str(), bodyName(m, e.bodyA).c_str(), formatVec(e.desc.p_AP).c_str(),
               bodyName(m, e.bodyB).c_str(), formatVec(e.desc.p_BQ).c_str(), e.desc.freeLength, e.desc.stiffness,
               e.desc.damping);
}

InfoSection infoSection(const Model&, const std::vector<SpringDamper>&) { return {"force elements", ""}; }

std::vector<double> parameterBlock(const SpringDamper& e, ParamId id) {
  std::vector<double> v;
  switch (id) {
    case ParamId::springParams: v = {e.desc.freeLength, e.desc.stiffness, e.desc.damping}; break;
    case ParamId::springPoints:
      appendVec3(v, e.desc.p_AP);
      appendVec3(v, e.desc.p_BQ);
      break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<SpringDamper>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::springParams: validateSpringParameters(v[0], v[1], v[2], where); break;
    case ParamId::springPoints:
      for (int k = 0; k < 6; ++k) validateFinite(v[k], where, k < 3 ? "p_AP" : "p_BQ");
      break;
    default: break;
  }
}

// ---- ConstantForce ----

ConstantForce buildElement(const ConstantForceDesc& desc, ElementBuild& build) {
  ConstantForceDesc d = desc;
  d.name = elementName(d.name, "force", build.index);
  const std::string where = build.where("constant force", d.name);
  const ConstantForce e{d, build.body(d.body, where, "body")};
  if (e.body < 0) throw ModelError(where + ": body: must be a body, not ground");
  for (int k = 0; k < 3; ++k) {
    validateFinite(d.station[k], where, "station");
    validateFinite(d.force[k], where, "force");
  }
  return e;
}

ElementTopology elementTopology(const Model&, const ConstantForce& e) { return {e.body, -1, 0, -1}; }

std::string describeElement(const Model& m, const ConstantForce& e) {
  return textf("constant force '%s': %s station %s, force %s in Ground", e.desc.name.c_str(),
               bodyName(m, e.body).c_str(), formatVec(e.desc.station).c_str(), formatVec(e.desc.force).c_str());
}

InfoSection infoSection(const Model&, const std::vector<ConstantForce>&) { return {"force elements", ""}; }

std::vector<double> parameterBlock(const ConstantForce& e, ParamId id) {
  std::vector<double> v;
  if (id == ParamId::constantForceParams) {
    appendVec3(v, e.desc.station);
    appendVec3(v, e.desc.force);
  }
  return v;
}

void validateParameterBlock(const std::vector<ConstantForce>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  if (id == ParamId::constantForceParams)
    for (int k = 0; k < 6; ++k) validateFinite(v[k], where, k < 3 ? "station" : "force");
}

}  // namespace lockstep
