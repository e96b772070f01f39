// MuJoCo's view of an MJCF model: MujocoJoint (where a joint's values are in MuJoCo's qpos and qvel)
// and MujocoBody (a MuJoCo body on the Lockstep body carrying it, with its own mass properties),
// which the MJCF importer adds. Their rules as model elements: build, topology, parameters and
// description (model.h, "what each element kind defines"). What the per-world code makes of them:
// physics/mujoco_bodies.h.
#include "element_text.h"

namespace lockstep {

// ---- MujocoJoint: the mobilizer of a Lockstep body whose coordinates are MuJoCo's joint's ----

MujocoJoint buildElement(const MujocoJointDesc& d, ElementBuild& build) {
  const std::string where = build.where("MuJoCo joint", d.name);
  const int b = build.body(d.body, where, "body");
  if (b < 0) throw ModelError(where + ": body: must be a body, not ground");
  if (d.type < kMujocoFree || d.type > kMujocoHinge)
    throw ModelError(where + ": type: must be 0 (free), 1 (ball), 2 (slide) or 3 (hinge)");
  if (d.qposAdr < 0 || d.dofAdr < 0) throw ModelError(where + ": address: must be >= 0");
  const Body& body = build.model.body(b);
  const int nq = d.type == kMujocoFree ? 7 : d.type == kMujocoBall ? 4 : 1;
  const MobilizerType want = d.type == kMujocoFree   ? MobilizerType::Free
                             : d.type == kMujocoBall ? MobilizerType::Ball
                             : d.type == kMujocoSlide ? MobilizerType::Slider
                                                      : MobilizerType::Pin;
  if (body.mobilizer != want || body.nq != nq)
    throw ModelError(where + ": body: its mobilizer is a " + mobilizerName(body.mobilizer) + ", not a " +
                     mobilizerName(want));
  return {d, body.qOffset, body.uOffset};
}

MujocoJointMap elementTopology(const Model&, const MujocoJoint& e) {
  return {e.desc.type, e.desc.qposAdr, e.desc.dofAdr, e.q, e.u};
}

std::vector<double> parameterBlock(const MujocoJoint&, ParamId) { return {}; }
void validateParameterBlock(const std::vector<MujocoJoint>&, ParamId, const std::vector<double>&, const std::string&) {}

std::string describeElement(const Model& m, const MujocoJoint& e) {
  static const char* const kTypes[] = {"free", "ball", "slide", "hinge"};
  return textf("MuJoCo joint '%s': %s, qpos %d, dof %d: q %d, u %d of %s", e.desc.name.c_str(), kTypes[e.desc.type],
               e.desc.qposAdr, e.desc.dofAdr, e.q, e.u, m.body(m.bodyIndex(e.desc.body)).jointName.c_str());
}

InfoSection infoSection(const Model&, const std::vector<MujocoJoint>&) {
  return {"MuJoCo joints", " (MuJoCo's qpos and qvel: record them as \"mujocoQpos\" and \"mujocoQvel\")",
          /*showEmpty=*/false};
}

// ---- MujocoBody ----

MujocoBody buildElement(const MujocoBodyDesc& d, ElementBuild& build) {
  const std::string where = build.where("MuJoCo body", d.name);
  const int index = static_cast<int>(build.index);
  if (d.parent >= index || d.parent < -1 || (index > 0) != (d.parent >= 0))
    throw ModelError(where + ": parent: must be an earlier MuJoCo body (body 0, the world body, has none)");
  if (d.root < 0 || d.root > index) throw ModelError(where + ": root: must be this or an earlier MuJoCo body");
  const MujocoBody e{d, build.body(d.body, where, "body")};
  validateTransform(d.X_BL, where, "X_BL");
  validateMassProperties(d.mass, where, build.model.largestInertia());
  return e;
}

MujocoBodyTopology elementTopology(const Model& m, const MujocoBody& e) {
  const bool own = e.body >= 0 && m.body(e.body).name == e.desc.name;
  return {e.body, e.desc.root, e.desc.parent, own ? 1 : 0};
}

std::vector<double> parameterBlock(const MujocoBody& e, ParamId id) {
  std::vector<double> v;
  const MassProperties& mp = e.desc.mass;
  switch (id) {
    case ParamId::mujocoBodyFrame: appendTransform(v, e.desc.X_BL); break;
    case ParamId::mujocoBodyMass:
      v = {mp.mass, mp.com[0], mp.com[1], mp.com[2], mp.inertia.xx, mp.inertia.yy, mp.inertia.zz,
           mp.inertia.xy, mp.inertia.xz, mp.inertia.yz};
      break;
    default: break;
  }
  return v;
}

void validateParameterBlock(const std::vector<MujocoBody>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  switch (id) {
    case ParamId::mujocoBodyFrame: validateTransform(transformAt(v, 0), where, "X_BL"); break;
    case ParamId::mujocoBodyMass: {
      MassProperties mp;
      mp.mass = v[0];
      mp.com = vec3At(v, 1);
      mp.inertia = {v[4], v[5], v[6], v[7], v[8], v[9]};
      validateMassProperties(mp, where);
      break;
    }
    default: break;
  }
}

std::string describeElement(const Model& m, const MujocoBody& e) {
  return textf("MuJoCo body '%s': on %s at %s, mass %g", e.desc.name.c_str(), bodyName(m, e.body).c_str(),
               formatVec(e.desc.X_BL.p).c_str(), e.desc.mass.mass);
}

InfoSection infoSection(const Model&, const std::vector<MujocoBody>&) {
  return {"MuJoCo bodies", " (xpos, xmat, xipos, subtree_com, cinert, cvel, cfrc_ext: record them as \"mujocoBody\")",
          /*showEmpty=*/false};
}

}  // namespace lockstep
