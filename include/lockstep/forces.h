// Stage 2, forces: every applied force of one world, accumulated by source into the total body
// forces Fb (at each Bo, in G) and total mobility forces tauTotal of the workspace. Each source
// also reports what energy bookkeeping needs (potential energy, dissipated power).
// Sources, in order: the user's mobility forces (clamped to the effort limits) and body forces,
// gravity, viscous joint damping.
#pragma once

#include "lockstep/kinematics.h"

namespace lockstep {

template <class T>
struct ForceSummary {
  T dissipatedPower;  // rate at which viscous elements remove energy (>= 0)
  int status;         // StatusFlag bits raised while evaluating forces
};

template <class T>
LOCKSTEP_HD ForceSummary<T> computeForces(const ModelView<T>& model, const WorldView<T>& w,
                                          Strided<const T> u, const Workspace<T>& ws) {
  const WorkspaceLayout& L = ws.L;
  const Sizes& s = model.sizes;
  ForceSummary<T> out{T(0), kStatusOk};

  // Mobility forces: actions within their effort limits, minus viscous joint damping.
  const Strided<T> tauTotal = ws.at(L.tauTotal);
  for (int i = 0; i < s.nu; ++i) {
    const T limit = w.params.effortLimit[i];
    T tau = w.tau[i];
    tau = tau > limit ? limit : (tau < -limit ? -limit : tau);
    const T c = w.params.damping[i];
    tauTotal[i] = tau - c * u[i];
    out.dissipatedPower += c * u[i] * u[i];
  }

  // Body forces: the user's, plus gravity m g at the center of mass.
  const Vec3<T> g = loadVec3<T>(w.params.gravity);
  for (int b = 0; b < s.nb; ++b) {
    const Rotation<T> R_GB = loadTransform<T>(ws.at(L.X_GB + 12 * b)).R;
    const Strided<const T> mp = w.params.massProps + 10 * b;
    const T m = mp[0];
    const Vec3<T> c_G = R_GB * Vec3<T>{{mp[1], mp[2], mp[3]}};
    const SpatialVec<T> F = loadSpatialVec<T>(w.bodyForce + 6 * b) + SpatialVec<T>{cross(c_G, m * g), m * g};
    storeSpatialVec(ws.at(L.Fb + 6 * b), F);
  }
  return out;
}

// Kinetic and potential energy of one world, after computeKinematics.
template <class T>
LOCKSTEP_HD void computeEnergy(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                               T* kinetic, T* potential) {
  const WorkspaceLayout& L = ws.L;
  const Vec3<T> g = loadVec3<T>(params.gravity);
  T ke = T(0), pe = T(0);
  for (int b = 0; b < model.sizes.nb; ++b) {
    const Transform<T> X_GB = loadTransform<T>(ws.at(L.X_GB + 12 * b));
    const SpatialInertia<T> I = bodyInertiaInG(params, b, X_GB.R);
    ke += I.kineticEnergy(loadSpatialVec<T>(ws.at(L.V_GB + 6 * b)));
    pe -= I.m * dot(g, X_GB.p + I.c);
  }
  *kinetic = ke;
  *potential = pe;
}

}  // namespace lockstep
