// The URDF robots against Simbody 3.7 built from the same Model: joint accelerations under gravity
// (and joint damping) at random states, to 1e-10 relative.
#include <gtest/gtest.h>

#include "lockstep/batch.h"
#include "lockstep/scene.h"
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

}  // namespace
}  // namespace lockstep::test
