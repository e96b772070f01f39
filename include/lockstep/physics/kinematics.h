// Stage 1, kinematics (outward pass): for each body in topological order, its pose X_GB, its
// spatial velocity V_GB, its rigid-body inertia about Bo in Ground, the columns of its mobilizer's
// H in Ground at Bo, and the velocity-dependent acceleration c_B of the articulated-body algorithm
// (Featherstone's c_i, in Jain's classical-acceleration form):
//   X_GB = X_GP * X_PF * X_FM(q) * ~X_BM
//   V_GB = ~Phi(l) V_GP + H u,                   l = p_PB (from Po to Bo), in G
//   A_GB = ~Phi(l) A_GP + H udot + c_B
#pragma once

#include "lockstep/physics/workspace.h"

namespace lockstep {

// With full == false only the poses and velocities are computed (for observations); the sweep
// needs full == true.
template <class T>
LOCKSTEP_HD void computeKinematics(const ModelView<T>& model, const WorldParams<T>& params, Strided<const T> q,
                                   Strided<const T> u, const Workspace<T>& ws, bool full = true) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    const Strided<const T> qb = q + topo.qOffset;
    const Strided<const T> ub = u + topo.uOffset;

    // Poses.
    Transform<T> X_GP = Transform<T>::identity();
    SpatialVec<T> V_GP = SpatialVec<T>::zero();
    if (topo.parent >= 0) {
      X_GP = bodyPose(ws, topo.parent);
      V_GP = bodyVelocity(ws, topo.parent);
    }
    // Frames whose rotation is the identity (common: chains, URDF joints on axis) skip the product.
    const Transform<T> X_GF = (topo.flags & kPFTranslationOnly)
                                  ? Transform<T>{X_GP.R, X_GP.p + X_GP.R * model.X_PF[b].p}
                                  : X_GP * model.X_PF[b];
    const Transform<T> X_GM = composeMobilizer(X_GF, topo.mobilizer, qb);
    const Transform<T> X_GB = (topo.flags & kMBIdentity) ? X_GM : X_GM * model.X_MB[b];
    storeTransform(ws.X_GB(b), X_GB);
    if (full) storeBodyInertiaInG(ws, b, centralInertiaOf(params, b).reexpress(X_GB.R));

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
      if (full) storeSpatialVec(ws.H(topo.uOffset + j), Hj);
      V_rel += ub[j] * Hj;
    }

    // Velocity.
    const Vec3<T> l = X_GB.p - X_GP.p;
    const Vec3<T>& w_GP = V_GP.ang;
    const SpatialVec<T> V_GB = {w_GP + V_rel.ang, V_GP.lin + cross(w_GP, l) + V_rel.lin};
    storeSpatialVec(ws.V_GB(b), V_GB);
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
    storeSpatialVec(ws.c(b), c);
  }
}

}  // namespace lockstep
