// Stage 5, observations: MuJoCo's view of one world of a model imported from MJCF, as MuJoCo's
// mj_kinematics, mj_comPos and mj_comVel lay it out, into per-world fields that learning code reads
// as MuJoCo's mjData (Gymnasium's observations):
//   mujocoQpos, mujocoQvel   MuJoCo's qpos [nq] and qvel [nv]: hinges and slides as Lockstep's q and u;
//                            a free joint's qpos is (position, quaternion) and its qvel (linear
//                            velocity in Ground, angular velocity in the body); a ball joint's qvel
//                            is in the child frame (Lockstep's u is in F: qvel = R^T u)
//   mujocoBody, per MuJoCo body L (carried by the Lockstep body B at X_BL; the world body and bodies
//   welded to it by Ground):
//     xpos, xmat             L's origin and orientation in Ground (xmat row-major)
//     xipos                  L's centre of mass in Ground
//     subtree_com            the centre of mass of L's subtree
//     cinert                 L's inertia about c, the subtree_com of L's root (the world body's child
//                            it descends from), in Ground axes: xx yy zz xy xz yz, m (xipos - c), m
//     cvel                   L's velocity [w; v of L's point at c], in Ground
//     cfrc_ext               the contacts' force on L [moment about c; force], in Ground: under MuJoCo's
//                            law the last solve's contacts of L's own geoms (MuJoCo's mj_rnePostConstraint;
//                            zero at a state no solve has seen, as after MuJoCo's mj_resetData and
//                            mj_forward); under the compliant law the ground contacts of L's carrier,
//                            on the carrier's own MuJoCo body
// After a step under MuJoCo's law all of these but the joints' are MuJoCo's after mj_step: the last
// evaluation's kinematics (RK4's fourth stage; Euler's start), not the new state's (world.h,
// Observed::kStep).
// The MuJoCo bodies' frames X_BL and mass properties are per-world parameters (mujocoBodyFrame,
// mujocoBodyMass: randomizable as any other); their joints and tree are the model's (MujocoJointMap,
// MujocoBodyTopology).
#pragma once

#include "lockstep/physics/forces.h"

namespace lockstep {

// Offsets of the parts of one MuJoCo body's values in the field mujocoBody.
namespace mujoco_body {
constexpr int kXpos = 0, kXmat = 3, kXipos = 12, kSubtreeCom = 15, kCinert = 18, kCvel = 28, kCfrcExt = 34;
}  // namespace mujoco_body

// MuJoCo's qpos and qvel of the world's q, u.
template <class T>
LOCKSTEP_HD void computeMujocoState(const ModelView<T>& model, const WorldView<T>& w) {
  for (int j = 0; j < model.sizes.nMujocoJoints; ++j) {
    const MujocoJointMap m = model.mujocoJoint[j];
    const Strided<T> qpos = w.mujocoQpos + m.qposAdr, qvel = w.mujocoQvel + m.dofAdr;
    switch (m.type) {
      case kMujocoFree: {
        const Rotation<T> R = Rotation<T>::fromQuaternion(T(w.q[m.qOffset]), T(w.q[m.qOffset + 1]),
                                                          T(w.q[m.qOffset + 2]), T(w.q[m.qOffset + 3]));
        for (int k = 0; k < 3; ++k) qpos[k] = w.q[m.qOffset + 4 + k];
        for (int k = 0; k < 4; ++k) qpos[3 + k] = w.q[m.qOffset + k];
        for (int k = 0; k < 3; ++k) qvel[k] = w.u[m.uOffset + 3 + k];
        storeVec3(qvel + 3, R.invTimes(loadVec3<T>(Strided<const T>(w.u) + m.uOffset)));
        break;
      }
      case kMujocoBall: {
        const Rotation<T> R = Rotation<T>::fromQuaternion(T(w.q[m.qOffset]), T(w.q[m.qOffset + 1]),
                                                          T(w.q[m.qOffset + 2]), T(w.q[m.qOffset + 3]));
        for (int k = 0; k < 4; ++k) qpos[k] = w.q[m.qOffset + k];
        storeVec3(qvel, R.invTimes(loadVec3<T>(Strided<const T>(w.u) + m.uOffset)));
        break;
      }
      default:
        qpos[0] = w.q[m.qOffset];
        qvel[0] = w.u[m.uOffset];
    }
  }
}

// MuJoCo's per-body quantities from the kinematics in the workspace, and the contacts' forces: the
// observation's ground contacts (bodyContact), or under MuJoCo's law, where `solved`, the solve's
// that computed that workspace (ws.mujocoContact).
template <class T>
LOCKSTEP_HD void computeMujocoBodies(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                     bool solved) {
  using namespace mujoco_body;
  const int n = model.sizes.nMujocoBodies;
  // Frames and centres of mass; each body's subtree sums (mass, mass-weighted centre) in subtree_com,
  // children before parents (MuJoCo numbers parents first), then divided.
  for (int i = 0; i < n; ++i) {
    const MujocoBodyTopology topo = model.mujocoBodyTree[i];
    const Strided<T> out = mujocoBodyAt(w, i);
    const Strided<const T> mass = mujocoBodyMassAt(w.params, i);  // m, centre of mass in L, inertia
    const Transform<T> X_GL = bodyPose(ws, topo.body) * loadTransform<T>(mujocoBodyFrameAt(w.params, i));
    const Vec3<T> xipos = X_GL * loadVec3<T>(mass + 1);
    storeVec3(out + kXpos, X_GL.p);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) out[kXmat + 3 * r + c] = X_GL.R(r, c);
    storeVec3(out + kXipos, xipos);
    storeVec3(out + kSubtreeCom, T(mass[0]) * xipos);
    out[kCinert + 9] = mass[0];  // the subtree's mass, for now
  }
  for (int i = n - 1; i > 0; --i) {
    const int p = model.mujocoBodyTree[i].parent;
    if (p < 0) continue;
    const Strided<T> child = mujocoBodyAt(w, i), parent = mujocoBodyAt(w, p);
    for (int k = 0; k < 3; ++k) parent[kSubtreeCom + k] = parent[kSubtreeCom + k] + child[kSubtreeCom + k];
    parent[kCinert + 9] = parent[kCinert + 9] + child[kCinert + 9];
  }
  for (int i = 0; i < n; ++i) {
    const Strided<T> out = mujocoBodyAt(w, i);
    const T m = out[kCinert + 9];
    const MaskOf<T> massive = m > T(0);
    const T inverse = T(1) / selectT(massive, m, T(1));
    // A massless subtree's centre is its body's origin, as MuJoCo's.
    for (int k = 0; k < 3; ++k)
      out[kSubtreeCom + k] = selectT(massive, inverse * T(out[kSubtreeCom + k]), T(out[kXpos + k]));
  }
  // Inertia, velocity and contact force about c = subtree_com of the root.
  for (int i = 0; i < n; ++i) {
    const MujocoBodyTopology topo = model.mujocoBodyTree[i];
    const Strided<T> out = mujocoBodyAt(w, i);
    const Strided<const T> mass = mujocoBodyMassAt(w.params, i);
    const Vec3<T> c = loadVec3<T>(Strided<const T>(mujocoBodyAt(w, topo.root)) + kSubtreeCom);
    const Rotation<T> R{Mat33<T>{{{out[kXmat], out[kXmat + 1], out[kXmat + 2]},
                                  {out[kXmat + 3], out[kXmat + 4], out[kXmat + 5]},
                                  {out[kXmat + 6], out[kXmat + 7], out[kXmat + 8]}}}};
    const T m = mass[0];
    const Vec3<T> d = loadVec3<T>(Strided<const T>(out) + kXipos) - c;
    const SymMat33<T> I = reexpressSym(R.R, loadSymMat33<T>(mass + 4)) + m * SpatialInertia<T>::pointInertia(d);
    out[kCinert + 0] = I.xx;
    out[kCinert + 1] = I.yy;
    out[kCinert + 2] = I.zz;
    out[kCinert + 3] = I.xy;
    out[kCinert + 4] = I.xz;
    out[kCinert + 5] = I.yz;
    storeVec3(out + kCinert + 6, m * d);
    out[kCinert + 9] = m;
    const SpatialVec<T> V = bodyVelocity(ws, topo.body);
    const Vec3<T> p = topo.body < 0 ? c : bodyOrigin(ws, topo.body);
    storeVec3(out + kCvel, V.ang);
    storeVec3(out + kCvel + 3, V.lin + cross(V.ang, c - p));
    SpatialVec<T> F = SpatialVec<T>::zero();
    if (hasSoftContacts(model.sizes)) {
      if (solved) {
        const SpatialVec<T> Fo = loadSpatialVec<T>(Strided<const T>(ws.mujocoContact(i)));  // about Ground's origin
        F = {Fo.ang - cross(c, Fo.lin), Fo.lin};
      }
    } else if (topo.contacts && topo.body >= 0 && model.sizes.nGround > 0) {
      const SpatialVec<T> Fb = loadSpatialVec<T>(Strided<const T>(bodyContactAt(w, topo.body)));  // about Bo
      F = {Fb.ang + cross(p - c, Fb.lin), Fb.lin};
    }
    storeSpatialVec(out + kCfrcExt, F);
  }
}

}  // namespace lockstep
