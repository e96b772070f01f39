// The URDF robots against Simbody 3.7 built from the same Model: joint accelerations under gravity
// (and joint damping) at random states, to 1e-10 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "lockstep/batch.h"
#include "lockstep/urdf.h"
#include "simbody_oracle.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

// A random state: angles in [-1.5, 1.5], slider positions in [0, 0.04], free roots at a random
// pose; speeds in [-1, 1] (or 0).
void randomState(const Model& model, Random& rnd, bool moving, std::vector<double>& q, std::vector<double>& u) {
  q = model.defaultQ();
  u.assign(model.nu(), 0.0);
  for (const Body& b : model.bodies()) {
    switch (b.mobilizer) {
      case MobilizerType::Pin: q[b.qOffset] = rnd.uniform(-1.5, 1.5); break;
      case MobilizerType::Slider: q[b.qOffset] = rnd.uniform(0, 0.04); break;
      case MobilizerType::Free: {
        double quat[4];
        rnd.rotation().toQuaternion(quat);
        for (int k = 0; k < 4; ++k) q[b.qOffset + k] = quat[k];
        for (int k = 4; k < 7; ++k) q[b.qOffset + k] = rnd.uniform();
        break;
      }
      default: break;
    }
    for (int k = 0; k < b.nu && moving; ++k) u[b.uOffset + k] = rnd.uniform();
  }
}

TEST(UrdfAgainstSimbody, GravityOnlyAccelerationsAtRandomStates) {
  struct Robot {
    const char* file;
    UrdfRootJoint root;
  };
  Random rnd(610);
  for (const Robot& r : {Robot{"panda.urdf", UrdfRootJoint::Fixed}, Robot{"ur5_robot.urdf", UrdfRootJoint::Fixed},
                         Robot{"solo12.urdf", UrdfRootJoint::Free}, Robot{"double_pendulum.urdf", UrdfRootJoint::Fixed}}) {
    SCOPED_TRACE(r.file);
    UrdfOptions options;
    options.rootJoint = r.root;
    const auto model = importUrdfFile(std::string(LOCKSTEP_SOURCE_DIR) + "/models/" + r.file, options).buildModel();
    SimbodyOracle oracle(*model);
    Batch<double> batch(model, 1);
    for (int trial = 0; trial < 10; ++trial) {
      std::vector<double> q, u;
      randomState(*model, rnd, /*moving=*/trial % 2 == 1, q, u);
      batch.setQ(0, q);
      batch.setU(0, u);
      batch.evaluate();
      ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
      const SimbodyOracle::Result ref = oracle.evaluate(q, u, std::vector<double>(model->nu(), 0.0));
      EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
      EXPECT_NEAR(batch.kineticEnergy(0), ref.kinetic, 1e-10 * std::max(1.0, std::abs(ref.kinetic)));
      EXPECT_NEAR(batch.potentialEnergy(0), ref.potential, 1e-10 * std::max(1.0, std::abs(ref.potential)));
    }
  }
}

// Solo12 on its Free root with joint stops on its 12 joints (placed about the state: the URDF's
// limits, +/-10 rad, are never reached) and PD actuators of every mode, each alone and together, at
// random states: mobility forces and udot to 1e-10 relative against Simbody's MobilityLinearStop,
// MobilityLinearSpring and MobilityLinearDamper.
TEST(UrdfAgainstSimbody, Solo12WithJointStopsAndPdActuators) {
  UrdfOptions options;
  options.rootJoint = UrdfRootJoint::Free;
  const UrdfImport urdf = importUrdfFile(std::string(LOCKSTEP_SOURCE_DIR) + "/models/solo12.urdf", options);
  const auto plain = urdf.buildModel();
  Random rnd(611);
  double worst[3] = {0, 0, 0};
  int penetrated = 0;
  for (int trial = 0; trial < 15; ++trial) {
    const int which = trial % 3;  // 0 stops, 1 actuators, 2 both
    std::vector<double> q, u;
    randomState(*plain, rnd, /*moving=*/true, q, u);
    ModelBuilder mb = ModelBuilder::fromModel(*plain);
    std::vector<double> tp(plain->nu(), 0.0), tv(plain->nu(), 0.0), tau(plain->nu(), 0.0);
    for (const Body& b : plain->bodies()) {
      if (b.mobilizer != MobilizerType::Pin) continue;
      const std::string& name = plain->qNames()[b.qOffset];
      if (which != 1) {
        JointStopDesc stop{name, q[b.qOffset] + rnd.uniform(-0.5, 0.2), 0, rnd.uniform(1, 200), rnd.uniform(0, 3)};
        stop.upper = stop.lower + rnd.uniform(0, 0.5);
        mb.addJointStop(stop);
        penetrated += q[b.qOffset] < stop.lower || q[b.qOffset] > stop.upper;
      }
      if (which != 0) {
        mb.addActuator({name, static_cast<ActuatorMode>(rnd.integer(0, 2)), rnd.uniform(0, 30), rnd.uniform(0, 2)});
        tp[b.uOffset] = rnd.uniform(-1.5, 1.5);
        tv[b.uOffset] = rnd.uniform(-2, 2);
      }
      tau[b.uOffset] = rnd.uniform(-1, 1);
    }
    const auto model = mb.build();
    Batch<double> batch(model, 1);
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.setTau(0, tau);
    batch.setTargets(0, tp, tv);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*model);
    const SimbodyOracle::Result ref = oracle.evaluate(q, u, tau, tp, tv);
    const std::vector<double> f = batch.appliedMobilityForces(0);
    EXPECT_TRUE(near(vec(f), vec(ref.mobilityForces), 1e-10)) << "trial " << trial;
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    // Simbody counts its MobilityLinearSprings' kp (q - target)^2 / 2 as potential energy; Lockstep
    // counts the PD's work as the actuators' (the "actuation" z) instead.
    double springEnergy = 0;
    for (const Actuator& a : (*model).actuators())
      if (a.desc.mode == ActuatorMode::Position) springEnergy += 0.5 * a.desc.kp * std::pow(q[a.q] - tp[a.u], 2);
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential - springEnergy, 1e-10 * std::max(1.0, std::abs(ref.potential)));
    double scale = 1, err = 0;
    for (int i = 0; i < model->nu(); ++i) {
      scale = std::max(scale, std::abs(ref.udot[i]));
      err = std::max(err, std::abs(batch.udot(0)[i] - ref.udot[i]));
    }
    worst[which] = std::max(worst[which], err / scale);
  }
  std::printf("solo12 max relative udot error vs Simbody: stops %.2e, PD %.2e, both %.2e\n", worst[0], worst[1],
              worst[2]);
  EXPECT_GE(penetrated, 10);
}

}  // namespace
}  // namespace lockstep::test
