// Random multibody trees mixing every mobilizer type, with random states, for the dynamics tests.
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include "lockstep/engine/model.h"
#include "test_util.h"

namespace lockstep::test {

struct RandomCase {
  std::shared_ptr<const Model> model;
  std::vector<double> q, u, tau;
};

// A tree of nBodies bodies, each on a random mobilizer to a random earlier body or Ground, with
// random frames, mass properties, joint damping and gravity; q (unit quaternions, Gimbal and
// bushing-like middle angles away from +/-90 degrees), u and tau random.
inline RandomCase randomTree(Random& rnd, int nBodies, bool withDamping = true) {
  ModelBuilder mb;
  mb.setGravity(rnd.vec3(10.0));
  for (int i = 0; i < nBodies; ++i) {
    BodyDesc b;
    b.name = "b" + std::to_string(i);
    const int parent = rnd.integer(-1, i - 1);
    b.parent = parent < 0 ? "ground" : "b" + std::to_string(parent);
    // Weld only off Ground-attached bodies, so every tree has some motion.
    b.mobilizer = static_cast<MobilizerType>(rnd.integer(i == 0 ? 1 : 0, kMobilizerTypeCount - 1));
    b.X_PF = rnd.transform(0.5);
    b.X_BM = rnd.transform(0.5);
    b.mass.mass = rnd.uniform(0.5, 3.0);
    b.mass.com = rnd.vec3(0.3);
    b.mass.inertia = rnd.centralInertia(b.mass.mass);
    const int nu = mobilizerNu(b.mobilizer);
    if (withDamping)
      for (int k = 0; k < nu; ++k) b.damping.push_back(rnd.uniform(0.0, 0.5));
    mb.addBody(b);
  }
  RandomCase c;
  c.model = mb.build();
  const Model& m = *c.model;
  c.q.resize(m.nq());
  c.u.resize(m.nu());
  c.tau.resize(m.nu());
  for (const Body& b : m.bodies()) {
    double* q = &c.q[b.qOffset];
    if (mobilizerQuaternionIndex(b.mobilizer) == 0) {
      double quat[4];
      rnd.rotation().toQuaternion(quat);
      for (int k = 0; k < 4; ++k) q[k] = quat[k];
      for (int k = 4; k < b.nq; ++k) q[k] = rnd.uniform();
    } else {
      for (int k = 0; k < b.nq; ++k) q[k] = rnd.uniform(-1.2, 1.2);
    }
  }
  for (double& x : c.u) x = rnd.uniform(-2, 2);
  for (double& x : c.tau) x = rnd.uniform(-1, 1);
  return c;
}

// Random trees plus random bushings and spring-dampers between random bodies (or Ground).
inline RandomCase randomTreeWithElements(Random& rnd, int nBodies, int nBushings, int nSprings) {
  RandomCase base = randomTree(rnd, nBodies);
  ModelBuilder mb = ModelBuilder::fromModel(*base.model);
  auto pickPair = [&](std::string& a, std::string& b) {
    const int i = rnd.integer(-1, nBodies - 1);
    int j = rnd.integer(0, nBodies - 1);
    if (j == i) j = (j + 1) % nBodies;
    a = i < 0 ? "ground" : base.model->body(i).name;
    b = base.model->body(j).name;
  };
  for (int k = 0; k < nBushings; ++k) {
    LinearBushingDesc d;
    pickPair(d.body1, d.body2);
    d.X_B1F = rnd.transform(0.3);
    d.X_B2M = rnd.transform(0.3);
    for (int i = 0; i < 6; ++i) {
      d.stiffness[i] = rnd.uniform(0, 20);
      d.damping[i] = rnd.uniform(0, 2);
    }
    mb.add(d);
  }
  for (int k = 0; k < nSprings; ++k) {
    SpringDamperDesc d;
    pickPair(d.bodyA, d.bodyB);
    d.p_AP = rnd.vec3(0.5);
    d.p_BQ = rnd.vec3(0.5);
    d.freeLength = rnd.uniform(0.1, 1.0);
    d.stiffness = rnd.uniform(0, 50);
    d.damping = rnd.uniform(0, 3);
    mb.add(d);
  }
  base.model = mb.build();
  return base;
}

// Joint stops and PD actuators on random coordinates (whose qdot is u) of a case's model: bounds
// placed about the case's q so that some stops are penetrated from above, some from below and
// some not at all; actuators of every mode with random gains; random targets [nu].
struct ActuatedCase : RandomCase {
  std::vector<double> targetPosition, targetVelocity;
};
inline ActuatedCase withStopsAndActuators(Random& rnd, const RandomCase& base, bool stops, bool actuators) {
  ActuatedCase c;
  static_cast<RandomCase&>(c) = base;
  ModelBuilder mb = ModelBuilder::fromModel(*base.model);
  const Model& m = *base.model;
  for (const Body& b : m.bodies()) {
    if (!mobilizerQdotIsU(b.mobilizer)) continue;
    for (int k = 0; k < b.nq; ++k) {
      const double q = base.q[b.qOffset + k];
      if (stops && rnd.uniform(0, 1) < 0.8) {
        JointStopDesc d;
        d.coordinate = m.qNames()[b.qOffset + k];
        d.lower = q + rnd.uniform(-0.6, 0.3);
        d.upper = rnd.uniform(0, 1) < 0.2 ? std::numeric_limits<double>::infinity() : d.lower + rnd.uniform(0.0, 0.6);
        if (rnd.uniform(0, 1) < 0.1) d.lower = -std::numeric_limits<double>::infinity();
        d.stiffness = rnd.uniform(0, 100);
        d.dissipation = rnd.uniform(0, 2);
        mb.add(d);
      }
      if (actuators && rnd.uniform(0, 1) < 0.8) {
        ActuatorDesc d;
        d.coordinate = m.qNames()[b.qOffset + k];
        d.mode = static_cast<ActuatorMode>(rnd.integer(0, 2));
        d.kp = rnd.uniform(0, 50);
        d.kd = rnd.uniform(0, 5);
        mb.add(d);
      }
    }
  }
  c.model = mb.build();
  c.targetPosition.resize(m.nu());
  c.targetVelocity.resize(m.nu());
  for (double& x : c.targetPosition) x = rnd.uniform(-1.5, 1.5);
  for (double& x : c.targetVelocity) x = rnd.uniform(-2, 2);
  return c;
}

}  // namespace lockstep::test
