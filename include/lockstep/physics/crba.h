// The joint-space mass matrix M(q) of one world, by the composite-rigid-body algorithm
// (Featherstone, "Rigid Body Dynamics Algorithms", 6.2), for the constraint solves that work in
// joint space (constraint_solve.h):
//   inward:   Ic_b = I_b + sum over the children c of Ic_c (moved to Bo)          composite inertias
//   columns:  F = Ic_b H_i for each speed i of body b, about Bo;
//             M_ki = ~H_k F for each speed k of b, then of each ancestor a (F moved to Ao on the way)
// with I_b and H in Ground about each body's origin, as computeKinematics stored them. M is symmetric
// positive definite wherever the articulated-body sweep's joint inertias D are; the rotors'
// armature is on its diagonal. Cost: about (nb + nu depth) spatial products.
#pragma once

#include "lockstep/physics/kinematics.h"

namespace lockstep {

// M is zero between the speeds of two trees (bodies mobilized from Ground separately, with their
// descendants): f(i, u0, u1) for each speed i in order, with [u0, u1) the speeds of its body's tree
// (BodyTopology::treeU0, treeU1), outside which M's row i is zero. M is written, and every reader
// reads it, only within those rows' ranges: free objects' M is block diagonal, and the rest of the
// nu x nu array is never touched.
template <class T, class F>
LOCKSTEP_HD_INLINE void forEachSpeedInTree(const ModelView<T>& model, F&& f) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    for (int k = 0; k < topo.nu; ++k) f(topo.uOffset + k, int(topo.treeU0), int(topo.treeU1));
  }
}

// M (nu x nu, row-major at M[k * nu + i], within its trees' blocks: forEachSpeedInTree) after
// computeKinematics. Ic: scratch of 10 scalars per body (the composite inertias: m, p_BoC, J about
// Bo).
template <class T>
LOCKSTEP_HD void computeMassMatrix(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                                   Strided<T> M, Strided<T> Ic) {
  const Sizes& s = model.sizes;
  for (int b = 0; b < s.nb; ++b) {
    const SpatialInertia<T> I = bodyInertiaInG(ws, b);
    Ic[10 * b] = I.m;
    storeVec3(Ic + (10 * b + 1), I.c);
    storeSymMat33(Ic + (10 * b + 4), I.J);
  }
  auto composite = [&](int b) {
    return SpatialInertia<T>{T(Ic[10 * b]), loadVec3<T>(Strided<const T>(Ic) + 10 * b + 1),
                             loadSymMat33<T>(Strided<const T>(Ic) + 10 * b + 4)};
  };
  // Inward: children after their parents, so the last body first.
  for (int b = s.nb - 1; b >= 0; --b) {
    const int p = model.body[b].parent;
    if (p < 0) continue;
    // The child's composite about Bo(c), as an inertia about Bo(p): origin moved by p_Bc_Bp.
    const SpatialInertia<T> moved = composite(b).shift(bodyOrigin(ws, p) - bodyOrigin(ws, b));
    SpatialInertia<T> sum = composite(p);
    sum.c = (T(1) / selectT(sum.m + moved.m > T(0), sum.m + moved.m, T(1))) * (sum.m * sum.c + moved.m * moved.c);
    sum.J = sum.J + moved.J;
    sum.m = sum.m + moved.m;
    Ic[10 * p] = sum.m;
    storeVec3(Ic + (10 * p + 1), sum.c);
    storeSymMat33(Ic + (10 * p + 4), sum.J);
  }
  forEachSpeedInTree(model, [&](int i, int u0, int u1) {
    for (int k = u0; k < u1; ++k) M[i * s.nu + k] = T(0);
  });
  for (int b = 0; b < s.nb; ++b) {
    const BodyTopology topo = model.body[b];
    const SpatialInertia<T> I = composite(b);
    for (int kb = 0; kb < topo.nu; ++kb) {
      const int i = topo.uOffset + kb;
      SpatialVec<T> F = I * loadSpatialVec<T>(ws.H(i));  // about Bo(b)
      // b's own block: the lower triangle, mirrored (M exactly symmetric).
      for (int k = topo.uOffset; k <= i; ++k) M[k * s.nu + i] = M[i * s.nu + k] = dot(loadSpatialVec<T>(ws.H(k)), F);
      // Each ancestor's block: F moved to the ancestor's origin on the way in.
      for (int a = b, p = topo.parent; p >= 0; a = p, p = model.body[p].parent) {
        F = shiftForceFromTo(F, bodyOrigin(ws, a), bodyOrigin(ws, p));
        const BodyTopology tp = model.body[p];
        for (int k = tp.uOffset; k < tp.uOffset + tp.nu; ++k)
          M[k * s.nu + i] = M[i * s.nu + k] = dot(loadSpatialVec<T>(ws.H(k)), F);
      }
    }
  }
  if (s.nArmatures > 0)
    for (int i = 0; i < s.nu; ++i) M[i * s.nu + i] = M[i * s.nu + i] + params.armature[i];
}

}  // namespace lockstep
