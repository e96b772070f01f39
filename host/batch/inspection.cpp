// What one world's force elements, contacts and bodies are doing at its current (host) state:
// the quantities of the seeds' element classes, computed on demand by the same per-world code the
// backends run (kinematics, then the element), for inspection, recording and tests.
#include <cmath>
#include <stdexcept>

#include "lockstep/engine/batch.h"

namespace lockstep {

template <class T>
Transformd Batch<T>::bodyPose(std::int64_t w, int body) const {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  checkWorld(w);
  checkReadable();
  const Strided<const T> p = bodyPoseAt(readOnlyHostView().world(w), body);
  return {Rotationd::fromQuaternion(double(p[3]), double(p[4]), double(p[5]), double(p[6])),
          {{double(p[0]), double(p[1]), double(p[2])}}};
}

template <class T>
SpatialVecd Batch<T>::bodyVelocity(std::int64_t w, int body) const {
  if (body < 0 || body >= sizes_.nb) throw std::out_of_range("body index " + std::to_string(body) + " out of range");
  checkWorld(w);
  checkReadable();
  const Strided<const T> v = bodyVelocityAt(readOnlyHostView().world(w), body);
  return {{{double(v[0]), double(v[1]), double(v[2])}}, {{double(v[3]), double(v[4]), double(v[5])}}};
}

template <class T>
std::vector<T> Batch<T>::hostKinematics(std::int64_t w) const {
  checkWorld(w);
  checkReadable();
  std::vector<T> scratch(layout_.total);
  const WorldView<T> view = readOnlyHostView().world(w);
  computeKinematics<T>(compiled_.view(), view.params, view.q, view.u, Workspace<T>{layout_, {scratch.data(), 1}});
  return scratch;
}

template <class T>
bool Batch<T>::singularJointInertia(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const WorldView<T> view = readOnlyHostView().world(w);
  const auto bits = factorArticulatedInertias<T>(compiled_.view(), view.params, Workspace<T>{layout_, {scratch.data(), 1}});
  return (static_cast<std::int32_t>(bits) & kStatusSingularMassMatrix) != 0;
}

template <class T>
BushingQuantities<T> Batch<T>::bushing(std::int64_t w, int i) const {
  checkElement(i, sizes_.nBushings, "bushing");
  std::vector<T> scratch = hostKinematics(w);
  return evaluateBushingOfWorld(compiled_.view(), readOnlyHostView().world(w).params,
                                Workspace<T>{layout_, {scratch.data(), 1}}, i);
}

template <class T>
SpringDamperQuantities<T> Batch<T>::spring(std::int64_t w, int i) const {
  checkElement(i, sizes_.nSprings, "spring-damper");
  std::vector<T> scratch = hostKinematics(w);
  return evaluateSpringOfWorld(compiled_.view(), readOnlyHostView().world(w).params,
                               Workspace<T>{layout_, {scratch.data(), 1}}, i);
}

template <class T>
GroundContactQuantities<T> Batch<T>::groundContact(std::int64_t w, int i) const {
  checkElement(i, sizes_.nGround, "ground contact");
  std::vector<T> scratch = hostKinematics(w);
  return evaluateGroundContactOfWorld(compiled_.view(), readOnlyHostView().world(w).params,
                                      Workspace<T>{layout_, {scratch.data(), 1}}, i);
}

template <class T>
std::vector<SpatialVecd> Batch<T>::appliedBodyForces(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  computeForces<T>(compiled_.view(), readOnlyHostView().world(w), readOnlyHostView().world(w).u, ws,
                   ws.ydot(sizes_.nq + sizes_.nu));
  std::vector<SpatialVecd> out(sizes_.nb);
  for (int b = 0; b < sizes_.nb; ++b)
    for (int i = 0; i < 6; ++i) out[b][i] = double(ws.Fb(b)[i]);
  return out;
}

template <class T>
std::vector<double> Batch<T>::appliedMobilityForces(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  computeForces<T>(compiled_.view(), readOnlyHostView().world(w), readOnlyHostView().world(w).u, ws,
                   ws.ydot(sizes_.nq + sizes_.nu));
  std::vector<double> out(sizes_.nu);
  for (int i = 0; i < sizes_.nu; ++i) out[i] = double(ws.tauTotal()[i]);
  return out;
}

template <class T>
std::vector<SpatialVecd> Batch<T>::bodyAccelerations(std::int64_t w) const {
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  bodyAccelerationsFromUdot<T>(compiled_.view(), ws, readOnlyHostView().world(w).udot, ws.A_GB());
  std::vector<SpatialVecd> out(sizes_.nb);
  for (int b = 0; b < sizes_.nb; ++b) {
    const SpatialVec<T> A = bodyAcceleration<T>(Strided<const T>(ws.A_GB()), b);
    for (int i = 0; i < 6; ++i) out[b][i] = double(A[i]);
  }
  return out;
}

template <class T>
typename Batch<T>::ContactQuantities Batch<T>::contact(std::int64_t w, int i) const {
  checkElement(i, sizes_.nContacts, "sphere contact");
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  const WorldView<T> view = readOnlyHostView().world(w);
  const ModelView<T> model = compiled_.view();
  // Body accelerations from the stored udot (pass 3 of the sweep).
  bodyAccelerationsFromUdot<T>(model, ws, view.udot, ws.A_GB());
  const Strided<T> A = ws.A_GB();
  const ElementTopology e = compiled_.contact[i];
  const ContactKinematics<T> k = contactKinematicsOfWorld(model, view.params, ws, i);
  ContactQuantities q;
  q.enabled = contactEnabled(w, i);
  q.positionError = double(k.positionError);
  int row = 0;
  for (int c = 0; c < i; ++c) row += contactEquationCount(compiled_.contact[c]);
  q.velocityErrors = q.accelerationErrors = q.multipliers = Vec3d::zero();
  for (int r = 0; r < contactEquationCount(e); ++r) {
    const int axis = contactEquationAxis(e, r);
    q.velocityErrors[axis] = double(k.velocityError[axis]);
    q.accelerationErrors[axis] =
        double(contactAccelerationLinear(k, axis, bodyAcceleration<T>(A, e.bodyA), bodyAcceleration<T>(A, e.bodyB)) +
               contactAccelerationBias(k, axis));
    q.multipliers[axis] = q.enabled ? double(view.multipliers[row + r]) : 0.0;
  }
  q.X_GC = castTransform<double>(Transform<T>{k.R_GC, k.p_GCo});
  q.forceOnSphereBInG = q.X_GC.R * (-q.multipliers);
  return q;
}

template <class T>
double Batch<T>::constraintError(std::int64_t w) const {
  if (sizes_.nContacts == 0) {
    checkWorld(w);
    return 0.0;
  }
  std::vector<T> scratch = hostKinematics(w);
  const Workspace<T> ws{layout_, {scratch.data(), 1}};
  return double(constraintErrors(compiled_.view(), readOnlyHostView().world(w).params, ws, EquationSet::Holonomic,
                                 ws.rhs()));
}

template <class T>
double Batch<T>::dissipatedEnergy(std::int64_t w, int i) const {
  checkElement(i, sizes_.nBushings, "bushing");
  return z(w)[i];
}

template <class T>
void Batch<T>::setDissipatedEnergy(std::int64_t w, int i, double energy) {
  checkWorld(w);
  checkElement(i, sizes_.nBushings, "bushing");
  validateNonNegative(energy, "world " + std::to_string(w) + " bushing '" + model_->bushings()[i].desc.name + "'",
                      "dissipated energy");
  touchHost();
  hostView().world(w).z[i] = T(energy);
}

#define LOCKSTEP_INSTANTIATE(T)                                                                    \
  template Transformd Batch<T>::bodyPose(std::int64_t, int) const;                                \
  template SpatialVecd Batch<T>::bodyVelocity(std::int64_t, int) const;                           \
  template std::vector<T> Batch<T>::hostKinematics(std::int64_t) const;                           \
  template bool Batch<T>::singularJointInertia(std::int64_t) const;                               \
  template BushingQuantities<T> Batch<T>::bushing(std::int64_t, int) const;                      \
  template SpringDamperQuantities<T> Batch<T>::spring(std::int64_t, int) const;                  \
  template GroundContactQuantities<T> Batch<T>::groundContact(std::int64_t, int) const;          \
  template std::vector<SpatialVecd> Batch<T>::appliedBodyForces(std::int64_t) const;              \
  template std::vector<SpatialVecd> Batch<T>::bodyAccelerations(std::int64_t) const;              \
  template std::vector<double> Batch<T>::appliedMobilityForces(std::int64_t) const;              \
  template typename Batch<T>::ContactQuantities Batch<T>::contact(std::int64_t, int) const;      \
  template double Batch<T>::constraintError(std::int64_t) const;                                  \
  template double Batch<T>::dissipatedEnergy(std::int64_t, int) const;                            \
  template void Batch<T>::setDissipatedEnergy(std::int64_t, int, double);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
