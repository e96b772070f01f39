// Stage 2, forces: every applied force of one world, accumulated by source into the total body
// forces Fb (at each Bo, in G) and total mobility forces tauTotal of the workspace, in a fixed
// order (so results are reproducible): the user's mobility forces plus the PD actuators (together
// clamped to the effort limits) and body forces, gravity, viscous joint damping, joint springs, joint stops, linear bushings,
// linear spring-dampers, constant forces, ground contacts. Each source also reports its potential energy and the
// power it dissipates; the dissipated powers are the derivatives of the auxiliary states z: one
// per bushing, one for joint damping, joint stops and spring-dampers, one for minus the power of
// the actions and actuators, then one per ground contact (minus the power it delivers: its whole
// force counts as non-conservative), so that KE + PE + sum(z) is conserved.
#pragma once

#include "lockstep/physics/force_elements.h"
#include "lockstep/physics/kinematics.h"

namespace lockstep {

template <class T>
struct ForceSummary {
  T elementPotential;  // potential energy of the bushings, springs and joint stops
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
LOCKSTEP_HD_INLINE int groundContactStateIndex(const Sizes& s, int i) { return s.nBushings + 2 + i; }

// The mobility forces of one generalized speed i with coordinate q (0 where it has none): the
// actuator's effort (action plus PD, within the effort limit) and the joint stop's force.
template <class T>
struct SpeedForces {
  T effort;
  JointStopQuantities<T> stop;
};
// A model that declares no stop and no actuator (Sizes) takes the clamped action alone: the same
// branch on every lane and every thread.
template <class T>
LOCKSTEP_HD_INLINE SpeedForces<T> evaluateSpeedForces(const Sizes& s, const WorldView<T>& w, int i, T q, T u) {
  const T limit = w.params.effortLimit[i];
  if (s.nStops == 0 && s.nActuators == 0) {
    const T tau = w.tau[i];
    return {selectT(tau > limit, limit, selectT(tau < -limit, -limit, tau)), {T(0), T(0), T(0)}};
  }
  const Strided<const T> target = targetAt(w, i), gains = actuatorGainsAt(w.params, i);
  const Strided<const T> stop = stopParamsAt(w.params, i), control = actuatorControlAt(w.params, i);
  return {actuatorEffort(T(w.tau[i]), q, u, T(target[0]), T(target[1]), gains[0], gains[1], gains[2], control[0],
                         control[1], control[2], limit),
          evaluateJointStop(q, u, stop[0], stop[1], stop[2], stop[3])};
}

// Coordinate of speed uOffset + k of a body: q[qOffset + k] where qdot is u, else 0 (Ball, Free).
template <class T>
LOCKSTEP_HD_INLINE T coordinateOfSpeed(const BodyTopology& topo, Strided<const T> q, int k) {
  return mobilizerQdotIsU(topo.mobilizer) ? T(q[topo.qOffset + k]) : T(0);
}

// Index in z of minus the work of the mobility forces (Model::actuationState()).
LOCKSTEP_HD_INLINE int actuationStateIndex(const Sizes& s) { return s.nBushings + 1; }

// After computeKinematics. zdot receives the dissipated powers [nBushings + 1], then minus the
// power of the actions and actuators, then what each ground contact absorbs [nz in all].
template <class T>
LOCKSTEP_HD ForceSummary<T> computeForces(const ModelView<T>& model, const WorldView<T>& w, Strided<const T> u,
                                          const Workspace<T>& ws, Strided<T> zdot) {
  const Sizes& s = model.sizes;
  ForceSummary<T> out{T(0), StatusOf<T>(kStatusOk)};
  T otherDissipation = T(0), actuatorPower = T(0);

  // Mobility forces: actions plus PD actuators within their effort limits, minus viscous joint
  // damping, plus joint stops.
  const Strided<T> tauTotal = ws.tauTotal();
  for (int b = 0; b < s.nb; ++b) {
    const BodyTopology topo = model.body[b];
    for (int k = 0; k < topo.nu; ++k) {
      const int i = topo.uOffset + k;
      const T q = coordinateOfSpeed<T>(topo, w.q, k);
      const SpeedForces<T> f = evaluateSpeedForces(s, w, i, q, T(u[i]));
      const T c = w.params.damping[i];
      tauTotal[i] = f.effort - c * u[i];
      otherDissipation += c * u[i] * u[i];
      actuatorPower += f.effort * u[i];
      if (s.nJointSprings > 0) {
        const Strided<const T> spring = jointSpringAt(w.params, i);
        const JointSpringQuantities<T> js = evaluateJointSpring(q, spring[0], spring[1]);
        tauTotal[i] += js.force;
        out.elementPotential += js.potentialEnergy;
      }
      if (s.nStops == 0 && s.nActuators == 0) continue;
      tauTotal[i] += f.stop.force;
      otherDissipation += f.stop.powerDissipation;
      out.elementPotential += f.stop.potentialEnergy;
    }
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
  for (int i = 0; i < s.nConstantForces; ++i) {
    const Strided<const T> p = constantForceParamsAt(w.params, i);  // station p_BS, then force f_G
    const Vec3<T> f_G = loadVec3<T>(p + 3);
    const int b = model.constantForce[i].bodyA;
    const ConstantForceQuantities<T> r = evaluateConstantForce(bodyPose(ws, b), loadVec3<T>(p), f_G);
    applyForceAtPoint(ws, b, SpatialVec<T>{Vec3<T>::zero(), f_G}, r.p_GS);
    out.elementPotential += r.potentialEnergy;
  }
  zdot[s.nBushings] = otherDissipation;
  zdot[actuationStateIndex(s)] = -actuatorPower;

  for (int i = 0; i < s.nGround; ++i) {
    const GroundContactQuantities<T> r = evaluateGroundContactOfWorld(model, w.params, ws, i);
    applyForceAtPoint(ws, model.ground[i].bodyA, SpatialVec<T>{Vec3<T>::zero(), r.forceOnSphere}, r.p_GP);
    zdot[groundContactStateIndex(s, i)] = -r.power;
  }
  return out;
}

// Kinetic energy (the rotors' armature u^2 / 2 included) and gravitational potential energy of one
// world, after computeKinematics.
template <class T>
LOCKSTEP_HD void computeEnergy(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                               Strided<const T> u, T* kinetic, T* gravitational) {
  const Vec3<T> g = loadVec3<T>(params.gravity);
  T ke = T(0), pe = T(0);
  for (int b = 0; b < model.sizes.nb; ++b) {
    const SpatialInertia<T> I = bodyInertiaInG(ws, b);
    ke += I.kineticEnergy(bodyVelocity(ws, b));
    pe -= I.m * dot(g, bodyOrigin(ws, b) + I.c);
  }
  if (model.sizes.nArmatures > 0)
    for (int i = 0; i < model.sizes.nu; ++i) ke += T(0.5) * params.armature[i] * u[i] * u[i];
  *kinetic = ke;
  *gravitational = pe;
}

}  // namespace lockstep
