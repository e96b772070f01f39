// Stage 3, the articulated-body algorithm (Featherstone, Rigid Body Dynamics Algorithms, Table 7.1),
// in Simbody's form: every articulated inertia about its body origin Bo and expressed in Ground,
// so that inertias are only ever shifted, never rotated.
//
// Pass 1 (outward, stage 1): X_GB, V_GB, H, c.                          computeKinematics
// Pass 2 (inward):  IA_i = I_i + sum_children Phi Ia_c ~Phi
//                   pA_i = I_i x* V_i - F_i + sum_children Phi pa_c     (F: applied body forces)
//                   U_i = IA_i H_i,  D_i = ~H_i U_i,  u_i = tau_i - ~H_i pA_i
//                   Ia_i = IA_i - U_i D_i^-1 ~U_i,  pa_i = pA_i + Ia_i c_i + U_i D_i^-1 u_i
// Pass 3 (outward): a'_i = ~Phi a_parent + c_i
//                   udot_i = D_i^-1 (u_i - ~U_i a'_i),  a_i = a'_i + H_i udot_i
// Ground does not accelerate; gravity enters as a body force (stage 2).
#pragma once

#include "lockstep/forces.h"
#include "lockstep/smallmat.h"

namespace lockstep {

// P -= a ~b for a sum of such terms known to be symmetric: only the 21 stored entries change.
template <class T>
LOCKSTEP_HD_INLINE void subtractOuter(ArticulatedInertia<T>& P, const SpatialVec<T>& a, const SpatialVec<T>& b) {
  P.J.xx -= a.ang[0] * b.ang[0]; P.J.yy -= a.ang[1] * b.ang[1]; P.J.zz -= a.ang[2] * b.ang[2];
  P.J.xy -= a.ang[1] * b.ang[0]; P.J.xz -= a.ang[2] * b.ang[0]; P.J.yz -= a.ang[2] * b.ang[1];
  P.M.xx -= a.lin[0] * b.lin[0]; P.M.yy -= a.lin[1] * b.lin[1]; P.M.zz -= a.lin[2] * b.lin[2];
  P.M.xy -= a.lin[1] * b.lin[0]; P.M.xz -= a.lin[2] * b.lin[0]; P.M.yz -= a.lin[2] * b.lin[1];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) P.F.m[i][j] -= a.ang[i] * b.lin[j];
}

// Passes 2 and 3, after computeKinematics and computeForces. Writes udot; returns StatusFlag bits
// (kStatusSingularMassMatrix when a joint inertia D_i is singular).
template <class T>
LOCKSTEP_HD int computeArticulatedAccelerations(const ModelView<T>& model, const WorldParams<T>& params,
                                                const Workspace<T>& ws, Strided<T> udot) {
  const WorkspaceLayout& L = ws.L;
  const int nb = model.sizes.nb;

  // Each body's own rigid inertia and bias force, before children add theirs.
  for (int b = 0; b < nb; ++b) {
    const Rotation<T> R_GB = loadTransform<T>(ws.at(L.X_GB + 12 * b)).R;
    const SpatialInertia<T> I = bodyInertiaInG(params, b, R_GB);
    const Vec3<T> w = loadSpatialVec<T>(ws.at(L.V_GB + 6 * b)).ang;
    storeArticulatedInertia(ws.at(L.IA + 21 * b), ArticulatedInertia<T>::fromRigid(I));
    storeSpatialVec(ws.at(L.pA + 6 * b), I.gyroscopicForce(w) - loadSpatialVec<T>(ws.at(L.Fb + 6 * b)));
  }

  // Pass 2: inward.
  for (int b = nb - 1; b >= 0; --b) {
    const BodyTopology topo = model.body[b];
    const int n = topo.nu;
    ArticulatedInertia<T> Ia = loadArticulatedInertia<T>(ws.at(L.IA + 21 * b));
    const SpatialVec<T> pA = loadSpatialVec<T>(ws.at(L.pA + 6 * b));
    const SpatialVec<T> c = loadSpatialVec<T>(ws.at(L.c + 6 * b));
    SpatialVec<T> pa = pA;
    if (n > 0) {
      SpatialVec<T> U[kMaxMobilizerU];
      T D[kMaxMobilizerU * kMaxMobilizerU], Dinv[kMaxMobilizerU * kMaxMobilizerU], ub[kMaxMobilizerU];
      for (int j = 0; j < n; ++j) {
        const SpatialVec<T> Hj = loadSpatialVec<T>(ws.at(L.H + 6 * (topo.uOffset + j)));
        U[j] = Ia * Hj;
        storeSpatialVec(ws.at(L.U + 6 * (topo.uOffset + j)), U[j]);
        ub[j] = ws.at(L.tauTotal)[topo.uOffset + j] - dot(Hj, pA);
        ws.at(L.ub)[topo.uOffset + j] = ub[j];
        for (int i = 0; i <= j; ++i) {
          const SpatialVec<T> Hi = loadSpatialVec<T>(ws.at(L.H + 6 * (topo.uOffset + i)));
          D[i * n + j] = D[j * n + i] = dot(Hi, U[j]);
        }
      }
      if (!invertSymmetricPositiveDefinite(D, n, Dinv)) {
        for (int k = 0; k < n * n; ++k)
          if (!isFiniteT(D[k])) return kStatusNonFinite;  // a non-finite state reached the sweep
        return kStatusSingularMassMatrix;
      }
      for (int k = 0; k < n * n; ++k) ws.at(L.Dinv)[topo.dOffset + k] = Dinv[k];
      // Ia = IA - U D^-1 ~U;  pa = pA + Ia c + U D^-1 u.
      SpatialVec<T> UDinvU = SpatialVec<T>::zero();
      for (int i = 0; i < n; ++i) {
        SpatialVec<T> G = SpatialVec<T>::zero();  // column i of U D^-1
        T Dinv_u = T(0);
        for (int j = 0; j < n; ++j) {
          G += Dinv[j * n + i] * U[j];
          Dinv_u += Dinv[i * n + j] * ub[j];
        }
        subtractOuter(Ia, G, U[i]);
        UDinvU += Dinv_u * U[i];
      }
      pa = pA + Ia * c + UDinvU;
    } else {
      pa = pA + Ia * c;
    }
    if (topo.parent >= 0) {
      const Vec3<T> l = loadTransform<T>(ws.at(L.X_GB + 12 * b)).p - loadTransform<T>(ws.at(L.X_GB + 12 * topo.parent)).p;
      const Strided<T> IAp = ws.at(L.IA + 21 * topo.parent);
      storeArticulatedInertia(IAp, loadArticulatedInertia<T>(IAp) + Ia.shift(l));
      addSpatialVec(ws.at(L.pA + 6 * topo.parent), PhiMatrix<T>{l} * pa);
    }
  }

  // Pass 3: outward.
  for (int b = 0; b < nb; ++b) {
    const BodyTopology topo = model.body[b];
    SpatialVec<T> A = loadSpatialVec<T>(ws.at(L.c + 6 * b));
    if (topo.parent >= 0) {
      const Vec3<T> l = loadTransform<T>(ws.at(L.X_GB + 12 * b)).p - loadTransform<T>(ws.at(L.X_GB + 12 * topo.parent)).p;
      A += PhiMatrix<T>{l}.transposeTimes(loadSpatialVec<T>(ws.at(L.A_GB + 6 * topo.parent)));
    }
    const int n = topo.nu;
    T rhs[kMaxMobilizerU];
    for (int j = 0; j < n; ++j)
      rhs[j] = ws.at(L.ub)[topo.uOffset + j] - dot(loadSpatialVec<T>(ws.at(L.U + 6 * (topo.uOffset + j))), A);
    SpatialVec<T> HUdot = SpatialVec<T>::zero();
    for (int i = 0; i < n; ++i) {
      T ud = T(0);
      for (int j = 0; j < n; ++j) ud += ws.at(L.Dinv)[topo.dOffset + i * n + j] * rhs[j];
      udot[topo.uOffset + i] = ud;
      HUdot += ud * loadSpatialVec<T>(ws.at(L.H + 6 * (topo.uOffset + i)));
    }
    storeSpatialVec(ws.at(L.A_GB + 6 * b), A + HUdot);
  }
  return kStatusOk;
}

}  // namespace lockstep
