// Stage 4, integration: fixed-step semi-implicit Euler and classical RK4 over the state
// y = [q; u; z] of one world, with quaternions normalized after every step. A world whose step
// fails (non-finite state, singular joint inertia, ...) is put back to its state at the start of
// that step, flagged in its status, and not advanced again until it is reset.
#pragma once

#include "lockstep/constraints.h"

namespace lockstep {

enum class Integrator : std::int8_t { SemiImplicitEuler = 0, RK4 = 1 };

// How a batch steps: fixed step dt for nSteps steps, and the drift control of the constraints.
template <class T>
struct StepSettings {
  T dt;
  int nSteps;
  Integrator integrator;
  T constraintTolerance;        // |position error| and |velocity error| kept below this
  int maxProjectionIterations;  // Gauss-Newton iterations allowed for the position projection
  bool observe;                 // write the observations after the steps
  bool autoReset;               // put failed worlds back to their initial state, recording why
};

// Component i of the state y = [q; u; z] of a world.
template <class T>
LOCKSTEP_HD_INLINE T& stateRef(const WorldView<T>& w, const Sizes& s, int i) {
  return i < s.nq ? w.q[i] : (i < s.nq + s.nu ? w.u[i - s.nq] : w.z[i - s.nq - s.nu]);
}

// ydot = f(t, y) for the world's current q, u, z into the workspace's ydot. Returns StatusFlag bits
// (per lane, for a pack of worlds). kConstraints false compiles the constraint solve out, for
// models without sphere contacts (the GPU kernel then needs far fewer registers and far less
// stack, and the CPU backend runs such models on packs of worlds).
template <class T, bool kConstraints = true>
LOCKSTEP_HD StatusOf<T> computeStateDerivative(const ModelView<T>& model, const WorldView<T>& w,
                                               const Workspace<T>& ws) {
  const Sizes& s = model.sizes;
  const WorkspaceLayout& L = ws.L;
  computeKinematics<T>(model, w.params, w.q, w.u, ws);
  const Strided<T> ydot = ws.at(L.ydot);
  const ForceSummary<T> f = computeForces<T>(model, w, w.u, ws, ydot + (s.nq + s.nu));
  if (allLanes(failed(f.status))) return f.status;
  StatusOf<T> status = firstFailure(f.status, computeArticulatedAccelerations<T>(model, w.params, ws, ydot + s.nq));
  if constexpr (kConstraints) {
    if (!allLanes(failed(status)))
      status = firstFailure(status, solveConstraints<T>(model, w.params, ws, ydot + s.nq, ws.at(L.lambda)));
  }
  if (allLanes(failed(status))) return status;
  for (int b = 0; b < s.nb; ++b) {
    const BodyTopology topo = model.body[b];
    Strided<T> qdot = ydot + topo.qOffset;
    mobilizerQdot<T>(topo.mobilizer, Strided<const T>(w.q + topo.qOffset), Strided<const T>(w.u + topo.uOffset), qdot);
  }
  return status;
}

template <class T>
LOCKSTEP_HD_INLINE void normalizeQuaternions(const ModelView<T>& model, const WorldView<T>& w) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    Strided<T> qb = w.q + topo.qOffset;
    mobilizerNormalizeQ<T>(topo.mobilizer, qb);
  }
}

// One step of size dt. Returns StatusFlag bits; on failure the state is as it was before the step.
// On a pack of worlds each lane fails or advances on its own.
template <class T, bool kConstraints = true>
LOCKSTEP_HD StatusOf<T> stepWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                          const StepSettings<T>& settings) {
  const Sizes& s = model.sizes;
  const T dt = settings.dt;
  const Integrator integrator = settings.integrator;
  const WorkspaceLayout& L = ws.L;
  const int ny = s.nq + s.nu + s.nz;
  const Strided<T> y0 = ws.at(L.y0), acc = ws.at(L.acc), ydot = ws.at(L.ydot);
  for (int i = 0; i < ny; ++i) y0[i] = stateRef(w, s, i);

  StatusOf<T> status = StatusOf<T>(kStatusOk);
  if (integrator == Integrator::SemiImplicitEuler) {
    // u and z advance with the derivative at the start; q then advances with the new u.
    status = computeStateDerivative<T, kConstraints>(model, w, ws);
    if (!allLanes(failed(status))) {
      for (int i = s.nq; i < ny; ++i) stateRef(w, s, i) = y0[i] + dt * ydot[i];
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        Strided<T> qdot = ydot + topo.qOffset;
        mobilizerQdot<T>(topo.mobilizer, Strided<const T>(w.q + topo.qOffset), Strided<const T>(w.u + topo.uOffset), qdot);
      }
      for (int i = 0; i < s.nq; ++i) w.q[i] = y0[i] + dt * ydot[i];
    }
  } else {
    // Classical RK4: y1 = y0 + dt/6 (k1 + 2 k2 + 2 k3 + k4).
    const T half = T(0.5) * dt;
    const T stageStep[3] = {half, half, dt};
    const T weight[4] = {T(1), T(2), T(2), T(1)};
    for (int k = 0; k < 4; ++k) {
      status = firstFailure(status, computeStateDerivative<T, kConstraints>(model, w, ws));
      if (allLanes(failed(status))) break;
      for (int i = 0; i < ny; ++i) acc[i] = (k == 0 ? T(0) : acc[i]) + weight[k] * ydot[i];
      if (k < 3) {
        for (int i = 0; i < ny; ++i) stateRef(w, s, i) = y0[i] + stageStep[k] * ydot[i];
      }
    }
    if (!allLanes(failed(status))) {
      const T sixth = dt / T(6);
      for (int i = 0; i < ny; ++i) stateRef(w, s, i) = y0[i] + sixth * acc[i];
    }
  }
  if (!allLanes(failed(status))) {
    const MaskOf<T> healthy = !failed(status);
    normalizeQuaternions(model, w);
    if constexpr (kConstraints) {
      if (s.nc > 0)
        status = firstFailure(status, projectConstraints<T>(model, w, ws, settings.constraintTolerance,
                                                            settings.maxProjectionIterations, healthy));
    }
    MaskOf<T> nonFinite = MaskOf<T>(false);
    for (int i = 0; i < ny; ++i) nonFinite = nonFinite | !isFiniteT(stateRef(w, s, i));
    status |= flagIf(nonFinite & healthy, kStatusNonFinite);
  }
  if (anyLane(failed(status))) {
    const MaskOf<T> back = failed(status);
    for (int i = 0; i < ny; ++i) stateRef(w, s, i) = selectT(back, y0[i], stateRef(w, s, i));
    if (allLanes(back)) return status;
    w.time[0] += selectT(back, T(0), dt);
    return status;
  }
  w.time[0] += dt;
  return status;
}

// Observations of one world at its current q, u: body poses and velocities, bushing
// coordinates and forces, contact separations. kinematicsCurrent: the workspace already holds the
// poses and velocities of this q, u.
template <class T>
LOCKSTEP_HD void observeWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                              bool kinematicsCurrent = false) {
  const Sizes& s = model.sizes;
  if (!kinematicsCurrent) computeKinematics<T>(model, w.params, w.q, w.u, ws, /*full=*/false);
  for (int b = 0; b < s.nb; ++b) {
    const Transform<T> X_GB = loadTransform<T>(ws.at(ws.L.X_GB + 12 * b));
    T quat[4];
    X_GB.R.toQuaternion(quat);
    const Strided<T> pose = w.bodyPose + 7 * b;
    for (int i = 0; i < 3; ++i) pose[i] = X_GB.p[i];
    for (int i = 0; i < 4; ++i) pose[3 + i] = quat[i];
    storeSpatialVec(w.bodyVelocity + 6 * b, loadSpatialVec<T>(ws.at(ws.L.V_GB + 6 * b)));
  }
  for (int i = 0; i < s.nBushings; ++i) {
    const BushingQuantities<T> r = evaluateBushingOfWorld(model, w.params, ws, i);
    for (int j = 0; j < 6; ++j) {
      w.bushingState[12 * i + j] = r.q[j];
      w.bushingState[12 * i + 6 + j] = r.f[j];
    }
  }
  for (int i = 0; i < s.nContacts; ++i)
    w.contactError[i] = contactSeparationOfWorld(model, w.params, ws, i);
}

// Puts a world back to its initial state (time 0, no dissipated energy, healthy) and observes it.
template <class T>
LOCKSTEP_HD void resetWorldState(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  const Sizes& s = model.sizes;
  for (int i = 0; i < s.nq; ++i) w.q[i] = w.initialQ[i];
  for (int i = 0; i < s.nu; ++i) w.u[i] = w.initialU[i];
  for (int i = 0; i < s.nz; ++i) w.z[i] = T(0);
  w.time[0] = T(0);
  w.status[0] = kStatusOk;
  observeWorld(model, w, ws);
}

// Advances one world by nSteps steps, unless it is already flagged. A failure is recorded in
// status; with autoReset the world instead goes back to its initial state, recording the reason.
template <class T, bool kConstraints = true>
LOCKSTEP_HD void advanceWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                              const StepSettings<T>& settings) {
  if (w.status[0] != kStatusOk) return;
  for (int k = 0; k < settings.nSteps; ++k) {
    const int status = stepWorld<T, kConstraints>(model, w, ws, settings);
    if (status) {
      if (settings.autoReset) {
        w.lastFailure[0] = status;
        w.resetCount[0] += 1;
        resetWorldState(model, w, ws);
      } else {
        w.status[0] |= status;
      }
      return;
    }
  }
  if (settings.observe) observeWorld(model, w, ws);
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
template <class T, bool kConstraints = true>
LOCKSTEP_HD StatusOf<T> evaluateOutputs(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  computeKinematics<T>(model, w.params, w.q, w.u, ws);
  const ForceSummary<T> f = computeForces<T>(model, w, w.u, ws, ws.at(ws.L.ydot + model.sizes.nq + model.sizes.nu));
  StatusOf<T> status = f.status;
  if (!allLanes(failed(status)))
    status = firstFailure(status, computeArticulatedAccelerations<T>(model, w.params, ws, w.udot));
  if constexpr (kConstraints) {
    if (!allLanes(failed(status)))
      status = firstFailure(status, solveConstraints<T>(model, w.params, ws, w.udot, w.multipliers));
  }
  if (anyLane(failed(status))) {
    const MaskOf<T> bad = failed(status);
    for (int i = 0; i < model.sizes.nu; ++i) w.udot[i] = selectT(bad, T(0) / T(0), T(w.udot[i]));
  }
  T ke, pe;
  computeEnergy<T>(model, w.params, ws, &ke, &pe);
  w.energy[0] = ke;
  w.energy[1] = pe + f.elementPotential;
  observeWorld(model, w, ws, /*kinematicsCurrent=*/true);
  return status;
}

template <class T, bool kConstraints = true>
LOCKSTEP_HD void evaluateWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws) {
  w.status[0] |= evaluateOutputs<T, kConstraints>(model, w, ws);
}

}  // namespace lockstep
