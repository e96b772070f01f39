// MuJoCo's soft-constraint law for an MJCF import (mjcf_soft.h).
#include "mjcf_soft.h"

#include <algorithm>

namespace lockstep {

namespace {

// Whether body b is what MuJoCo 4's compiler calls simple with sliders only (body_simple 2): a simple
// body (this compiler's body_simple, its level 1 in MuJoCo 4) with joints, all of them slides.
bool simpleSlidingBody(const mjModel* m, int b) {
  if (b <= 0 || !m->body_simple[b] || m->body_dofnum[b] == 0) return false;
  for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; ++j)
    if (m->jnt_type[j] != mjJNT_SLIDE) return false;
  return true;
}

// MuJoCo 4's body_invweight0 (translation) of body b: a simple sliding body's is 1 / its mass, its
// joints' armature aside (Pusher's object); any other's is J M^-1 J''s translation average, as this
// compiler's and MuJoCo 4's general rule give it.
double translationInvweight(const mjModel* m, int b) {
  return simpleSlidingBody(m, b) ? 1 / std::max(mjMINVAL, m->body_mass[b]) : m->body_invweight0[2 * b];
}

// mj_contactParam's parameters of the contact between geoms g1 and g2 into d (a PlaneContactDesc or
// a PairContactDesc): the higher priority's, else condim and each friction (sliding, torsional,
// rolling) the larger, solref and solimp mixed by solmix (solref's direct format: the smaller).
template <class Desc>
void mixContactLaw(const mjModel* m, int g1, int g2, Desc& d) {
  const int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  const mjtNum *ref1 = m->geom_solref + mjNREF * g1, *ref2 = m->geom_solref + mjNREF * g2;
  const mjtNum *imp1 = m->geom_solimp + mjNIMP * g1, *imp2 = m->geom_solimp + mjNIMP * g2;
  if (p1 != p2) {
    const int w = p1 > p2 ? g1 : g2;
    d.friction = m->geom_friction[3 * w];
    d.torsional = m->geom_friction[3 * w + 1];
    d.rolling = m->geom_friction[3 * w + 2];
    for (int k = 0; k < 2; ++k) d.solref[k] = m->geom_solref[mjNREF * w + k];
    for (int k = 0; k < 5; ++k) d.solimp[k] = m->geom_solimp[mjNIMP * w + k];
  } else {
    d.friction = std::max(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
    d.torsional = std::max(m->geom_friction[3 * g1 + 1], m->geom_friction[3 * g2 + 1]);
    d.rolling = std::max(m->geom_friction[3 * g1 + 2], m->geom_friction[3 * g2 + 2]);
    const mjtNum s1 = m->geom_solmix[g1], s2 = m->geom_solmix[g2];
    const mjtNum mix = s1 >= mjMINVAL && s2 >= mjMINVAL ? s1 / (s1 + s2)
                       : s1 < mjMINVAL && s2 < mjMINVAL ? 0.5
                       : s1 < mjMINVAL                  ? 0.0
                                                        : 1.0;
    for (int k = 0; k < 2; ++k)
      d.solref[k] = ref1[0] > 0 && ref2[0] > 0 ? mix * ref1[k] + (1 - mix) * ref2[k] : std::min(ref1[k], ref2[k]);
    for (int k = 0; k < 5; ++k) d.solimp[k] = mix * imp1[k] + (1 - mix) * imp2[k];
  }
  d.condim = mjcfContactCondim(m, g1, g2);
  // Summed, as MuJoCo 3 and later sum them (MuJoCo 2 took the larger of each). The geoms' gap is not
  // subtracted: MuJoCo 4's contacts include everything within the summed margin (includemargin;
  // MuJoCo 3 and earlier left out the last gap of it).
  d.margin = m->geom_margin[g1] + m->geom_margin[g2];
  d.gap = 0;
  d.elliptic = m->opt.cone == mjCONE_ELLIPTIC;  // MuJoCo's cone for every contact with friction
  d.impratio = m->opt.impratio;
  d.timestep = m->opt.timestep;
  // diagApprox's translation: both bodies' invweight0 (the world's is 0).
  d.invweight = translationInvweight(m, m->geom_bodyid[g1]) + translationInvweight(m, m->geom_bodyid[g2]);
}

}  // namespace

int mjcfContactCondim(const mjModel* m, int g1, int g2) {
  const int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  return p1 != p2 ? m->geom_condim[p1 > p2 ? g1 : g2] : std::max(m->geom_condim[g1], m->geom_condim[g2]);
}

PlaneContactShape mjcfShape(int type) {
  switch (type) {
    case mjGEOM_SPHERE: return kShapeSphere;
    case mjGEOM_CAPSULE: return kShapeCapsule;
    case mjGEOM_BOX: return kShapeBox;
    case mjGEOM_CYLINDER: return kShapeCylinder;
    // An ellipsoid; the other kinds (meshes, height fields, SDFs) never reach a plane or a pair
    // contact (the import names them in a warning first).
    default: return kShapeEllipsoid;
  }
}

PlaneContactDesc mjcfPlaneContact(const mjModel* m, int g, int plane, const std::string& name, const std::string& body,
                                  const Transformd& X_BG, const Transformd& X_GP) {
  PlaneContactDesc d;
  d.name = name;
  d.body = body;
  d.shape = mjcfShape(m->geom_type[g]);
  d.X_BG = X_BG;
  d.size = {{m->geom_size[3 * g], m->geom_size[3 * g + 1], m->geom_size[3 * g + 2]}};
  d.planeNormal = X_GP.R * Vec3d{{0, 0, 1}};
  d.planePoint = X_GP.p;
  d.mujocoBody = m->geom_bodyid[g];
  mixContactLaw(m, plane, g, d);
  return d;
}

PairContactDesc mjcfPairContact(const mjModel* m, int g1, int g2, const std::string& name, const std::string& body1,
                                const std::string& body2, const Transformd& X_BG1, const Transformd& X_BG2) {
  PairContactDesc d;
  d.name = name;
  d.body1 = body1;
  d.body2 = body2;
  d.shape1 = mjcfShape(m->geom_type[g1]);
  d.shape2 = mjcfShape(m->geom_type[g2]);
  d.X_BG1 = X_BG1;
  d.X_BG2 = X_BG2;
  d.size1 = {{m->geom_size[3 * g1], m->geom_size[3 * g1 + 1], m->geom_size[3 * g1 + 2]}};
  d.size2 = {{m->geom_size[3 * g2], m->geom_size[3 * g2 + 1], m->geom_size[3 * g2 + 2]}};
  d.mujocoBody1 = m->geom_bodyid[g1];
  d.mujocoBody2 = m->geom_bodyid[g2];
  mixContactLaw(m, g1, g2, d);
  return d;
}

PairContactDesc mjcfExplicitPair(const mjModel* m, int p, int g1, int g2, const std::string& name, const std::string& body1,
                                 const std::string& body2, const Transformd& X_BG1, const Transformd& X_BG2) {
  PairContactDesc d = mjcfPairContact(m, g1, g2, name, body1, body2, X_BG1, X_BG2);
  // The pair's own condim, friction, solref, solimp and margin (MuJoCo's <pair> attributes).
  d.condim = m->pair_dim[p];
  // (pair_friction: t1, t2, torsional, roll1, roll2; a second tangent's or second rolling axis's own
  // value is named in a warning by the importer.)
  d.friction = m->pair_friction[5 * p];
  d.torsional = m->pair_friction[5 * p + 2];
  d.rolling = m->pair_friction[5 * p + 3];
  for (int k = 0; k < 2; ++k) d.solref[k] = m->pair_solref[mjNREF * p + k];
  for (int k = 0; k < 5; ++k) d.solimp[k] = m->pair_solimp[mjNIMP * p + k];
  d.margin = m->pair_margin[p];
  return d;
}

SoftLimitDesc mjcfSoftLimit(const mjModel* m, int j, const std::string& coordinate) {
  SoftLimitDesc d;
  d.coordinate = coordinate;
  d.lower = m->jnt_range[2 * j];
  d.upper = m->jnt_range[2 * j + 1];
  d.margin = m->jnt_margin[j];
  for (int k = 0; k < 2; ++k) d.solref[k] = m->jnt_solref[mjNREF * j + k];
  for (int k = 0; k < 5; ++k) d.solimp[k] = m->jnt_solimp[mjNIMP * j + k];
  d.timestep = m->opt.timestep;
  // MuJoCo 4's dof_invweight0: 1 / the mass on a simple sliding body (as its body_invweight0).
  const int b = m->jnt_bodyid[j];
  d.invweight =
      simpleSlidingBody(m, b) ? 1 / std::max(mjMINVAL, m->body_mass[b]) : m->dof_invweight0[m->jnt_dofadr[j]];
  return d;
}

}  // namespace lockstep
