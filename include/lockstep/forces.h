// Stage 2, forces: every applied force of one world, accumulated by source into the total body
// forces Fb (at each Bo, in G) and total mobility forces tauTotal of the workspace, in a fixed
// order (so results are reproducible): the user's mobility forces (clamped to the effort limits)
// and body forces, gravity, viscous joint damping, linear bushings, linear spring-dampers, ground
// contacts. Each source also reports its potential energy and the power it dissipates; the
// dissipated powers are the derivatives of the auxiliary states z (one per bushing, then one for
// joint damping and spring-dampers, then one per ground contact: minus the power it delivers, its
// whole force counted as non-conservative).
#pragma once

#include "lockstep/force_elements.h"
#include "lockstep/kinematics.h"

namespace lockstep {

template <class T>
struct ForceSummary {
  T elementPotential;  // potential energy of the bushings and springs
  StatusOf<T> status;  // StatusFlag bits raised while evaluating forces
};

// Adds the spatial force F (applied at the point p_G, in G) to body b's total at Bo; Ground (b < 0)
// absorbs it.
template <class T>
LOCKSTEP_HD_INLINE void applyForceAtPoint(const Workspace<T>& ws, int b, const SpatialVec<T>& F, const Vec3<T>& p_G) {
  if (b < 0) return;
  addSpatialVec(ws.Fb(b), shiftForceFromTo(F, p_G, bodyOrigin(ws, b)));
}

template <class T>
LOCKSTEP_HD_INLINE BushingQuantities<T> evaluateBushingOfWorld(const ModelView<T>& model, const WorldParams<T>& params,
                                                               const Workspace<T>& ws, int i) {
  const ElementTopology e = model.bushing[i];
  const Strided<const T> stiffness = bushingStiffnessAt(params, i), damping = bushingDampingAt(params, i);
  T k[6], c[6];
  for (int j = 0; j < 6; ++j) {
    k[j] = stiffness[j];
    c[j] = damping[j];
  }
  return evaluateBushing(bodyPose(ws, e.bodyA), bodyVelocity(ws, e.bodyA), bodyPose(ws, e.bodyB),
                         bodyVelocity(ws, e.bodyB), bushingFrameF(params, i), bushingFrameM(params, i), k, c);
}

template <class T>
LOCKSTEP_HD_INLINE SpringDamperQuantities<T> evaluateSpringOfWorld(const ModelView<T>& model,
                                                                    const WorldParams<T>& params,
                                                                    const Workspace<T>& ws, int i) {
  const ElementTopology e = model.spring[i];
  const SpringParams<T> p = springParamsOf(params, i);
  return evaluateSpringDamper(bodyPose(ws, e.bodyA), bodyVelocity(ws, e.bodyA), bodyPose(ws, e.bodyB),
                              bodyVelocity(ws, e.bodyB), p.p_AP, p.p_BQ, p.freeLength, p.stiffness, p.damping);
}

// Ground contact i: sphere, half-space and material.
template <class T>
LOCKSTEP_HD_INLINE GroundContactParams<T> groundContactParamsOf(const WorldParams<T>& params, int i) {
  const Strided<const T> sphere = groundSphereAt(params, i), plane = groundPlaneAt(params, i),
                         mat = groundMaterialAt(params, i);
  return {loadVec3<T>(sphere), sphere[3], loadVec3<T>(plane), loadVec3<T>(plane + 3),
          mat[0], mat[1], mat[2], mat[3], mat[4], mat[5], mat[6], mat[7], mat[8]};
}

template <class T>
LOCKSTEP_HD_INLINE GroundContactQuantities<T> evaluateGroundContactOfWorld(const ModelView<T>& model,
                                                                          const WorldParams<T>& params,
                                                                          const Workspace<T>& ws, int i) {
  const int b = model.ground[i].bodyA;
  return evaluateGroundContact(bodyPose(ws, b), bodyVelocity(ws, b), groundContactParamsOf(params, i));
}

// Index in z of what ground contact i has absorbed (Model::groundContactZ(i)).
LOCKSTEP_HD_INLINE int groundContactStateIndex(const Sizes& s, int i) { return s.nBushings + 1 + i; }

// After computeKinematics. zdot receives the dissipated powers [nz].
template <class T>
LOCKSTEP_HD ForceSummary<T> computeForces(const ModelView<T>& model, const WorldView<T>& w, Strided<const T> u,
                                          const Workspace<T>& ws, Strided<T> zdot) {
  const Sizes& s = model.sizes;
  ForceSummary<T> out{T(0), StatusOf<T>(kStatusOk)};
  T otherDissipation = T(0);

  // Mobility forces: actions within their effort limits, minus viscous joint damping.
  const Strided<T> tauTotal = ws.tauTotal();
  for (int i = 0; i < s.nu; ++i) {
    const T limit = w.params.effortLimit[i];
    T tau = w.tau[i];
    tau = selectT(tau > limit, limit, selectT(tau < -limit, -limit, tau));
    const T c = w.params.damping[i];
    tauTotal[i] = tau - c * u[i];
    otherDissipation += c * u[i] * u[i];
  }

  // Body forces: the user's, plus gravity m g at the center of mass.
  const Vec3<T> g = loadVec3<T>(w.params.gravity);
  for (int b = 0; b < s.nb; ++b) {
    const SpatialInertia<T> I = bodyInertiaInG(ws, b);
    const SpatialVec<T> F = loadSpatialVec<T>(bodyForceAt(w, b)) + SpatialVec<T>{cross(I.c, I.m * g), I.m * g};
    storeSpatialVec(ws.Fb(b), F);
  }

  for (int i = 0; i < s.nBushings; ++i) {
    const BushingQuantities<T> r = evaluateBushingOfWorld(model, w.params, ws, i);
    out.status |= flagIf(r.singular, kStatusBushingSingular);
    applyForceAtPoint(ws, model.bushing[i].bodyA, r.F_GF, r.X_GF.p);
    applyForceAtPoint(ws, model.bushing[i].bodyB, r.F_GM, r.X_GM.p);
    out.elementPotential += r.potentialEnergy;
    zdot[i] = r.powerDissipation;
  }

  for (int i = 0; i < s.nSprings; ++i) {
    const SpringDamperQuantities<T> r = evaluateSpringOfWorld(model, w.params, ws, i);
    out.status |= flagIf(r.lengthNearlyZero, kStatusSpringLengthZero);
    applyForceAtPoint(ws, model.spring[i].bodyA, SpatialVec<T>{Vec3<T>::zero(), r.f_AP}, r.p_WP);
    applyForceAtPoint(ws, model.spring[i].bodyB, SpatialVec<T>{Vec3<T>::zero(), -r.f_AP}, r.p_WQ);
    out.elementPotential += r.potentialEnergy;
    otherDissipation -= r.nonConservativePower;
  }
  zdot[s.nBushings] = otherDissipation;

  for (int i = 0; i < s.nGround; ++i) {
    const GroundContactQuantities<T> r = evaluateGroundContactOfWorld(model, w.params, ws, i);
    applyForceAtPoint(ws, model.ground[i].bodyA, SpatialVec<T>{Vec3<T>::zero(), r.forceOnSphere}, r.p_GP);
    zdot[groundContactStateIndex(s, i)] = -r.power;
  }
  return out;
}

// Kinetic energy and gravitational potential energy of one world, after computeKinematics.
template <class T>
LOCKSTEP_HD void computeEnergy(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                               T* kinetic, T* gravitational) {
  const Vec3<T> g = loadVec3<T>(params.gravity);
  T ke = T(0), pe = T(0);
  for (int b = 0; b < model.sizes.nb; ++b) {
    const SpatialInertia<T> I = bodyInertiaInG(ws, b);
    ke += I.kineticEnergy(bodyVelocity(ws, b));
    pe -= I.m * dot(g, bodyOrigin(ws, b) + I.c);
  }
  *kinetic = ke;
  *gravitational = pe;
}

}  // namespace lockstep
