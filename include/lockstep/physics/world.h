// Lockstep world operations: what a backend does to one world (or, on the CPU, to a pack of
// worlds): advance it by a number of steps, reset it, give it a state, evaluate its outputs,
// observe it, assemble it onto its constraints. Built on the stages (kinematics.h, forces.h,
// aba.h, constraints.h), the forward pipeline (forward.h) and the integrators (integrator.h).
#pragma once

#include "lockstep/physics/integrator.h"
#include "lockstep/physics/mujoco_bodies.h"
#include "lockstep/physics/sensors.h"

namespace lockstep {

// What an observation follows, which says what the workspace holds:
//   kState       a state given, reset or assembled: nothing of it (its kinematics are computed here;
//                under MuJoCo's law no solve has seen it, so its contact forces are zero, as MuJoCo's
//                after mj_resetData and mj_forward)
//   kEvaluation  an evaluation at the state: its kinematics and solve
//   kStep        a step to the state: its last evaluation's kinematics and solve, which under MuJoCo's
//                law are what MuJoCo's bodies show (MuJoCo's mjData after mj_step: the last RK4 stage's,
//                Euler's start), the state's computed here for the rest
enum class Observed { kState, kEvaluation, kStep };

// Observations of one world at its current q, u: body poses and velocities, bushing
// coordinates and forces, contact separations, actuator efforts and powers, joint stop forces,
// ground contact penetrations, slip speeds, forces and powers, each body's total ground contact
// force, and MuJoCo's quantities (sensors of positions and velocities; qpos, qvel and the MuJoCo
// bodies' of MJCF models).
template <class T>
LOCKSTEP_HD void observeWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                              Observed observed = Observed::kState) {
  const Sizes& s = model.sizes;
  const bool stageBodies = observed == Observed::kStep && s.mujocoStepping && s.nMujocoBodies > 0;
  if (stageBodies) computeMujocoBodies(model, w, ws, /*solved=*/true);
  if (observed != Observed::kEvaluation) computeKinematics<T>(model, w.params, w.q, w.u, ws, /*full=*/false);
  if (observed == Observed::kState && hasSoftContacts(s))  // no solve has seen this state
    for (int b = 0; b < s.nb; ++b) storeSpatialVec(bodyContactAt(w, b), SpatialVec<T>::zero());
  for (int b = 0; b < s.nb; ++b) {
    const Transform<T> X_GB = bodyPose(ws, b);
    T quat[4];
    X_GB.R.toQuaternion(quat);
    const Strided<T> pose = bodyPoseAt(w, b);  // p_GB, then the quaternion
    for (int i = 0; i < 3; ++i) pose[i] = X_GB.p[i];
    for (int i = 0; i < 4; ++i) pose[3 + i] = quat[i];
    storeSpatialVec(bodyVelocityAt(w, b), bodyVelocity(ws, b));
  }
  for (int i = 0; i < s.nBushings; ++i) {
    const BushingQuantities<T> r = evaluateBushingOfWorld(model, w.params, ws, i);
    const Strided<T> state = bushingStateAt(w, i);  // q, then f
    for (int j = 0; j < 6; ++j) {
      state[j] = r.q[j];
      state[6 + j] = r.f[j];
    }
  }
  for (int i = 0; i < s.nContacts; ++i) w.contactError[i] = contactSeparationOfWorld(model, w.params, ws, i);
  if (s.nGround > 0)
    for (int b = 0; b < s.nb; ++b) storeSpatialVec(bodyContactAt(w, b), SpatialVec<T>::zero());
  for (int i = 0; i < s.nGround; ++i) {
    const GroundContactQuantities<T> r = evaluateGroundContactOfWorld(model, w.params, ws, i);
    const Strided<T> out = groundStateAt(w, i);
    out[0] = r.penetration;
    out[1] = r.slipSpeed;
    out[2] = r.normalForce;
    out[3] = r.frictionForce;
    out[4] = r.power;
    // The sphere's force at P, moved to the body's origin: [(p_GP - p_GB) x f; f].
    const int b = model.ground[i].bodyA;
    const Strided<T> F = bodyContactAt(w, b);
    const Vec3<T> m = cross(r.p_GP - bodyPose(ws, b).p, r.forceOnSphere);
    for (int k = 0; k < 3; ++k) {
      F[k] = F[k] + m[k];
      F[3 + k] = F[3 + k] + r.forceOnSphere[k];
    }
  }
  for (int b = 0; b < s.nb; ++b) {
    const BodyTopology topo = model.body[b];
    for (int k = 0; k < topo.nu; ++k) {
      const int i = topo.uOffset + k;
      const SpeedForces<T> f = evaluateSpeedForces(s, w, i, coordinateOfSpeed<T>(topo, w.q, k), T(w.u[i]));
      const Strided<T> actuator = actuatorAt(w, i);  // effort, then power
      actuator[0] = f.effort;
      actuator[1] = f.effort * w.u[i];
      w.stopForce[i] = f.stop.force;
    }
  }
  // MuJoCo's quantities (models with sensors, models imported from MJCF).
  if (s.nSensors > 0) computeSensors(model, w, ws, SensorStage::PositionsAndVelocities);
  if (s.nMujocoJoints > 0) computeMujocoState(model, w);
  if (s.nMujocoBodies > 0 && !stageBodies) computeMujocoBodies(model, w, ws, /*solved=*/observed != Observed::kState);
}

// Observes one world on its own view: the observation of startWorld's scalar form.
template <class T>
struct ObserveWorld {
  const ModelView<T>& model;
  const WorldView<T>& w;
  const Workspace<T>& ws;
  LOCKSTEP_HD_INLINE void operator()() const { observeWorld(model, w, ws); }
};

// Starts a world at the given q, u: time 0, no dissipated energy, healthy; then observe() observes
// it (ObserveWorld; the CPU backend's packs observe it on a one-lane pack). The body of a reset (q,
// u the world's initial ones) and of setting given states.
template <class T, class Observe>
LOCKSTEP_HD void startWorld(const Sizes& s, const WorldView<T>& w, Strided<const T> q, Strided<const T> u,
                            const Observe& observe) {
  for (int i = 0; i < s.nq; ++i) w.q[i] = q[i];
  for (int i = 0; i < s.nu; ++i) w.u[i] = u[i];
  for (int i = 0; i < s.nz; ++i) w.z[i] = T(0);
  w.time[0] = T(0);
  w.status[0] = kStatusOk;
  observe();
}
template <class T>
LOCKSTEP_HD void startWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                            Strided<const T> q, Strided<const T> u) {
  startWorld(model.sizes, w, q, u, ObserveWorld<T>{model, w, ws});
}

// Puts a world back to its initial state (time 0, no dissipated energy, healthy) and observes it.
template <class T, class Observe>
LOCKSTEP_HD void resetWorldState(const Sizes& s, const WorldView<T>& w, const Observe& observe) {
  startWorld(s, w, Strided<const T>(w.initialQ), Strided<const T>(w.initialU), observe);
}
template <class T>
LOCKSTEP_HD void resetWorldState(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  resetWorldState(model.sizes, w, ObserveWorld<T>{model, w, ws});
}

// Writes given states (q[nq], u[nu], contiguous) into a world: the body of both backends' SetStates.
template <class T>
LOCKSTEP_HD void setWorldState(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws, const T* q,
                               const T* u) {
  startWorld(model, w, ws, Strided<const T>{q, 1}, Strided<const T>{u, 1});
}

// What becomes of a world whose step failed with the StatusFlag bits `status` (its state is
// already the one from before that step): with autoReset it goes back to its initial state
// (observed by observe(), as startWorld), recording why and counting the reset; otherwise it is
// flagged and not advanced again.
template <class T, class Observe>
LOCKSTEP_HD void settleFailedWorld(const Sizes& s, const WorldView<T>& w, int status, bool autoReset,
                                   const Observe& observe) {
  if (autoReset) {
    w.lastFailure[0] = status;
    w.resetCount[0] += 1;
    resetWorldState(s, w, observe);
  } else {
    w.status[0] |= status;
  }
}
template <class T>
LOCKSTEP_HD void settleFailedWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                   int status, bool autoReset) {
  settleFailedWorld(model.sizes, w, status, autoReset, ObserveWorld<T>{model, w, ws});
}

// settleFailedWorld as the failure handler of stepLanes, for one world.
template <class T>
struct SettleFailedWorld {
  const ModelView<T>& model;
  const WorldView<T>& w;
  const Workspace<T>& ws;
  bool autoReset;
  LOCKSTEP_HD_INLINE void operator()(bool, int status) const { settleFailedWorld(model, w, ws, status, autoReset); }
};

// The step loop of an advance, for one world or a pack of worlds: up to nSteps steps while some
// lane in `active` is; a lane whose step fails leaves (onFailure(failedLanes, status) is told, once
// per failing step, which lanes failed and why). Returns the lanes that took every step.
template <class T, int kFeatures, class OnFailure>
LOCKSTEP_HD MaskOf<T> stepLanes(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                const StepSettings<T>& settings, MaskOf<T> active, OnFailure& onFailure) {
  for (int k = 0; k < settings.nSteps && anyLane(active); ++k) {
    const StatusOf<T> status = stepWorld<T, kFeatures>(model, w, ws, settings);
    const MaskOf<T> failedNow = active & failed(status);
    if (!anyLane(failedNow)) continue;
    onFailure(failedNow, status);
    active = active & !failedNow;
  }
  return active;
}

// The soft solves of a step write their points, limits and statistics into the workspace: the
// fields keep what the last evaluate() left (views.h), as the CPU's packs keep theirs in the pack.
template <class T>
LOCKSTEP_HD_INLINE WorldView<T> steppingView(const WorldView<T>& w, const Workspace<T>& ws) {
  WorldView<T> v = w;
  v.softContact = ws.stepSoftContact();
  v.softLimitForce = ws.stepSoftLimitForce();
  v.softSolver = ws.stepSoftSolver();
  return v;
}

// Advances one world by nSteps steps, unless it is already flagged. A failure is recorded in
// status; with autoReset the world instead goes back to its initial state, recording the reason.
template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD void advanceWorld(const ModelView<T>& model, const WorldView<T>& world, const Workspace<T>& ws,
                              const StepSettings<T>& settings) {
  if (world.status[0] != kStatusOk) return;
  const WorldView<T> w = (kFeatures & kFeatureSoftConstraints) != 0 ? steppingView(world, ws) : world;
  SettleFailedWorld<T> settle{model, w, ws, settings.autoReset};
  if (stepLanes<T, kFeatures>(model, w, ws, settings, true, settle) && settings.observe)
    observeWorld(model, w, ws, settings.nSteps > 0 ? Observed::kStep : Observed::kState);
}

// Brings a world onto its constraint manifold (position, then velocity), as Simbody's assembly
// and projection do: for initial states that violate the constraints. Flags the world on failure.
template <class T>
LOCKSTEP_HD void assembleWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws, T tol,
                               int maxIterations) {
  if (w.status[0] != kStatusOk || model.sizes.nc == 0) return;
  w.status[0] |= projectConstraints<T>(model, w, ws, tol, maxIterations);
}

// Outputs at the world's current state: udot, the multipliers, the kinetic and potential energies
// and the observations. Returns the StatusFlag bits of the evaluation (per lane); where it fails,
// udot is NaN (no accelerations exist).
template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD StatusOf<T> evaluateOutputs(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  const Sizes& s = model.sizes;
  const ForceSummary<T> f =
      forwardDynamics<T, kFeatures>(model, w, ws, w.udot, ws.ydot(s.nq + s.nu), w.multipliers);
  const StatusOf<T> status = f.status;
  if (anyLane(failed(status))) {
    const MaskOf<T> bad = failed(status);
    for (int i = 0; i < s.nu; ++i) w.udot[i] = selectT(bad, T(0) / T(0), T(w.udot[i]));
  }
  T ke, pe;
  computeEnergy<T>(model, w.params, ws, Strided<const T>(w.u), &ke, &pe);
  w.energy[0] = ke;
  w.energy[1] = pe + f.elementPotential;
  observeWorld(model, w, ws, Observed::kEvaluation);
  if (s.nSensors > 0) computeSensors(model, w, ws, SensorStage::Accelerations);
  return status;
}

template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD void evaluateWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  w.status[0] |= evaluateOutputs<T, kFeatures>(model, w, ws);
}

}  // namespace lockstep
