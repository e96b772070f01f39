// The elements of MuJoCo's soft-constraint law: PlaneContact (a primitive geom on a body against a
// plane fixed in Ground), PairContact (two primitive geoms on different bodies) and SoftLimit (a
// hinge's or slide's range). Their rules as model elements:
// build, topology, parameters and description (model.h, "what each element kind defines"). Their
// physics: physics/soft_constraints.h.
#include <algorithm>
#include <cmath>

#include "element_text.h"
#include "lockstep/physics/force_elements.h"
#include "lockstep/physics/soft_constraints.h"

namespace lockstep {

namespace {

const char* const kShapeNames[] = {"sphere", "capsule", "ellipsoid", "cylinder", "box"};

// solref and solimp as MuJoCo takes them: finite; solref's two numbers of one sign (standard: both
// positive, direct: both negative).
void validateSoftLaw(const std::array<double, 2>& solref, const std::array<double, 5>& solimp, double timestep,
                     double invweight, const std::string& where) {
  for (double x : solref) validateFinite(x, where, "solref");
  if ((solref[0] > 0) != (solref[1] > 0) || solref[0] == 0)
    throw ModelError(where + ": solref: both positive (timeconst, dampratio) or both negative (-stiffness, -damping)");
  for (double x : solimp) validateFinite(x, where, "solimp");
  validateFinite(timestep, where, "timestep");
  if (!(timestep > 0)) throw ModelError(where + ": timestep: must be > 0");
  validateNonNegative(invweight, where, "invweight");
}

// A geom's MuJoCo size: positive where its shape reads it (a sphere 1, a capsule and a cylinder 2, a
// box 3), finite.
void validateShapeSize(int shape, const Vec3d& size, const std::string& where, const char* field) {
  const int sizes = shape == kShapeSphere ? 1 : shape == kShapeBox || shape == kShapeEllipsoid ? 3 : 2;
  for (int k = 0; k < sizes; ++k) {
    validateFinite(size[k], where, field);
    if (!(size[k] > 0)) throw ModelError(where + ": " + field + ": must be > 0 (a " + kShapeNames[shape] + " takes " +
                                         std::to_string(sizes) + ")");
  }
}

// The contact law's values shared by plane and pair contacts (friction .. invweight), as given.
template <class Desc>
void validateContactLaw(const Desc& d, const std::string& where) {
  if (d.condim != 1 && d.condim != 3 && d.condim != 4 && d.condim != 6)
    throw ModelError(where + ": condim: 1, 3, 4 or 6 (MuJoCo's: frictionless, sliding, and torsional, and rolling)");
  validateNonNegative(d.friction, where, "friction");
  validateNonNegative(d.torsional, where, "torsional");
  validateNonNegative(d.rolling, where, "rolling");
  validateNonNegative(d.margin, where, "margin");
  validateNonNegative(d.gap, where, "gap");
  validateFinite(d.impratio, where, "impratio");
  if (!(d.impratio > 0)) throw ModelError(where + ": impratio: must be > 0");
  validateSoftLaw(d.solref, d.solimp, d.timestep, d.invweight, where);
}
// How a contact's friction is modelled, after its condim in a description.
template <class Desc>
const char* coneName(const Desc& d) {
  return d.condim == 1 ? "" : d.elliptic ? " (elliptic cone)" : " (pyramid)";
}
// Its friction coefficients as condim reads them: sliding, then torsional (condim 4 and 6), then
// rolling (condim 6).
template <class Desc>
std::string frictionText(const Desc& d) {
  std::string text = textf("friction %g", d.friction);
  if (d.condim >= 4) text += textf(", torsional %g", d.torsional);
  if (d.condim >= 6) text += textf(", rolling %g", d.rolling);
  return text;
}
template <class Desc>
std::vector<double> contactLawBlock(const Desc& d) {
  std::vector<double> v = {d.friction, d.solref[0], d.solref[1]};
  v.insert(v.end(), d.solimp.begin(), d.solimp.end());
  v.insert(v.end(), {d.margin, d.gap, d.impratio, d.timestep, d.invweight, d.torsional, d.rolling});
  return v;
}
void validateContactLawBlock(const std::vector<double>& v, const std::string& where) {
  validateNonNegative(v[0], where, "friction");
  validateSoftLaw({v[1], v[2]}, {v[3], v[4], v[5], v[6], v[7]}, v[11], v[12], where);
  validateNonNegative(v[8], where, "margin");
  validateNonNegative(v[9], where, "gap");
  if (!(v[10] > 0) || !std::isfinite(v[10])) throw ModelError(where + ": impratio: must be > 0");
  validateNonNegative(v[13], where, "torsional");
  validateNonNegative(v[14], where, "rolling");
}

// The points and rows of the plane and pair contacts before those of a kind's element: the plane
// contacts come first, then the pair contacts, then the limits.
void softSlotsSoFar(const Model& m, int* point, int* row) {
  *point = *row = 0;
  for (const PlaneContact& e : m.planeContacts()) {
    *point += softPointSlots(e.desc.shape);
    *row += softPointSlots(e.desc.shape) * softRowsPerPoint(e.desc.condim, e.desc.elliptic);
  }
  for (const PairContact& e : m.pairContacts()) {
    *point += softPairSlots(e.desc.shape1, e.desc.shape2);
    *row += softPairSlots(e.desc.shape1, e.desc.shape2) * softRowsPerPoint(e.desc.condim, e.desc.elliptic);
  }
}

}  // namespace

// The compliant law's material of a plane contact (E, c, vs) and stop (k, d), as given.
void validateCompliance(double stiffness, double dissipation, const std::string& where) {
  validateNonNegative(stiffness, where, "stiffness");
  validateNonNegative(dissipation, where, "dissipation");
}
void validateStictionVelocity(double vs, const std::string& where) {
  validateFinite(vs, where, "stiction_velocity");
  if (!(vs > 0))
    throw ModelError(where + ": stiction_velocity: must be > 0 (the compliant law's friction regularization)");
}

// A contact's compliant-law block (plane and pair contacts): E, c, vs, lagged.
static void validateComplianceBlock(const std::vector<double>& v, const std::string& where) {
  validateCompliance(v[0], v[1], where);
  validateStictionVelocity(v[2], where);
  if (v[3] != 0 && v[3] != 1)
    throw ModelError(where + ": lagged: 1 (the lagged approximation of friction) or 0 (the similar one)");
}

CompliantMaterial pairMaterial(const CompliantMaterial& a, const CompliantMaterial& b) {
  const double k1 = std::pow(a.stiffness, 2.0 / 3.0), k2 = std::pow(b.stiffness, 2.0 / 3.0);
  const double s1 = k1 + k2 > 0 ? k2 / (k1 + k2) : 0.5;
  CompliantMaterial m;
  // k = s1 k1, the pair's; its E against itself: E^(2/3) / 2 = k.
  const double k = s1 * k1;
  m.stiffness = std::sqrt(8 * k * k * k);
  m.dissipation = a.dissipation * s1 + b.dissipation * (1 - s1);
  m.friction = a.friction + b.friction > 0 ? 2 * a.friction * b.friction / (a.friction + b.friction) : 0;
  m.stictionVelocity = std::max(a.stictionVelocity, b.stictionVelocity);
  return m;
}

// ---- PlaneContact ----

PlaneContact buildElement(const PlaneContactDesc& desc, ElementBuild& build) {
  PlaneContactDesc d = desc;
  d.name = elementName(d.name, "plane_contact", build.index);
  const std::string where = build.where("plane contact", d.name);
  const int body = build.body(d.body, where, "body");
  if (body < 0) throw ModelError(where + ": body: must be a body, not ground");
  if (d.shape < kShapeSphere || d.shape > kShapeBox)
    throw ModelError(where + ": shape: a sphere, capsule, ellipsoid, cylinder or box");
  validateShapeSize(d.shape, d.size, where, "size");
  validateTransform(d.X_BG, where, "X_BG");
  validateGroundPlane(d.planeNormal, d.planePoint, where);
  d.planeNormal = unitVector(d.planeNormal);
  if (d.law != kLawMujoco && d.law != kLawCompliant) throw ModelError(where + ": law: MuJoCo's or the compliant law");
  if (d.law == kLawCompliant) {
    if (d.shape != kShapeSphere && d.shape != kShapeCapsule)
      throw ModelError(where + ": shape: a sphere or a capsule under the compliant law (its Hertz radius)");
    if (d.condim != 3) throw ModelError(where + ": condim: 3 under the compliant law (sliding friction; 0 for none)");
    d.elliptic = true;  // its rows are the frame's: n, t1, t2
    validateCompliance(d.stiffness, d.dissipation, where);
    validateStictionVelocity(d.stictionVelocity, where);
  }
  validateContactLaw(d, where);
  int point, row;
  softSlotsSoFar(build.model, &point, &row);
  return {d, body, point, row};
}

PlaneContactTopology elementTopology(const Model&, const PlaneContact& e) {
  return {e.body,  e.desc.shape, e.desc.condim, e.desc.elliptic ? 1 : 0, softPointSlots(e.desc.shape),
          e.point, e.row,  e.desc.mujocoBody, e.desc.law};
}

std::vector<double> parameterBlock(const PlaneContact& e, ParamId id) {
  std::vector<double> v;
  const PlaneContactDesc& d = e.desc;
  switch (id) {
    case ParamId::planeContactGeom:
      appendTransform(v, d.X_BG);
      appendVec3(v, d.size);
      appendVec3(v, d.planeNormal);
      appendVec3(v, d.planePoint);
      break;
    case ParamId::planeContactLaw: v = contactLawBlock(d); break;
    case ParamId::planeContactCompliance:
      v = {d.stiffness, d.dissipation, d.stictionVelocity, d.lagged ? 1.0 : 0.0};
      break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<PlaneContact>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::planeContactGeom:
      validateTransform(transformAt(v, 0), where, "X_BG");
      for (int k = 12; k < 15; ++k) validateNonNegative(v[k], where, "size");
      validateGroundPlane(vec3At(v, 15), vec3At(v, 18), where);
      if (std::abs(v[15] * v[15] + v[16] * v[16] + v[17] * v[17] - 1) > 1e-9)
        throw ModelError(where + ": normal: must be a unit vector");
      break;
    case ParamId::planeContactLaw: validateContactLawBlock(v, where); break;
    case ParamId::planeContactCompliance: validateComplianceBlock(v, where); break;
    default: break;
  }
}

std::string describeElement(const Model& m, const PlaneContact& e) {
  const PlaneContactDesc& d = e.desc;
  if (d.law == kLawCompliant)
    return textf("plane contact '%s': %s of size %s on %s at %s; plane normal %s through %s; compliant law: E %g, "
                 "c %g, friction %g (%s), stiction velocity %g, step %g, margin %g",
                 d.name.c_str(), kShapeNames[d.shape], formatVec(d.size).c_str(), bodyName(m, e.body).c_str(),
                 formatVec(d.X_BG.p).c_str(), formatVec(d.planeNormal).c_str(), formatVec(d.planePoint).c_str(),
                 d.stiffness, d.dissipation, d.friction, d.lagged ? "lagged" : "similar", d.stictionVelocity,
                 d.timestep, d.margin);
  return textf("plane contact '%s': %s of size %s on %s at %s; plane normal %s through %s; condim %d%s, "
               "%s, solref (%g, %g), solimp (%g, %g, %g, %g, %g), margin %g, gap %g",
               d.name.c_str(), kShapeNames[d.shape], formatVec(d.size).c_str(), bodyName(m, e.body).c_str(),
               formatVec(d.X_BG.p).c_str(), formatVec(d.planeNormal).c_str(), formatVec(d.planePoint).c_str(), d.condim,
               coneName(d), frictionText(d).c_str(), d.solref[0], d.solref[1], d.solimp[0], d.solimp[1], d.solimp[2],
               d.solimp[3], d.solimp[4], d.margin, d.gap);
}

InfoSection infoSection(const Model&, const std::vector<PlaneContact>&) {
  return {"plane contacts",
          " (MuJoCo's soft-constraint law: its contact points, friction pyramids, solref, solimp; or the compliant "
          "law's implicit Hunt-Crossley contact)",
          /*showEmpty=*/false};
}

// ---- PairContact ----

PairContact buildElement(const PairContactDesc& desc, ElementBuild& build) {
  PairContactDesc d = desc;
  d.name = elementName(d.name, "pair_contact", build.index);
  const std::string where = build.where("pair contact", d.name);
  const int body1 = build.body(d.body1, where, "body1"), body2 = build.body(d.body2, where, "body2");
  if (body1 == body2) throw ModelError(where + ": body2: must differ from body1 (a body's own geoms do not touch)");
  if (d.shape1 > d.shape2)
    throw ModelError(where + ": shape1: must not come after shape2 (MuJoCo's order: sphere, capsule, ellipsoid, cylinder, box)");
  if (!softPairModelled(d.shape1, d.shape2))
    throw ModelError(where + ": shape: a sphere or a capsule with any shape, an ellipsoid with an ellipsoid, a cylinder or "
                             "a box, or two boxes (cylinder pairs and cylinder-box: not yet)");
  validateShapeSize(d.shape1, d.size1, where, "size1");
  validateShapeSize(d.shape2, d.size2, where, "size2");
  validateTransform(d.X_BG1, where, "X_BG1");
  validateTransform(d.X_BG2, where, "X_BG2");
  if (d.law != kLawMujoco && d.law != kLawCompliant) throw ModelError(where + ": law: MuJoCo's or the compliant law");
  if (d.law == kLawCompliant) {
    if (d.shape2 > kShapeCapsule)
      throw ModelError(where + ": shape: two spheres or capsules under the compliant law (their Hertz radii)");
    if (d.condim != 3) throw ModelError(where + ": condim: 3 under the compliant law (sliding friction; 0 for none)");
    d.elliptic = true;  // its rows are the frame's: n, t1, t2
    validateCompliance(d.stiffness, d.dissipation, where);
    validateStictionVelocity(d.stictionVelocity, where);
  }
  validateContactLaw(d, where);
  PairContact e{d, body1, body2, 0, 0};
  softSlotsSoFar(build.model, &e.point, &e.row);
  return e;
}

PairContactTopology elementTopology(const Model&, const PairContact& e) {
  return {e.body1, e.body2, e.desc.shape1, e.desc.shape2, e.desc.condim, e.desc.elliptic ? 1 : 0,
          softPairSlots(e.desc.shape1, e.desc.shape2), e.point, e.row, e.desc.mujocoBody1, e.desc.mujocoBody2,
          e.desc.law};
}

std::vector<double> parameterBlock(const PairContact& e, ParamId id) {
  std::vector<double> v;
  const PairContactDesc& d = e.desc;
  switch (id) {
    case ParamId::pairContactGeom:
      appendTransform(v, d.X_BG1);
      appendVec3(v, d.size1);
      appendTransform(v, d.X_BG2);
      appendVec3(v, d.size2);
      break;
    case ParamId::pairContactLaw: v = contactLawBlock(d); break;
    case ParamId::pairContactCompliance:
      v = {d.stiffness, d.dissipation, d.stictionVelocity, d.lagged ? 1.0 : 0.0};
      break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<PairContact>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::pairContactGeom:
      validateTransform(transformAt(v, 0), where, "X_BG1");
      validateTransform(transformAt(v, 15), where, "X_BG2");
      for (int k : {12, 13, 14, 27, 28, 29}) validateNonNegative(v[k], where, k < 15 ? "size1" : "size2");
      break;
    case ParamId::pairContactLaw: validateContactLawBlock(v, where); break;
    case ParamId::pairContactCompliance: validateComplianceBlock(v, where); break;
    default: break;
  }
}

std::string describeElement(const Model& m, const PairContact& e) {
  const PairContactDesc& d = e.desc;
  if (d.law == kLawCompliant)
    return textf("pair contact '%s': %s of size %s on %s at %s against %s of size %s on %s at %s; compliant law: E %g, "
                 "c %g, friction %g (%s), stiction velocity %g, step %g, margin %g",
                 d.name.c_str(), kShapeNames[d.shape1], formatVec(d.size1).c_str(), bodyName(m, e.body1).c_str(),
                 formatVec(d.X_BG1.p).c_str(), kShapeNames[d.shape2], formatVec(d.size2).c_str(),
                 bodyName(m, e.body2).c_str(), formatVec(d.X_BG2.p).c_str(), d.stiffness, d.dissipation, d.friction,
                 d.lagged ? "lagged" : "similar", d.stictionVelocity, d.timestep, d.margin);
  return textf("pair contact '%s': %s of size %s on %s at %s against %s of size %s on %s at %s; condim %d%s, "
               "%s, solref (%g, %g), solimp (%g, %g, %g, %g, %g), margin %g, gap %g",
               d.name.c_str(), kShapeNames[d.shape1], formatVec(d.size1).c_str(), bodyName(m, e.body1).c_str(),
               formatVec(d.X_BG1.p).c_str(), kShapeNames[d.shape2], formatVec(d.size2).c_str(),
               bodyName(m, e.body2).c_str(), formatVec(d.X_BG2.p).c_str(), d.condim, coneName(d), frictionText(d).c_str(),
               d.solref[0], d.solref[1], d.solimp[0], d.solimp[1], d.solimp[2], d.solimp[3], d.solimp[4], d.margin, d.gap);
}

InfoSection infoSection(const Model&, const std::vector<PairContact>&) {
  return {"pair contacts",
          " (MuJoCo's soft-constraint law between two bodies' geoms: a sphere or a capsule with any shape, box-box; "
          "or the compliant law's implicit Hunt-Crossley contact between spheres and capsules)",
          /*showEmpty=*/false};
}

// ---- SoftLimit ----

SoftLimit buildElement(const SoftLimitDesc& d, ElementBuild& build) {
  const std::string where = "joint limit " + quoted(d.coordinate);
  SoftLimit e{d, 0, 0, 0};
  build.coordinate(d.coordinate, where, &e.q, &e.u);
  if (build.speedsTaken[e.u]++) throw ModelError(where + ": coordinate: has two joint limits");
  if (std::isnan(d.lower) || std::isnan(d.upper) || d.lower > d.upper)
    throw ModelError(where + ": lower: must be a number <= upper");
  validateNonNegative(d.margin, where, "margin");
  validateSoftLaw(d.solref, d.solimp, d.timestep, d.invweight, where);
  if (d.law != kLawMujoco && d.law != kLawCompliant) throw ModelError(where + ": law: MuJoCo's or the compliant law");
  validateCompliance(d.stiffness, d.dissipation, where);
  if (e.desc.name.empty()) e.desc.name = d.coordinate;
  int point, row;
  softSlotsSoFar(build.model, &point, &row);
  e.row = row + 2 * static_cast<int>(build.index);
  return e;
}

SoftLimitTopology elementTopology(const Model&, const SoftLimit& e) { return {e.q, e.u, e.row, e.desc.law}; }

std::vector<double> parameterBlock(const SoftLimit& e, ParamId id) {
  std::vector<double> v;
  const SoftLimitDesc& d = e.desc;
  if (id == ParamId::softLimitCompliance) return {d.stiffness, d.dissipation};
  if (id != ParamId::softLimitLaw) return v;
  v = {d.lower, d.upper, d.margin, d.solref[0], d.solref[1]};
  v.insert(v.end(), d.solimp.begin(), d.solimp.end());
  v.insert(v.end(), {d.timestep, d.invweight});
  return v;
}

void validateParameterBlock(const std::vector<SoftLimit>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  if (id == ParamId::softLimitCompliance) validateCompliance(v[0], v[1], where);
  if (id != ParamId::softLimitLaw) return;
  if (std::isnan(v[0]) || std::isnan(v[1]) || v[0] > v[1]) throw ModelError(where + ": lower: must be a number <= upper");
  validateNonNegative(v[2], where, "margin");
  validateSoftLaw({v[3], v[4]}, {v[5], v[6], v[7], v[8], v[9]}, v[10], v[11], where);
}

std::string describeElement(const Model&, const SoftLimit& e) {
  const SoftLimitDesc& d = e.desc;
  if (d.law == kLawCompliant)
    return textf("limit on %-20s lower %g, upper %g, margin %g, compliant law: stiffness %g, dissipation %g, step %g",
                 d.coordinate.c_str(), d.lower, d.upper, d.margin, d.stiffness, d.dissipation, d.timestep);
  return textf("limit on %-20s lower %g, upper %g, margin %g, solref (%g, %g), solimp (%g, %g, %g, %g, %g)",
               d.coordinate.c_str(), d.lower, d.upper, d.margin, d.solref[0], d.solref[1], d.solimp[0], d.solimp[1],
               d.solimp[2], d.solimp[3], d.solimp[4]);
}

InfoSection infoSection(const Model&, const std::vector<SoftLimit>&) {
  return {"joint limits", " (MuJoCo's soft-constraint law, or the compliant law's implicit stop)", /*showEmpty=*/false};
}

}  // namespace lockstep
