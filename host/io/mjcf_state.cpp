// MuJoCo's state in Lockstep's coordinates and back (io/mjcf.h), on the host: the joint map of a
// model's MuJoCo joints (Model::mujocoJoints), joint by joint. (The per-world code gives every world's
// qpos and qvel on the backend: physics/mujoco_bodies.h.) Free joints: MuJoCo's qpos is position then quaternion, its qvel the linear
// velocity in Ground then the angular velocity in the body; Lockstep's q is quaternion then
// position, its u the angular velocity in Ground then the linear velocity. Ball joints: MuJoCo's
// qvel is in the child frame, Lockstep's u in F (R(q) qvel). Hinges and slides map one to one.
#include <mujoco/mujoco.h>

#include <cmath>

#include "lockstep/engine/fields.h"
#include "lockstep/io/mjcf.h"

namespace lockstep {

namespace {

// A quaternion of any length > 0 as the unit one (MuJoCo normalizes qpos's quaternions as it uses them).
void putUnitQuaternion(const double* from, double* to) {
  const double n = std::sqrt(from[0] * from[0] + from[1] * from[1] + from[2] * from[2] + from[3] * from[3]);
  for (int k = 0; k < 4; ++k) to[k] = from[k] / n;
}

Rotationd rotationOfQ(const double* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  return Rotationd::fromQuaternion(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
}

}  // namespace

std::vector<double> qFromMujoco(const Model& model, const double* qpos) {
  std::vector<double> q(model.nq());
  for (const MujocoJoint& e : model.mujocoJoints()) {
    const MujocoJointMap j = elementTopology(model, e);
    const double* p = qpos + j.qposAdr;
    switch (j.type) {
      case mjJNT_FREE:
        putUnitQuaternion(p + 3, &q[j.qOffset]);
        for (int k = 0; k < 3; ++k) q[j.qOffset + 4 + k] = p[k];
        break;
      case mjJNT_BALL: putUnitQuaternion(p, &q[j.qOffset]); break;
      default: q[j.qOffset] = p[0];
    }
  }
  return q;
}

std::vector<double> uFromMujoco(const Model& model, const double* qpos, const double* qvel) {
  std::vector<double> u(model.nu());
  for (const MujocoJoint& e : model.mujocoJoints()) {
    const MujocoJointMap j = elementTopology(model, e);
    const double* v = qvel + j.dofAdr;
    switch (j.type) {
      case mjJNT_FREE: {
        const Vec3d w = rotationOfQ(qpos + j.qposAdr + 3) * Vec3d{{v[3], v[4], v[5]}};
        for (int k = 0; k < 3; ++k) {
          u[j.uOffset + k] = w[k];
          u[j.uOffset + 3 + k] = v[k];
        }
        break;
      }
      case mjJNT_BALL: {
        const Vec3d w = rotationOfQ(qpos + j.qposAdr) * Vec3d{{v[0], v[1], v[2]}};
        for (int k = 0; k < 3; ++k) u[j.uOffset + k] = w[k];
        break;
      }
      default: u[j.uOffset] = v[0];
    }
  }
  return u;
}

std::vector<double> qToMujoco(const Model& model, const std::vector<double>& q) {
  std::vector<double> qpos(static_cast<std::size_t>(sizesOf(model).nMujocoQpos));
  for (const MujocoJoint& e : model.mujocoJoints()) {
    const MujocoJointMap j = elementTopology(model, e);
    double* p = qpos.data() + j.qposAdr;
    switch (j.type) {
      case mjJNT_FREE:
        for (int k = 0; k < 4; ++k) p[3 + k] = q[j.qOffset + k];
        for (int k = 0; k < 3; ++k) p[k] = q[j.qOffset + 4 + k];
        break;
      case mjJNT_BALL:
        for (int k = 0; k < 4; ++k) p[k] = q[j.qOffset + k];
        break;
      default: p[0] = q[j.qOffset];
    }
  }
  return qpos;
}

std::vector<double> uToMujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& u) {
  std::vector<double> qvel(static_cast<std::size_t>(sizesOf(model).nMujocoDof));
  for (const MujocoJoint& e : model.mujocoJoints()) {
    const MujocoJointMap j = elementTopology(model, e);
    double* v = qvel.data() + j.dofAdr;
    switch (j.type) {
      case mjJNT_FREE: {
        const Vec3d w = rotationOfQ(q.data() + j.qOffset).invTimes({{u[j.uOffset], u[j.uOffset + 1], u[j.uOffset + 2]}});
        for (int k = 0; k < 3; ++k) {
          v[k] = u[j.uOffset + 3 + k];
          v[3 + k] = w[k];
        }
        break;
      }
      case mjJNT_BALL: {
        const Vec3d w = rotationOfQ(q.data() + j.qOffset).invTimes({{u[j.uOffset], u[j.uOffset + 1], u[j.uOffset + 2]}});
        for (int k = 0; k < 3; ++k) v[k] = w[k];
        break;
      }
      default: v[0] = u[j.uOffset];
    }
  }
  return qvel;
}

std::vector<double> qFromMujoco(const MjcfImport& m, const double* qpos) { return qFromMujoco(*m.model, qpos); }
std::vector<double> uFromMujoco(const MjcfImport& m, const double* qpos, const double* qvel) {
  return uFromMujoco(*m.model, qpos, qvel);
}
std::vector<double> qToMujoco(const MjcfImport& m, const std::vector<double>& q) { return qToMujoco(*m.model, q); }
std::vector<double> uToMujoco(const MjcfImport& m, const std::vector<double>& q, const std::vector<double>& u) {
  return uToMujoco(*m.model, q, u);
}

}  // namespace lockstep
