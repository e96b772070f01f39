// Stage 3, the articulated-body algorithm (Featherstone, Rigid Body Dynamics Algorithms, Table 7.1),
// in Simbody's form: every articulated inertia about its body origin Bo and expressed in Ground,
// so that inertias are only ever shifted, never rotated.
//
// Pass 1 (outward, stage 1): X_GB, V_GB, H, c.                          computeKinematics
// Pass 2 (inward), split in two so that the factorization can be reused as an M^-1 operator:
//   factor:  IA_i = I_i + sum_children Phi Ia_c ~Phi
//            U_i = IA_i H_i,  D_i = ~H_i U_i,  Ia_i = IA_i - U_i D_i^-1 ~U_i
//   bias:    pA_i = I_i x* V_i - F_i + sum_children Phi pa_c             (F: applied body forces)
//            u_i = tau_i - ~H_i pA_i,  pa_i = pA_i + Ia_i c_i + U_i D_i^-1 u_i
// Pass 3 (outward):
//            a'_i = ~Phi a_parent + c_i,  udot_i = D_i^-1 (u_i - ~U_i a'_i),  a_i = a'_i + H_i udot_i
//          (inboardAcceleration, jointAcceleration; bodyAccelerationsFromUdot for a known udot)
// Ground does not accelerate; gravity enters as a body force (stage 2). The same bias and
// outward passes with the velocity terms (I x* V, c) left out give udot = M^-1 (tau - ~J F): the
// response to a force pattern, which the constraint solve uses.
#pragma once

#include "lockstep/physics/kinematics.h"
#include "lockstep/physics/smallmat.h"

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

// The configuration-dependent half of pass 2: articulated inertias, U, D^-1. After
// computeKinematics. D_i = ~H_i U_i + diag(armature_i): a rotor's inertia adds to its own speed's
// diagonal of the mass matrix, and so to D (MJCF's armature). Leaves Ia_i (after the joint's
// projection) in the IA slots. Returns StatusFlag bits (kStatusSingularMassMatrix when some D_i is
// singular).
template <class T>
LOCKSTEP_HD StatusOf<T> factorArticulatedInertias(const ModelView<T>& model, const WorldParams<T>& params,
                                                  const Workspace<T>& ws) {
  const int nb = model.sizes.nb;
  const bool armature = model.sizes.nArmatures > 0;
  StatusOf<T> status = StatusOf<T>(kStatusOk);
  for (int b = nb - 1; b >= 0; --b) {
    const BodyTopology topo = model.body[b];
    const int n = topo.nu;
    // IA_b: the body's own inertia plus the sum its children (numbered higher, so done) left in its slot.
    ArticulatedInertia<T> Ia = ArticulatedInertia<T>::fromRigid(bodyInertiaInG(ws, b));
    if (topo.flags & kHasChildren) Ia += loadArticulatedInertia<T>(ws.IA(b));
    if (n == 1) {  // one-dof joints (pins, sliders): scalar D
      const SpatialVec<T> H = loadSpatialVec<T>(ws.H(topo.uOffset));
      const SpatialVec<T> U = Ia * H;
      storeSpatialVec(ws.U(topo.uOffset), U);
      const T D = armature ? dot(H, U) + T(params.armature[topo.uOffset]) : dot(H, U);
      const MaskOf<T> finite = isFiniteT(D);
      const MaskOf<T> positive = D > T(0);
      if (!allLanes(positive & finite)) {
        status = firstFailure(status, flagIf(!finite, kStatusNonFinite) |
                                          flagIf(finite & !positive, kStatusSingularMassMatrix));
        if (allLanes(failed(status))) return status;
      }
      const T Dinv = T(1) / D;
      ws.Dinv()[topo.dOffset] = Dinv;
      subtractOuter(Ia, Dinv * U, U);
    } else if (n > 1) {
      SpatialVec<T> U[kMaxMobilizerU];
      T D[kMaxMobilizerU * kMaxMobilizerU], Dinv[kMaxMobilizerU * kMaxMobilizerU];
      for (int j = 0; j < n; ++j) {
        U[j] = Ia * loadSpatialVec<T>(ws.H(topo.uOffset + j));
        storeSpatialVec(ws.U(topo.uOffset + j), U[j]);
        for (int i = 0; i <= j; ++i) D[i * n + j] = D[j * n + i] = dot(loadSpatialVec<T>(ws.H(topo.uOffset + i)), U[j]);
        if (armature) D[j * n + j] += params.armature[topo.uOffset + j];
      }
      const MaskOf<T> ok = invertSymmetricPositiveDefinite(D, n, Dinv);
      if (!allLanes(ok)) {
        MaskOf<T> finite = MaskOf<T>(true);  // false: a non-finite state reached the sweep
        for (int k = 0; k < n * n; ++k) finite = finite & isFiniteT(D[k]);
        status = firstFailure(status, flagIf((!ok) & (!finite), kStatusNonFinite) |
                                          flagIf((!ok) & finite, kStatusSingularMassMatrix));
        if (allLanes(failed(status))) return status;
      }
      for (int k = 0; k < n * n; ++k) ws.Dinv()[topo.dOffset + k] = Dinv[k];
      // Ia = IA - U D^-1 ~U, a sum of outer products G_i ~U_i with G_i column i of U D^-1.
      for (int i = 0; i < n; ++i) {
        SpatialVec<T> G = SpatialVec<T>::zero();
        for (int j = 0; j < n; ++j) G += Dinv[j * n + i] * U[j];
        subtractOuter(Ia, G, U[i]);
      }
    }
    storeArticulatedInertia(ws.IA(b), Ia);  // Ia_b (IA_b for a body welded to its parent)
    if (topo.parent >= 0) {  // into the parent's sum of its children: the first child met starts it
      const Strided<T> IAp = ws.IA(topo.parent);
      ArticulatedInertia<T> moved = Ia.shift(parentToChild(ws, b, topo.parent));
      if (!(topo.flags & kFirstChildInward)) moved += loadArticulatedInertia<T>(IAp);
      storeArticulatedInertia(IAp, moved);
    }
  }
  return status;
}

// Pass 3 for one body, before its joint moves: a'_b = ~Phi(l) A_parent (+ c_b with the velocity
// terms), l = p_PB. 21 flops with a parent and velocity terms (l: 3, ~Phi: 12, + c: 6).
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> inboardAcceleration(const BodyTopology& topo, const Workspace<T>& ws, int b,
                                                     Strided<const T> A_GB, bool velocityTerms) {
  SpatialVec<T> A = velocityTerms ? loadSpatialVec<T>(ws.c(b)) : SpatialVec<T>::zero();
  if (topo.parent >= 0)
    A += PhiMatrix<T>{parentToChild(ws, b, topo.parent)}.transposeTimes(bodyAcceleration<T>(A_GB, topo.parent));
  return A;
}
// Pass 3 for one body, its joint's part: H_b udot_b, with udot_b the body's nu_b accelerations.
// 12 nu_b flops.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> jointAcceleration(const BodyTopology& topo, const Workspace<T>& ws,
                                                   Strided<const T> udot) {
  SpatialVec<T> HUdot = SpatialVec<T>::zero();
  for (int i = 0; i < topo.nu; ++i) HUdot += udot[topo.uOffset + i] * loadSpatialVec<T>(ws.H(topo.uOffset + i));
  return HUdot;
}

// Pass 3 alone, for a known udot: the body spatial accelerations
//   A_b = ~Phi A_parent + c_b + H_b udot_b
// into A_GB (6 per body), after computeKinematics (which stored c and H). What the sweep computes
// on its way, for callers that have udot already (inspection of a stored evaluation).
template <class T>
LOCKSTEP_HD void bodyAccelerationsFromUdot(const ModelView<T>& model, const Workspace<T>& ws, Strided<const T> udot,
                                           Strided<T> A_GB) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    storeSpatialVec(bodySpatialVec(A_GB, b),
                    inboardAcceleration(topo, ws, b, Strided<const T>(A_GB), true) + jointAcceleration(topo, ws, udot));
  }
}

// The force-dependent half of pass 2 and pass 3, after factorArticulatedInertias:
//   udot = M^-1 (tau - ~J F - bias)
// with body forces F (at Bo, in G; 6 per body) and mobility forces tau. With velocityTerms the
// bias holds the gyroscopic forces and Coriolis accelerations of the current velocities; without,
// the result is the pure response M^-1 (tau - ~J F). Writes udot and the body accelerations A.
template <class T>
LOCKSTEP_HD void solveArticulated(const ModelView<T>& model, const Workspace<T>& ws, Strided<const T> F,
                                  Strided<const T> tau, bool velocityTerms, Strided<T> udot, Strided<T> A_GB) {
  const int nb = model.sizes.nb;
  const Strided<T> ub = ws.ub(), Dinv = ws.Dinv();
  for (int b = nb - 1; b >= 0; --b) {
    const BodyTopology topo = model.body[b];
    const int n = topo.nu;
    // pA_b: the body's own bias force plus the sum its children left in its slot.
    SpatialVec<T> pA = -loadSpatialVec<T>(bodySpatialVec(F, b));
    if (velocityTerms) pA += bodyInertiaInG(ws, b).gyroscopicForce(bodyVelocity(ws, b).ang);
    if (topo.flags & kHasChildren) pA += loadSpatialVec<T>(ws.pA(b));
    SpatialVec<T> pa = pA;
    if (velocityTerms) pa += loadArticulatedInertia<T>(ws.IA(b)) * loadSpatialVec<T>(ws.c(b));
    if (n > 0) {
      T u[kMaxMobilizerU];
      for (int j = 0; j < n; ++j) {
        u[j] = tau[topo.uOffset + j] - dot(loadSpatialVec<T>(ws.H(topo.uOffset + j)), pA);
        ub[topo.uOffset + j] = u[j];
      }
      for (int i = 0; i < n; ++i) {
        T Dinv_u = T(0);
        for (int j = 0; j < n; ++j) Dinv_u += Dinv[topo.dOffset + i * n + j] * u[j];
        pa += Dinv_u * loadSpatialVec<T>(ws.U(topo.uOffset + i));
      }
    }
    if (topo.parent >= 0) {
      const Strided<T> pAp = ws.pA(topo.parent);
      SpatialVec<T> moved = PhiMatrix<T>{parentToChild(ws, b, topo.parent)} * pa;
      if (!(topo.flags & kFirstChildInward)) moved += loadSpatialVec<T>(pAp);
      storeSpatialVec(pAp, moved);
    }
  }
  for (int b = 0; b < nb; ++b) {
    const BodyTopology topo = model.body[b];
    const SpatialVec<T> A = inboardAcceleration(topo, ws, b, Strided<const T>(A_GB), velocityTerms);
    const int n = topo.nu;
    T rhs[kMaxMobilizerU];
    for (int j = 0; j < n; ++j) rhs[j] = ub[topo.uOffset + j] - dot(loadSpatialVec<T>(ws.U(topo.uOffset + j)), A);
    for (int i = 0; i < n; ++i) {
      T ud = T(0);
      for (int j = 0; j < n; ++j) ud += Dinv[topo.dOffset + i * n + j] * rhs[j];
      udot[topo.uOffset + i] = ud;
    }
    storeSpatialVec(bodySpatialVec(A_GB, b), A + jointAcceleration(topo, ws, Strided<const T>(udot)));
  }
}

// Unconstrained forward dynamics after computeKinematics and computeForces: udot and the body
// accelerations A_GB (workspace). Returns StatusFlag bits.
template <class T>
LOCKSTEP_HD StatusOf<T> computeArticulatedAccelerations(const ModelView<T>& model, const WorldParams<T>& params,
                                                        const Workspace<T>& ws, Strided<T> udot) {
  const StatusOf<T> status = factorArticulatedInertias(model, params, ws);
  if (allLanes(failed(status))) return status;
  solveArticulated<T>(model, ws, ws.Fb(), ws.tauTotal(), true, udot, ws.A_GB());
  return status;
}

}  // namespace lockstep
