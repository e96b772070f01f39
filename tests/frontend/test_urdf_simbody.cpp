// The URDF robots against Simbody 3.7 built from the same Model: joint accelerations under gravity
// (and joint damping) at random states, to 1e-10 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "lockstep/engine/batch.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/urdf.h"
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

// Solo12 on a Free root with a contact sphere per foot (a scene's "ground" section) against
// Simbody's SmoothSphereHalfSpaceForce: random joint angles, a small random tilt, the base lowered
// until its lowest foot penetrates by 0 to 2 cm (others touching or not), speeds random (sliding
// fast) or a thousandth of that (slower than the transition velocity).
TEST(UrdfAgainstSimbody, Solo12FeetOnTheGround) {
  const std::string json = R"({
    "urdf": {"path": "models/solo12.urdf", "root_joint": "free"},
    "ground": {"stiffness": 5e6, "dissipation": 1.5, "static_friction": 0.9, "dynamic_friction": 0.7,
               "viscous_friction": 0.1, "transition_velocity": 0.02,
               "contact_spheres": [{"body": "FL_FOOT", "radius": 0.0175}, {"body": "FR_FOOT", "radius": 0.0175},
                                   {"body": "HL_FOOT", "radius": 0.0175}, {"body": "HR_FOOT", "radius": 0.0175}]}
  })";
  const Scene scene = parseScene(json, "solo12-ground", LOCKSTEP_SOURCE_DIR);
  const Model& model = *scene.model;
  ASSERT_EQ(model.groundContacts().size(), 4u);
  SimbodyOracle oracle(model);
  Batch<double> batch(scene.model, 1);
  Random rnd(611);
  double worst = 0;
  int touching = 0;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> q = model.defaultQ(), u(model.nu());
    const Rotationd R = Rotationd::bodyFixedXYZ(rnd.vec3(0.2));
    double quat[4];
    R.toQuaternion(quat);
    for (int k = 0; k < 4; ++k) q[k] = quat[k];
    for (int i = 7; i < model.nq(); ++i) q[i] = rnd.uniform(-1.5, 1.5);
    for (double& x : u) x = (trial % 2 ? 1e-3 : 1.0) * rnd.uniform(-1, 1);
    batch.setQ(0, q);
    double deepest = -1e9;
    for (int i = 0; i < 4; ++i) deepest = std::max(deepest, batch.groundContact(0, i).penetration);
    q[6] += deepest - rnd.uniform(0.0, 0.02);  // the lowest foot now penetrates by 0 to 2 cm
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk);
    for (int i = 0; i < 4; ++i) touching += batch.groundContact(0, i).penetration > 0;
    const SimbodyOracle::Result ref = oracle.evaluate(q, u, std::vector<double>(model.nu(), 0.0));
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    const std::vector<SpatialVecd> F = batch.appliedBodyForces(0);
    for (std::size_t b = 0; b < F.size(); ++b)
      EXPECT_TRUE(near(toEigen(F[b]), toEigen(ref.bodyForces[b]), 1e-10)) << "trial " << trial << " body " << b;
    worst = std::max(worst, (vec(batch.udot(0)) - vec(ref.udot)).cwiseAbs().maxCoeff() /
                                std::max(1.0, vec(ref.udot).cwiseAbs().maxCoeff()));
  }
  std::printf("solo12 with feet on the ground vs Simbody: max relative udot error %.3g, %d feet penetrating\n", worst,
              touching);
  EXPECT_GE(touching, 20);
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
        mb.add(stop);
        penetrated += q[b.qOffset] < stop.lower || q[b.qOffset] > stop.upper;
      }
      if (which != 0) {
        mb.add(ActuatorDesc{name, static_cast<ActuatorMode>(rnd.integer(0, 2)), rnd.uniform(0, 30), rnd.uniform(0, 2)});
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

// The shipped scenes/solo12-stand.json (ground contacts, joint stops, PD actuators with their
// targets) against Simbody at states about its standing pose: the crouch plus random joint offsets,
// a small tilt, the lowest foot 0 to 2 cm into the ground, random speeds.
TEST(UrdfAgainstSimbody, Solo12StandSceneWithEveryElement) {
  const Scene scene = loadSceneFile(std::string(LOCKSTEP_SOURCE_DIR) + "/scenes/solo12-stand.json");
  const Model& model = *scene.model;
  Batch<double> batch(scene.model, 1);
  applyScene(scene, batch);
  const std::vector<double> tp = batch.targetPositions(0), tv(model.nu(), 0.0);
  SimbodyOracle oracle(model);
  Random rnd(612);
  double worst = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> q = scene.q0, u(model.nu());
    double quat[4];
    Rotationd::bodyFixedXYZ(rnd.vec3(0.1)).toQuaternion(quat);
    for (int k = 0; k < 4; ++k) q[k] = quat[k];
    for (int i = 7; i < model.nq(); ++i) q[i] += rnd.uniform(-0.3, 0.3);
    for (double& x : u) x = rnd.uniform(-1, 1);
    batch.setQ(0, q);
    double deepest = -1e9;
    for (int i = 0; i < 4; ++i) deepest = std::max(deepest, batch.groundContact(0, i).penetration);
    q[6] += deepest - rnd.uniform(0.0, 0.02);
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk);
    const SimbodyOracle::Result ref = oracle.evaluate(q, u, std::vector<double>(model.nu(), 0.0), tp, tv);
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    worst = std::max(worst, (vec(batch.udot(0)) - vec(ref.udot)).cwiseAbs().maxCoeff() /
                                std::max(1.0, vec(ref.udot).cwiseAbs().maxCoeff()));
  }
  std::printf("solo12-stand vs Simbody (contacts, stops, PD): max relative udot error %.3g\n", worst);
}

}  // namespace
}  // namespace lockstep::test
