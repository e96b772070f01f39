// Stage 5, observations: MuJoCo's sensors (MJCF <sensor>) of one world, as MuJoCo's mj_sensorPos,
// mj_sensorVel and mj_sensorAcc compute them, into the per-world field `sensors` (Model::
// sensorDataNames() order, MuJoCo's sensordata for the sensors Lockstep computes):
//   jointpos, jointvel            the coordinate and its speed (1 value)
//   framepos, framequat           the frame S's origin and orientation (w x y z) in Ground (3, 4)
//   framelinvel, frameangvel      the velocity of S's origin and S's angular velocity, in Ground (3, 3)
//   velocimeter, gyro             the same, in S (3, 3)
//   accelerometer                 the acceleration of S's origin minus gravity, in S (3)
//   touch                         the normal ground contact forces on S's body whose contact point
//                                 lies in S's zone (a sphere, capsule, ellipsoid, cylinder or box) (1)
//   force, torque                 what the parent exerts on the subtree of S's body: the force and its
//                                 moment about S's origin, in S (3, 3)
//   subtreecom, subtreelinvel     the centre of mass of the subtree of S's body and its velocity, in
//                                 Ground (3, 3); Ground's subtree: every body
// S is fixed on a body (Ground for -1) at X_BS (the per-world parameter sensorFrame, which also
// holds a touch zone's size). A sensor's cutoff (the per-world parameter sensorCutoff) > 0 clamps
// its values as MuJoCo's apply_cutoff does, by MuJoCo's data type: a real value to [-cutoff,
// cutoff], touch (a positive value) to at most cutoff, a quaternion (framequat) not at all. The positions and velocities are computed with every observation, the
// accelerations (accelerometer, force, torque) with every evaluation, from its udot: after a step
// they are those of the last evaluate(), as the Batch documents.
#pragma once

#include "lockstep/physics/forces.h"

namespace lockstep {

LOCKSTEP_HD_INLINE bool sensorNeedsAccelerations(std::int32_t type) {
  return type == kSensorAccelerometer || type == kSensorForce || type == kSensorTorque;
}

// Whether body c is in the subtree of body s (Ground's subtree holds every body).
template <class T>
LOCKSTEP_HD_INLINE bool inSubtree(const ModelView<T>& model, int c, int s) {
  int a = c;
  while (a >= 0 && a != s) a = model.body[a].parent;
  return a == s;
}

// Whether the point p (in the zone's frame) lies in a zone of the given half-sizes, as MuJoCo's
// touch sensor asks; lane by lane.
template <class T>
LOCKSTEP_HD_INLINE MaskOf<T> insideZone(std::int32_t zone, const Vec3<T>& s, const Vec3<T>& p) {
  switch (zone) {
    case kZoneSphere: return dot(p, p) <= s[0] * s[0];
    case kZoneCapsule: {
      const T z = selectT(p[2] > s[1], s[1], selectT(p[2] < -s[1], -s[1], p[2]));
      return p[0] * p[0] + p[1] * p[1] + (p[2] - z) * (p[2] - z) <= s[0] * s[0];
    }
    case kZoneEllipsoid: return square(p[0] / s[0]) + square(p[1] / s[1]) + square(p[2] / s[2]) <= T(1);
    case kZoneCylinder: return (p[0] * p[0] + p[1] * p[1] <= s[0] * s[0]) & (absT(p[2]) <= s[1]);
    default: return (absT(p[0]) <= s[0]) & (absT(p[1]) <= s[1]) & (absT(p[2]) <= s[2]);
  }
}

// MuJoCo's cutoff c of one sensor's values `out` (see above); c <= 0: none. Lane by lane.
template <class T>
LOCKSTEP_HD_INLINE void applyCutoff(std::int32_t type, const T& c, const Strided<T>& out) {
  if (type == kSensorFrameQuat) return;
  const int n = type == kSensorJointPos || type == kSensorJointVel || type == kSensorTouch ? 1 : 3;
  const MaskOf<T> on = c > T(0);
  for (int k = 0; k < n; ++k) {
    const T x = out[k];
    const T below = selectT(on & (x > c), c, x);
    out[k] = type == kSensorTouch ? below : selectT(on & (below < -c), -c, below);
  }
}

// Which sensors a call computes: those of positions and velocities (after computeKinematics), or
// those of accelerations (after forwardDynamics: Fb holds the applied body forces, A_GB the body
// accelerations of udot).
enum class SensorStage { PositionsAndVelocities, Accelerations };

// The values of sensor i (not of kSensorUnsupported) at the world's state into `out`.
template <class T>
LOCKSTEP_HD void computeSensor(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws, int i,
                               const SensorTopology& topo, const Strided<T>& out) {
  const Sizes& s = model.sizes;
  if (topo.type == kSensorJointPos) {
    out[0] = w.q[topo.coordinate];
    return;
  }
  if (topo.type == kSensorJointVel) {
    out[0] = w.u[topo.speed];
    return;
  }
  const Strided<const T> frame = sensorFrameAt(w.params, i);  // X_BS, then the zone's size
  const int b = topo.body;
  const Transform<T> X_GB = bodyPose(ws, b), X_GS = X_GB * loadTransform<T>(frame);
  const Rotation<T>& R = X_GS.R;
  const SpatialVec<T> V = bodyVelocity(ws, b);
  const Vec3<T> r = X_GS.p - X_GB.p;  // Bo to S's origin
  const Vec3<T> om = V.ang, v = V.lin + cross(om, r);
  switch (topo.type) {
    case kSensorFramePos: storeVec3(out, X_GS.p); break;
    case kSensorFrameQuat: {
      T quaternion[4];
      R.toQuaternion(quaternion);
      for (int k = 0; k < 4; ++k) out[k] = quaternion[k];
      break;
    }
    case kSensorFrameLinVel: storeVec3(out, v); break;
    case kSensorFrameAngVel: storeVec3(out, om); break;
    case kSensorVelocimeter: storeVec3(out, R.invTimes(v)); break;
    case kSensorGyro: storeVec3(out, R.invTimes(om)); break;
    case kSensorAccelerometer: {
      Vec3<T> a = -loadVec3<T>(w.params.gravity);  // at rest an accelerometer reads -g
      if (b >= 0) {
        const SpatialVec<T> A = bodyAcceleration<T>(Strided<const T>(ws.A_GB()), b);
        a = a + A.lin + cross(A.ang, r) + cross(om, cross(om, r));
      }
      storeVec3(out, R.invTimes(a));
      break;
    }
    case kSensorTouch: {
      const Vec3<T> size = loadVec3<T>(frame + 12);
      T sum = T(0);
      for (int g = 0; g < s.nGround; ++g) {
        if (model.ground[g].bodyA != b) continue;
        const GroundContactQuantities<T> c = evaluateGroundContactOfWorld(model, w.params, ws, g);
        const MaskOf<T> inside = insideZone<T>(topo.zone, size, R.invTimes(c.p_GP - X_GS.p));
        sum += selectT(inside & (c.normalForce > T(0)), c.normalForce, T(0));
      }
      out[0] = sum;
      break;
    }
    case kSensorSubtreeCom:
    case kSensorSubtreeLinVel: {
      T mass = T(0);
      Vec3<T> sum = Vec3<T>::zero();
      for (int c = 0; c < s.nb; ++c) {
        if (!inSubtree(model, c, b)) continue;
        const SpatialInertia<T> I = bodyInertiaInG(ws, c);  // I.c: Bo to the centre of mass, in G
        const SpatialVec<T> Vc = bodyVelocity(ws, c);
        sum = sum + I.m * (topo.type == kSensorSubtreeCom ? bodyOrigin(ws, c) + I.c
                                                          : Vc.lin + cross(Vc.ang, I.c));
        mass += I.m;
      }
      storeVec3(out, selectT(mass > T(0), T(1) / selectT(mass > T(0), mass, T(1)), T(0)) * sum);
      break;
    }
    case kSensorForce:
    case kSensorTorque: {
      // The subtree's rate of change of momentum minus every other force on it, about S's origin.
      Vec3<T> force = Vec3<T>::zero(), moment = Vec3<T>::zero();
      for (int c = 0; c < s.nb; ++c) {
        if (!inSubtree(model, c, b)) continue;
        const SpatialInertia<T> I = bodyInertiaInG(ws, c);  // about Bo, in G
        const SpatialVec<T> Vc = bodyVelocity(ws, c), Ac = bodyAcceleration<T>(Strided<const T>(ws.A_GB()), c);
        const Vec3<T> wc = Vc.ang, alpha = Ac.ang, p_GC = bodyOrigin(ws, c) + I.c;
        const SymMat33<T> J = I.centralInertia();
        const Vec3<T> f = I.m * (Ac.lin + cross(alpha, I.c) + cross(wc, cross(wc, I.c)));
        const Vec3<T> n = J * alpha + cross(wc, J * wc) + cross(p_GC - X_GS.p, f);
        const SpatialVec<T> Fe = loadSpatialVec<T>(ws.Fb(c));  // at Bo
        const Vec3<T> fe = Fe.lin, ne = Fe.ang + cross(bodyOrigin(ws, c) - X_GS.p, fe);
        force = force + f - fe;
        moment = moment + n - ne;
      }
      storeVec3(out, R.invTimes(topo.type == kSensorForce ? force : moment));
      break;
    }
    default: break;
  }
}

// The sensors' values of one stage at the world's state.
template <class T>
LOCKSTEP_HD void computeSensors(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                SensorStage stage) {
  const Sizes& s = model.sizes;
  for (int i = 0; i < s.nSensors; ++i) {
    const SensorTopology topo = model.sensor[i];
    if (topo.type == kSensorUnsupported ||
        sensorNeedsAccelerations(topo.type) != (stage == SensorStage::Accelerations))
      continue;
    const Strided<T> out = w.sensors + topo.offset;
    computeSensor(model, w, ws, i, topo, out);
    applyCutoff<T>(topo.type, sensorCutoffAt(w.params, i)[0], out);
  }
}

}  // namespace lockstep
