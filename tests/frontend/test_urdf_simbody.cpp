// The URDF robots against Simbody 3.7 built from the same Model: joint accelerations under gravity
// (and joint damping) at random states, to 1e-10 relative.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep::test
