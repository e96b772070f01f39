// The forward pipeline of one world: from q, u, tau and the parameters to udot, in the order of the
// stages (one header each):
//   kinematics (X_GB, V_GB, H, c) -> forces (Fb, tauTotal, zdot) -> articulated-body sweep (udot,
//   A_GB) -> constraints (multipliers; udot and A_GB corrected) -> soft constraints (udot the
//   constrained qacc, A_GB its body accelerations)
// and the mobilizers' qdot = N(q) u. The integrator (computeStateDerivative) and the evaluation of
// outputs (evaluateOutputs, world.h) both run this one pipeline.
#pragma once

#include "lockstep/physics/constraints.h"
#include "lockstep/physics/forces.h"
#include "lockstep/physics/soft_constraints.h"

namespace lockstep {

// The constraint solves a forward pipeline is compiled with (a template argument of the pipeline,
// the integrators and the world operations; backend.h dispatchModelFeatures picks a model's): the
// sphere contacts' bilateral solve (constraints.h) and MuJoCo's soft-constraint law
// (soft_constraints.h). A model without them runs code without their registers and stack.
enum ModelFeature : int { kFeatureSphereContacts = 1, kFeatureSoftConstraints = 2 };
constexpr int kAllFeatures = kFeatureSphereContacts | kFeatureSoftConstraints;

// Runs the pipeline at the world's current q, u: udot (nu), the dissipated powers zdot (nz) and,
// with kFeatureSphereContacts, the multipliers lambda (nc); with kFeatureSoftConstraints, udot is the
// soft-constraint solve's qacc. Returns the forces' summary (element potential energy) with the
// StatusFlag bits of every stage (per lane, for a pack of worlds); the stages after one that failed
// on every lane are skipped. A feature left out compiles its solve out, for models without it (the
// GPU kernel then needs far fewer registers and far less stack, and the CPU backend runs models
// without sphere contacts on packs of worlds).
template <class T, int kFeatures = kAllFeatures>
LOCKSTEP_HD ForceSummary<T> forwardDynamics(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                            Strided<T> udot, Strided<T> zdot, Strided<T> lambda) {
  computeKinematics<T>(model, w.params, w.q, w.u, ws);
  ForceSummary<T> f = computeForces<T>(model, w, w.u, ws, zdot);
  if (!allLanes(failed(f.status)))
    f.status = firstFailure(f.status, computeArticulatedAccelerations<T>(model, w.params, ws, udot));
  if constexpr ((kFeatures & kFeatureSphereContacts) != 0) {
    if (!allLanes(failed(f.status)))
      f.status = firstFailure(f.status, solveConstraints<T>(model, w.params, ws, udot, lambda));
  }
  if constexpr ((kFeatures & kFeatureSoftConstraints) != 0) {
    if (model.sizes.nSoftRows > 0 && !allLanes(failed(f.status))) {
      f.status = firstFailure(f.status, solveSoftConstraints<T>(model, w, ws, udot));
      bodyAccelerationsFromUdot<T>(model, ws, Strided<const T>(udot), ws.A_GB());  // of the constrained qacc
    }
  }
  return f;
}

// qdot = N(q) u for every mobilizer (nq entries).
template <class T>
LOCKSTEP_HD_INLINE void computeQdot(const ModelView<T>& model, Strided<const T> q, Strided<const T> u, Strided<T> qdot) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    Strided<T> qdotb = qdot + topo.qOffset;
    mobilizerQdot<T>(topo.mobilizer, q + topo.qOffset, u + topo.uOffset, qdotb);
  }
}

}  // namespace lockstep
