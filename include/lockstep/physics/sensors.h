// Stage 5, observations: MuJoCo's sensors (MJCF <sensor>) of one world, as MuJoCo's mj_sensorPos,
// mj_sensorVel and mj_sensorAcc compute them, into the per-world field `sensors` (Model::
// sensorDataNames() order, MuJoCo's sensordata for the sensors Lockstep computes):
//   jointpos, jointvel            the coordinate and its speed (1 value)
//   framepos, framequat           the frame S's origin and orientation (w x y z) in Ground (3, 4)
//   framelinvel, frameangvel      the velocity of S's origin and S's angular velocity, in Ground (3, 3)
//   velocimeter, gyro             the same, in S (3, 3)
//   accelerometer                 the acceleration of S's origin minus gravity, in S (3)
//   touch                         the normal contact forces on S's body whose ray, from the contact
//                                 point along the normal away from the body, meets S's zone (a sphere,
//                                 capsule, ellipsoid, cylinder or box; always where the point lies in
//                                 it), as MuJoCo's: the ground contacts, or under MuJoCo's law the soft
//                                 contact points of the last solve (1)
//   force, torque                 what the parent exerts on the subtree of S's body: the force and its
//                                 moment about S's origin, in S (3, 3)
//   subtreecom, subtreelinvel     the centre of mass of the subtree of S's body and its velocity, in
//                                 Ground (3, 3); Ground's subtree: every body
// S is fixed on a body (Ground for -1) at X_BS (the per-world parameter sensorFrame, which also
// holds a touch zone's size). A sensor's cutoff (the per-world parameter sensorCutoff) > 0 clamps
// its values as MuJoCo's apply_cutoff does, by MuJoCo's data type: a real value to [-cutoff,
// cutoff], touch (a positive value) to at most cutoff, a quaternion (framequat) not at all. The
// positions and velocities are computed with every observation, the accelerations (accelerometer,
// force, torque; touch under MuJoCo's law, whose forces come from the solve) with every evaluation,
// from its udot and forces: after a step they are those of the last evaluate(), as the Batch
// documents.
#pragma once

#include "lockstep/physics/forces.h"

namespace lockstep {

LOCKSTEP_HD_INLINE bool sensorNeedsAccelerations(std::int32_t type, const Sizes& s) {
  return type == kSensorAccelerometer || type == kSensorForce || type == kSensorTorque ||
         (type == kSensorTouch && hasSoftContacts(s));
}

// Whether body c is in the subtree of body s (Ground's subtree holds every body).
template <class T>
LOCKSTEP_HD_INLINE bool inSubtree(const ModelView<T>& model, int c, int s) {
  int a = c;
  while (a >= 0 && a != s) a = model.body[a].parent;
  return a == s;
}

// The parameters t of a ray p + t d that lie in a convex set: the interval [lo, hi], empty where
// lo > hi; +-kFar stands for no bound.
template <class T>
struct RaySpan {
  T lo, hi;
};
constexpr double kFar = 1e30;
template <class T>
LOCKSTEP_HD_INLINE RaySpan<T> bothSpans(const RaySpan<T>& a, const RaySpan<T>& b) {
  return {selectT(a.lo < b.lo, b.lo, a.lo), selectT(a.hi < b.hi, a.hi, b.hi)};
}
// Where |p + t d| <= h for one coordinate (a box's slab, a cylinder's height).
template <class T>
LOCKSTEP_HD_INLINE RaySpan<T> slabSpan(const T& p, const T& d, const T& h) {
  const MaskOf<T> moving = d != T(0), inside = absT(p) <= h;
  const T inverse = T(1) / selectT(moving, d, T(1));
  const T a = (-h - p) * inverse, b = (h - p) * inverse;
  return {selectT(moving, selectT(a < b, a, b), selectT(inside, T(-kFar), T(kFar))),
          selectT(moving, selectT(a < b, b, a), selectT(inside, T(kFar), T(-kFar)))};
}
// Where a t^2 + 2 b t + c <= 0 with a >= 0 (a ball, an ellipsoid, a cylinder's round side).
template <class T>
LOCKSTEP_HD_INLINE RaySpan<T> quadricSpan(const T& a, const T& b, const T& c) {
  const MaskOf<T> moving = a > T(0), inside = c <= T(0);
  const T discriminant = b * b - a * c;
  const MaskOf<T> meets = discriminant >= T(0);
  const T root = sqrtT(selectT(meets, discriminant, T(0))), inverse = T(1) / selectT(moving, a, T(1));
  return {selectT(moving, selectT(meets, (-b - root) * inverse, T(kFar)), selectT(inside, T(-kFar), T(kFar))),
          selectT(moving, selectT(meets, (-b + root) * inverse, T(-kFar)), selectT(inside, T(kFar), T(-kFar)))};
}

// Whether a span holds some t >= 0: the ray meets the set ahead of its start (or starts in it).
template <class T>
LOCKSTEP_HD_INLINE MaskOf<T> spanAhead(const RaySpan<T>& span) {
  return (span.lo <= span.hi) & (span.hi >= T(0));
}
// Where the ray is within r of the point c (a sphere).
template <class T>
LOCKSTEP_HD_INLINE RaySpan<T> ballSpan(const Vec3<T>& p, const Vec3<T>& d, const Vec3<T>& c, const T& r) {
  const Vec3<T> q = p - c;
  return quadricSpan(dot(d, d), dot(q, d), dot(q, q) - r * r);
}
// Where the ray is in the cylinder of radius r and half-length h about z.
template <class T>
LOCKSTEP_HD_INLINE RaySpan<T> cylinderSpan(const Vec3<T>& p, const Vec3<T>& d, const T& r, const T& h) {
  return bothSpans(quadricSpan(d[0] * d[0] + d[1] * d[1], p[0] * d[0] + p[1] * d[1], p[0] * p[0] + p[1] * p[1] - r * r),
                   slabSpan(p[2], d[2], h));
}

// Whether the ray p + t d, t >= 0 (in the zone's frame) meets a zone of the given sizes (a sphere's
// radius; a capsule's or cylinder's radius and half-length along z; an ellipsoid's radii; a box's
// half-sizes), as MuJoCo's touch sensor asks of each contact (mju_rayGeom); always where p lies in
// the zone. Lane by lane.
template <class T>
LOCKSTEP_HD_INLINE MaskOf<T> rayMeetsZone(std::int32_t zone, const Vec3<T>& s, const Vec3<T>& p, const Vec3<T>& d) {
  switch (zone) {
    case kZoneSphere: return spanAhead(ballSpan(p, d, Vec3<T>::zero(), s[0]));
    case kZoneCapsule: {
      const Vec3<T> end = makeVec3(T(0), T(0), s[1]);
      return spanAhead(cylinderSpan(p, d, s[0], s[1])) | spanAhead(ballSpan(p, d, end, s[0])) |
             spanAhead(ballSpan(p, d, -end, s[0]));
    }
    case kZoneEllipsoid: {
      const Vec3<T> q = makeVec3(p[0] / s[0], p[1] / s[1], p[2] / s[2]);
      const Vec3<T> e = makeVec3(d[0] / s[0], d[1] / s[1], d[2] / s[2]);
      return spanAhead(quadricSpan(dot(e, e), dot(q, e), dot(q, q) - T(1)));
    }
    case kZoneCylinder: return spanAhead(cylinderSpan(p, d, s[0], s[1]));
    default:
      return spanAhead(bothSpans(bothSpans(slabSpan(p[0], d[0], s[0]), slabSpan(p[1], d[1], s[1])),
                                 slabSpan(p[2], d[2], s[2])));
  }
}

// What one contact adds to a touch sensor S (zone `zone` of sizes `size`, at X_GS): its normal force,
// where the ray from its point along `away` (the normal, away from S's body) meets the zone.
template <class T>
LOCKSTEP_HD_INLINE T touchOfContact(std::int32_t zone, const Vec3<T>& size, const Transform<T>& X_GS,
                                    const Vec3<T>& point, const Vec3<T>& away, const T& normalForce) {
  const MaskOf<T> meets = rayMeetsZone<T>(zone, size, X_GS.R.invTimes(point - X_GS.p), X_GS.R.invTimes(away));
  return selectT(meets & (normalForce > T(0)), normalForce, T(0));
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
      // A contact's normal force counts where its ray, from the point along the normal away from S's
      // body (into the ground), meets S's zone.
      const Vec3<T> size = loadVec3<T>(frame + 12);
      T sum = T(0);
      for (int g = 0; g < s.nGround; ++g) {
        if (model.ground[g].bodyA != b) continue;
        const GroundContactQuantities<T> c = evaluateGroundContactOfWorld(model, w.params, ws, g);
        sum += touchOfContact(topo.zone, size, X_GS, c.p_GP, -groundContactParamsOf(w.params, g).normal, c.normalForce);
      }
      for (int i = 0; i < s.nPlaneContacts; ++i) {  // MuJoCo's law: the solve's points
        const PlaneContactTopology contact = model.planeContact[i];
        if (contact.body != b) continue;
        for (int k = 0; k < contact.points; ++k) {
          const Strided<const T> point = softContactAt(w, contact.point + k);  // active dist pos normal force
          sum += touchOfContact(topo.zone, size, X_GS, loadVec3<T>(point + 2), -loadVec3<T>(point + 5), T(point[8]));
        }
      }
      for (int i = 0; i < s.nPairContacts; ++i) {  // the ray away from S's body: along the normal on body1
        const PairContactTopology contact = model.pairContact[i];
        if (contact.body1 != b && contact.body2 != b) continue;
        const T away = contact.body1 == b ? T(1) : T(-1);
        for (int k = 0; k < contact.points; ++k) {
          const Strided<const T> point = softContactAt(w, contact.point + k);
          sum += touchOfContact(topo.zone, size, X_GS, loadVec3<T>(point + 2), away * loadVec3<T>(point + 5), T(point[8]));
        }
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
      if (b < 0) {  // Ground's subtree also holds an MJCF file's static bodies: mass that does not move
        for (int i = 0; i < s.nMujocoBodies; ++i) {
          const MujocoBodyTopology still = model.mujocoBodyTree[i];
          if (still.body >= 0) continue;
          const Strided<const T> m = mujocoBodyMassAt(w.params, i);  // m, centre of mass in L, inertia
          if (topo.type == kSensorSubtreeCom)
            sum = sum + T(m[0]) * (loadTransform<T>(mujocoBodyFrameAt(w.params, i)) * loadVec3<T>(m + 1));
          mass += m[0];
        }
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
        SpatialVec<T> Fe = loadSpatialVec<T>(ws.Fb(c));  // at Bo
        if (hasSoftContacts(s)) Fe += loadSpatialVec<T>(Strided<const T>(bodyContactAt(w, c)));  // the solve's
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
        sensorNeedsAccelerations(topo.type, s) != (stage == SensorStage::Accelerations))
      continue;
    const Strided<T> out = w.sensors + topo.offset;
    computeSensor(model, w, ws, i, topo, out);
    applyCutoff<T>(topo.type, sensorCutoffAt(w.params, i)[0], out);
  }
}

}  // namespace lockstep
