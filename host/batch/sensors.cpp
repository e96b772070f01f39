#include "lockstep/engine/sensors.h"

#include <algorithm>
#include <cmath>

namespace lockstep {

namespace {

Vec3d linear(const SpatialVecd& v) { return {{v[3], v[4], v[5]}}; }
Vec3d angular(const SpatialVecd& v) { return {{v[0], v[1], v[2]}}; }

// Whether point p (in the zone's frame) lies in the zone, as MuJoCo's touch sensor asks.
bool insideZone(const std::string& zone, const Vec3d& s, const Vec3d& p) {
  if (zone == "sphere") return dot(p, p) <= s[0] * s[0];
  if (zone == "capsule") {
    const double z = std::clamp(p[2], -s[1], s[1]);
    return p[0] * p[0] + p[1] * p[1] + (p[2] - z) * (p[2] - z) <= s[0] * s[0];
  }
  if (zone == "ellipsoid") {
    double sum = 0;
    for (int k = 0; k < 3; ++k) sum += (p[k] / s[k]) * (p[k] / s[k]);
    return sum <= 1;
  }
  if (zone == "cylinder") return p[0] * p[0] + p[1] * p[1] <= s[0] * s[0] && std::abs(p[2]) <= s[1];
  return std::abs(p[0]) <= s[0] && std::abs(p[1]) <= s[1] && std::abs(p[2]) <= s[2];  // box
}

}  // namespace

template <class T>
std::vector<double> sensorData(const Batch<T>& batch, std::int64_t w) {
  const Model& model = batch.model();
  std::vector<double> out(model.sensorDataSize());
  if (out.empty()) return out;
  const int nb = model.numBodies();
  std::vector<Transformd> X(nb);
  std::vector<SpatialVecd> V(nb), A, F;
  for (int b = 0; b < nb; ++b) {
    X[b] = batch.bodyPose(w, b);
    V[b] = batch.bodyVelocity(w, b);
  }
  const std::vector<double> q = batch.q(w), u = batch.u(w);
  const Vec3d g = batch.gravity(w);
  auto frame = [&](const Sensor& s) {  // the sensor's frame in Ground
    return s.body < 0 ? s.desc.X_BS : X[s.body] * s.desc.X_BS;
  };
  // The frame's velocity: [w; v of its origin], in G.
  auto velocity = [&](const Sensor& s, const Transformd& X_GS) -> std::pair<Vec3d, Vec3d> {
    if (s.body < 0) return {Vec3d::zero(), Vec3d::zero()};
    const Vec3d om = angular(V[s.body]);
    return {om, linear(V[s.body]) + cross(om, X_GS.p - X[s.body].p)};
  };
  auto needAccelerations = [&] {
    if (!A.empty()) return;
    A = batch.bodyAccelerations(w);
    F = batch.appliedBodyForces(w);  // user forces, gravity, force elements and ground contacts, at Bo
  };
  for (const Sensor& s : model.sensors()) {
    if (s.desc.dimension == 0) continue;
    double* o = out.data() + s.offset;
    const std::string& type = s.desc.type;
    if (type == "jointpos") {
      o[0] = q[s.coordinate];
      continue;
    }
    if (type == "jointvel") {
      o[0] = u[s.speed];
      continue;
    }
    const Transformd X_GS = frame(s);
    const Rotationd& R = X_GS.R;
    auto put = [&](const Vec3d& v) {
      for (int k = 0; k < 3; ++k) o[k] = v[k];
    };
    const auto [om, v] = velocity(s, X_GS);
    if (type == "framepos") {
      put(X_GS.p);
    } else if (type == "framequat") {
      double quaternion[4];
      R.toQuaternion(quaternion);
      for (int k = 0; k < 4; ++k) o[k] = quaternion[k];
    } else if (type == "framelinvel") {
      put(v);
    } else if (type == "frameangvel") {
      put(om);
    } else if (type == "velocimeter") {
      put(R.invTimes(v));
    } else if (type == "gyro") {
      put(R.invTimes(om));
    } else if (type == "accelerometer") {
      Vec3d a = -1.0 * g;  // at rest an accelerometer reads -g (up, for gravity down)
      if (s.body >= 0) {
        needAccelerations();
        const Vec3d r = X_GS.p - X[s.body].p, alpha = angular(A[s.body]), w0 = angular(V[s.body]);
        a = a + linear(A[s.body]) + cross(alpha, r) + cross(w0, cross(w0, r));
      }
      put(R.invTimes(a));
    } else if (type == "touch") {
      double sum = 0;
      for (int i = 0; i < static_cast<int>(model.groundContacts().size()); ++i) {
        if (model.groundContacts()[i].body != s.body) continue;
        const auto c = batch.groundContact(w, i);
        const Vec3d p = R.invTimes(Vec3d{{double(c.p_GP[0]), double(c.p_GP[1]), double(c.p_GP[2])}} - X_GS.p);
        if (insideZone(s.desc.zone, s.desc.zoneSize, p)) sum += std::max(0.0, double(c.normalForce));
      }
      o[0] = sum;
    } else if (type == "subtreecom" || type == "subtreelinvel") {
      // The subtree's centre of mass and its velocity, in G (Ground's subtree: every body).
      double mass = 0;
      Vec3d sum = Vec3d::zero();
      for (int c = 0; c < nb; ++c) {
        int a = c;
        while (a >= 0 && a != s.body) a = model.body(a).parent;
        if (a != s.body) continue;
        const MassProperties mp = batch.massProperties(w, c);
        const Vec3d r = X[c].R * mp.com;
        sum = sum + mp.mass * (type == "subtreecom" ? X[c].p + r : linear(V[c]) + cross(angular(V[c]), r));
        mass += mp.mass;
      }
      put(mass > 0 ? (1 / mass) * sum : Vec3d::zero());
    } else if (type == "force" || type == "torque") {
      // What the parent exerts on the subtree of the frame's body: the subtree's rate of change
      // of momentum minus every other force on it, about the frame's origin.
      needAccelerations();
      Vec3d force = Vec3d::zero(), moment = Vec3d::zero();
      for (int c = 0; c < nb; ++c) {
        int a = c;
        while (a >= 0 && a != s.body) a = model.body(a).parent;
        if (a != s.body) continue;
        const MassProperties mp = batch.massProperties(w, c);
        const double m = mp.mass;
        const Vec3d r = X[c].R * mp.com;
        const Vec3d wc = angular(V[c]), alpha = angular(A[c]);
        const SymMat33d I = reexpressSym(X[c].R.R, mp.inertia);
        const Vec3d f = m * (linear(A[c]) + cross(alpha, r) + cross(wc, cross(wc, r)));
        const Vec3d n = I * alpha + cross(wc, I * wc) + cross(X[c].p + r - X_GS.p, f);
        const Vec3d fe = linear(F[c]), ne = angular(F[c]) + cross(X[c].p - X_GS.p, fe);
        force = force + f - fe;
        moment = moment + n - ne;
      }
      put(R.invTimes(type == "force" ? force : moment));
    }
  }
  return out;
}

template std::vector<double> sensorData<float>(const Batch<float>&, std::int64_t);
template std::vector<double> sensorData<double>(const Batch<double>&, std::int64_t);

}  // namespace lockstep
