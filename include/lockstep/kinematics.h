// Stage 1, kinematics (outward pass): for each body in topological order, its pose X_GB, its
// spatial velocity V_GB, its rigid-body inertia about Bo in Ground, the columns of its mobilizer's
// H in Ground at Bo, and the velocity-dependent acceleration c_B of the articulated-body algorithm
// (Featherstone's c_i, in Jain's classical-acceleration form):
//   X_GB = X_GP * X_PF * X_FM(q) * ~X_BM
//   V_GB = ~Phi(l) V_GP + H u,                   l = p_PB (from Po to Bo), in G
//   A_GB = ~Phi(l) A_GP + H udot + c_B
#pragma once

#include "lockstep/views.h"

namespace lockstep {

// Rigid-body spatial inertia of body b about Bo, expressed in G, from this world's mass properties.
template <class T>
LOCKSTEP_HD_INLINE SpatialInertia<T> bodyInertiaFromParams(const WorldParams<T>& params, int b, const Rotation<T>& R_GB) {
  const Strided<const T> mp = params.massProps + 10 * b;
  const SpatialInertia<T> I_B =
      SpatialInertia<T>::fromCentral(mp[0], Vec3<T>{{mp[1], mp[2], mp[3]}}, loadSymMat33<T>(mp + 4));
  return I_B.reexpress(R_GB);
}

// With full == false only the poses and velocities are computed (for observations); the sweep
// needs full == true.
template <class T>
LOCKSTEP_HD void computeKinematics(const ModelView<T>& model, const WorldParams<T>& params, Strided<const T> q,
                                   Strided<const T> u, const Workspace<T>& ws, bool full = true) {
  const WorkspaceLayout& L = ws.L;
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    const Strided<const T> qb = q + topo.qOffset;
    const Strided<const T> ub = u + topo.uOffset;

    // Poses.
    Transform<T> X_GP = Transform<T>::identity();
    SpatialVec<T> V_GP = SpatialVec<T>::zero();
    if (topo.parent >= 0) {
      X_GP = loadTransform<T>(ws.at(L.X_GB + 12 * topo.parent));
      V_GP = loadSpatialVec<T>(ws.at(L.V_GB + 6 * topo.parent));
    }
    // Frames whose rotation is the identity (common: chains, URDF joints on axis) skip the product.
    const Transform<T> X_GF = (topo.frames & kPFTranslationOnly)
                                  ? Transform<T>{X_GP.R, X_GP.p + X_GP.R * model.X_PF[b].p}
                                  : X_GP * model.X_PF[b];
    const Transform<T> X_GM = composeMobilizer(X_GF, topo.mobilizer, qb);
    const Transform<T> X_GB = (topo.frames & kMBIdentity) ? X_GM : X_GM * model.X_MB[b];
    storeTransform(ws.at(L.X_GB + 12 * b), X_GB);
    if (full) {
      const SpatialInertia<T> I_G = bodyInertiaFromParams(params, b, X_GB.R);
      const Strided<T> inertia = ws.at(L.I_G + 10 * b);
      inertia[0] = I_G.m;
      storeVec3(inertia + 1, I_G.c);
      storeSymMat33(inertia + 4, I_G.J);
    }

    // H columns, moved from Mo (in F) to Bo (in G): w_j = R_GF Hw_j, v_j = R_GF Hv_j + w_j x r.
    const Vec3<T> r = X_GB.p - X_GM.p;  // p_MoBo, in G
    SpatialVec<T> H_FM[kMaxMobilizerU];
    mobilizerH_FM<T>(topo.mobilizer, qb, H_FM);
    SpatialVec<T> V_rel = SpatialVec<T>::zero();  // velocity of B in P, at Bo, in G
    for (int j = 0; j < topo.nu; ++j) {
      // Pins turn about Fz, sliders move along Fx: their columns are columns of R_GF.
      const Vec3<T> w = topo.mobilizer == MobilizerType::Pin      ? X_GF.R.R.col(2)
                        : topo.mobilizer == MobilizerType::Slider ? Vec3<T>::zero()
                                                                  : X_GF.R * H_FM[j].ang;
      const Vec3<T> v = topo.mobilizer == MobilizerType::Pin      ? Vec3<T>::zero()
                        : topo.mobilizer == MobilizerType::Slider ? X_GF.R.R.col(0)
                                                                  : X_GF.R * H_FM[j].lin;
      const SpatialVec<T> Hj = {w, v + cross(w, r)};
      if (full) storeSpatialVec(ws.at(L.H + 6 * (topo.uOffset + j)), Hj);
      V_rel += ub[j] * Hj;
    }

    // Velocity.
    const Vec3<T> l = X_GB.p - X_GP.p;
    const Vec3<T>& w_GP = V_GP.ang;
    const SpatialVec<T> V_GB = {w_GP + V_rel.ang, V_GP.lin + cross(w_GP, l) + V_rel.lin};
    storeSpatialVec(ws.at(L.V_GB + 6 * b), V_GB);
    if (!full) continue;

    // Velocity-dependent acceleration: transport terms of the moving parent frame, plus the
    // mobilizer's own bias HdotU moved from Mo to Bo (zero unless H depends on q).
    SpatialVec<T> c = {cross(w_GP, V_rel.ang),
                       cross(w_GP, cross(w_GP, l) + T(2) * V_rel.lin) + cross(V_rel.ang, cross(V_rel.ang, r))};
    if (mobilizerHasHdot(topo.mobilizer)) {
      const SpatialVec<T> HdotU = mobilizerHdotU_FM<T>(topo.mobilizer, qb, ub);
      const Vec3<T> bh = X_GF.R * HdotU.ang;
      c.ang += bh;
      c.lin += X_GF.R * HdotU.lin + cross(bh, r);
    }
    storeSpatialVec(ws.at(L.c + 6 * b), c);
  }
}

// Pose and velocity of body b (Ground for b < 0) after computeKinematics.
template <class T>
LOCKSTEP_HD_INLINE Transform<T> bodyPose(const Workspace<T>& ws, int b) {
  return b < 0 ? Transform<T>::identity() : loadTransform<T>(ws.at(ws.L.X_GB + 12 * b));
}
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> bodyVelocity(const Workspace<T>& ws, int b) {
  return b < 0 ? SpatialVec<T>::zero() : loadSpatialVec<T>(ws.at(ws.L.V_GB + 6 * b));
}

// Body b's rigid-body inertia about Bo in G, as computeKinematics stored it.
template <class T>
LOCKSTEP_HD_INLINE SpatialInertia<T> bodyInertiaInG(const Workspace<T>& ws, int b) {
  const Strided<const T> inertia = ws.at(ws.L.I_G + 10 * b);
  return {inertia[0], loadVec3<T>(inertia + 1), loadSymMat33<T>(inertia + 4)};
}

}  // namespace lockstep
