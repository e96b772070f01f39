// Stage 4, integration: fixed-step semi-implicit Euler and classical RK4 over the state
// y = [q; u; z] of one world, with quaternions normalized after every step (a model under MuJoCo's
// law: MuJoCo's Euler, implicit in the joints' damping, and MuJoCo 4's RK4, positions advanced along
// the manifold). (The world-level
// operations built on it, advance, reset, evaluate and observe, are in world.h.) A world whose step
// fails (non-finite state, singular joint inertia, ...) is put back to its state at the start of
// that step, flagged in its status, and not advanced again until it is reset.
#pragma once

#include "lockstep/physics/forward.h"

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

// ydot = f(t, y) for the world's current q, u, z into the workspace's ydot: the forward pipeline
// (forward.h), then qdot. Returns StatusFlag bits (per lane, for a pack of worlds).
template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD StatusOf<T> computeStateDerivative(const ModelView<T>& model, const WorldView<T>& w,
                                               const Workspace<T>& ws) {
  const Sizes& s = model.sizes;
  const Strided<T> ydot = ws.ydot();
  const StatusOf<T> status =
      forwardDynamics<T, kFeatures>(model, w, ws, ydot + s.nq, ydot + (s.nq + s.nu), ws.lambda()).status;
  if (allLanes(failed(status))) return status;
  computeQdot(model, Strided<const T>(w.q), Strided<const T>(w.u), ydot);
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

// MuJoCo's Euler (mj_Euler) integrates the joints' damping implicitly: where any speed has damping,
// the accelerations udot (ydot's u part, after computeStateDerivative at the step's start) become
// the solution of (M + dt B) udot' = M udot, B = diag(damping) (MuJoCo's eulerdamp: qfrc_smooth and
// qfrc_constraint hold -B u already). The lanes whose M + dt B is not positive definite are returned.
// Not inlined: inlined, it took advanceKernel<double, 2>'s frame from 4,352 to 6,080 bytes for every
// model under MuJoCo's law (bench/kernel_budgets.txt); called, only Euler models with damping pay.
template <class T>
LOCKSTEP_HD_NOINLINE MaskOf<T> mujocoImplicitDamping(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                            T dt, Strided<T> udot) {
  const int nu = model.sizes.nu;
  // (A model under the compliant law's implicit step took its damping in the solve's metric.)
  bool damped = false;
  for (int i = 0; i < nu && !damped && model.sizes.softCompliant == 0; ++i) damped = anyLane(T(w.params.damping[i]) > T(0));
  if (!damped) return T(0) > T(1);
  const Strided<T> M = ws.softM(), H = ws.softH(), f = ws.softVec();
  computeMassMatrix<T>(model, w.params, ws, M, ws.softIc());
  forEachSpeedInTree(model, [&](int i, int u0, int u1) {  // (M within its trees' blocks, crba.h)
    T x = T(0);
    for (int j = u0; j < u1; ++j) x += M[i * nu + j] * udot[j];
    for (int j = u0; j <= i; ++j) H[i * nu + j] = M[i * nu + j];
    f[i] = x;
    H[i * nu + i] = T(H[i * nu + i]) + dt * T(w.params.damping[i]);
  });
  const MaskOf<T> failedLanes = softCholesky<T>(H, nu, &model);
  softNegativeSolve<T>(Strided<const T>(H), nu, f);  // f = -(M + dt B)^-1 M udot
  for (int i = 0; i < nu; ++i) udot[i] = selectT(failedLanes, T(udot[i]), -T(f[i]));
  return failedLanes;
}

// One step of size dt. Returns StatusFlag bits; on failure the state is as it was before the step.
// On a pack of worlds each lane fails or advances on its own.
template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD StatusOf<T> stepWorld(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                          const StepSettings<T>& settings) {
  const Sizes& s = model.sizes;
  const T dt = settings.dt;
  const Integrator integrator = settings.integrator;
  const int ny = s.nq + s.nu + s.nz;
  const Strided<T> y0 = ws.y0(), acc = ws.acc(), ydot = ws.ydot();
  for (int i = 0; i < ny; ++i) y0[i] = stateRef(w, s, i);

  StatusOf<T> status = StatusOf<T>(kStatusOk);
  // RK4's tableau: the stages' steps from y0 and the weights of their derivatives (times dt / 6).
  const T half = T(0.5) * dt;
  const T stageStep[3] = {half, half, dt};
  const T weight[4] = {T(1), T(2), T(2), T(1)};
  // Under MuJoCo's stepping: body b's speeds from u0 plus h times the accelerations `rates` (in M, as
  // MuJoCo's qvel and qacc hold a Ball's or Free's angular ones), expressed at its new q.
  auto advanceSpeeds = [&](const BodyTopology& topo, const T* rates, T h) {
    T u0[kMaxMobilizerU], uM[kMaxMobilizerU], uF[kMaxMobilizerU];
    for (int i = 0; i < topo.nu; ++i) u0[i] = y0[s.nq + topo.uOffset + i];
    mobilizerSpeedsInM<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, u0, uM);
    for (int i = 0; i < topo.nu; ++i) uM[i] = uM[i] + h * rates[i];
    mobilizerSpeedsInF<T>(topo.mobilizer, Strided<const T>(w.q) + topo.qOffset, uM, uF);
    for (int i = 0; i < topo.nu; ++i) w.u[topo.uOffset + i] = uF[i];
  };
  const bool mujocoStepping = (kFeatures & kFeatureSoftConstraints) != 0 && s.mujocoStepping;
  if (mujocoStepping && integrator == Integrator::SemiImplicitEuler) {
    // MuJoCo's Euler (mj_Euler, mj_advance): the speeds advance (in M) by the accelerations at the
    // start, implicit in the joints' damping (mujocoImplicitDamping); the positions then advance along
    // the manifold by the new speeds (mobilizerIntegrateQ), and z by its derivative.
    status = computeStateDerivative<T, kFeatures>(model, w, ws);
    if (!allLanes(failed(status))) {
      const Strided<T> udot = ydot + s.nq;
      status |= flagIf(mujocoImplicitDamping<T>(model, w, ws, dt, udot) & !failed(status), kStatusSingularMassMatrix);
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        T u0[kMaxMobilizerU], speeds[kMaxMobilizerU], rates[kMaxMobilizerU];
        for (int i = 0; i < topo.nu; ++i) u0[i] = y0[s.nq + topo.uOffset + i];
        mobilizerSpeedsInM<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, u0, speeds);
        mobilizerSpeedsInM<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, udot + topo.uOffset, rates);
        for (int i = 0; i < topo.nu; ++i) speeds[i] = speeds[i] + dt * rates[i];
        Strided<T> qb = w.q + topo.qOffset;
        mobilizerIntegrateQ<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, speeds, dt, qb);
        advanceSpeeds(topo, rates, dt);
      }
      for (int i = s.nq + s.nu; i < ny; ++i) stateRef(w, s, i) = y0[i] + dt * ydot[i];
    }
  } else if (integrator == Integrator::SemiImplicitEuler) {
    // u and z advance with the derivative at the start; q then advances with the new u.
    status = computeStateDerivative<T, kFeatures>(model, w, ws);
    if (!allLanes(failed(status))) {
      for (int i = s.nq; i < ny; ++i) stateRef(w, s, i) = y0[i] + dt * ydot[i];
      computeQdot(model, Strided<const T>(w.q), Strided<const T>(w.u), ydot);
      for (int i = 0; i < s.nq; ++i) w.q[i] = y0[i] + dt * ydot[i];
    }
  } else if (mujocoStepping) {
    // A model under MuJoCo's law steps as MuJoCo 4's RK4 (mj_RungeKutta): the same tableau in MuJoCo's
    // coordinates. A Ball's or Free's angular velocity and acceleration are combined in M (as
    // MuJoCo's qvel and qacc hold them: mobilizerSpeedsInM), and every stage's positions, and the
    // end's, are advanced along the manifold from q0 (mobilizerIntegrateQ), not by qdot: by the
    // stage's combination of the rates of the coordinates, which on a rotation are the speeds at the
    // stage mapped through dexp^-1 of the stage's rotation theta from q0 (Munthe-Kaas's RK4 on the
    // rotation group, mobilizerStageRates; MuJoCo 3 and earlier combined the speeds themselves, a
    // difference of order h^3 |w|^2 per step). acc's first nu entries sum the rates, its u part the
    // accelerations, both in M; ws.rkTheta holds each body's theta between stages.
    for (int k = 0; k < 4; ++k) {
      status = firstFailure(status, computeStateDerivative<T, kFeatures>(model, w, ws));
      if (allLanes(failed(status))) break;
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        T speeds[kMaxMobilizerU], rates[kMaxMobilizerU];
        mobilizerSpeedsInM<T>(topo.mobilizer, w.q + topo.qOffset, w.u + topo.uOffset, speeds);
        mobilizerSpeedsInM<T>(topo.mobilizer, w.q + topo.qOffset, ydot + (s.nq + topo.uOffset), rates);
        const Strided<T> theta = ws.rkTheta(b);
        if (k > 0) {  // speeds becomes the rates of the coordinates at the stage
          const T thetaB[3] = {theta[0], theta[1], theta[2]};
          mobilizerStageRates<T>(topo.mobilizer, thetaB, speeds);
        }
        for (int i = 0; i < topo.nu; ++i) {
          const int iq = topo.uOffset + i, iu = s.nq + topo.uOffset + i;
          acc[iq] = (k == 0 ? T(0) : T(acc[iq])) + weight[k] * speeds[i];
          acc[iu] = (k == 0 ? T(0) : T(acc[iu])) + weight[k] * rates[i];
        }
        if (k < 3) {
          Strided<T> qb = w.q + topo.qOffset;
          mobilizerIntegrateQ<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, speeds, stageStep[k], qb);
          for (int i = 0; i < 3 && i < topo.nu; ++i) theta[i] = stageStep[k] * speeds[i];
          advanceSpeeds(topo, rates, stageStep[k]);
        }
      }
      for (int i = s.nq + s.nu; i < ny; ++i) {
        acc[i] = (k == 0 ? T(0) : acc[i]) + weight[k] * ydot[i];
        if (k < 3) stateRef(w, s, i) = y0[i] + stageStep[k] * ydot[i];
      }
    }
    if (!allLanes(failed(status))) {
      const T sixth = dt / T(6);
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        T speeds[kMaxMobilizerU], rates[kMaxMobilizerU];
        for (int i = 0; i < topo.nu; ++i) {
          speeds[i] = acc[topo.uOffset + i];
          rates[i] = acc[s.nq + topo.uOffset + i];
        }
        Strided<T> qb = w.q + topo.qOffset;
        mobilizerIntegrateQ<T>(topo.mobilizer, Strided<const T>(y0) + topo.qOffset, speeds, sixth, qb);
        advanceSpeeds(topo, rates, sixth);
      }
      for (int i = s.nq + s.nu; i < ny; ++i) stateRef(w, s, i) = y0[i] + sixth * acc[i];
    }
  } else {
    // Classical RK4: y1 = y0 + dt/6 (k1 + 2 k2 + 2 k3 + k4).
    for (int k = 0; k < 4; ++k) {
      status = firstFailure(status, computeStateDerivative<T, kFeatures>(model, w, ws));
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
    if constexpr ((kFeatures & kFeatureSphereContacts) != 0) {
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

}  // namespace lockstep
