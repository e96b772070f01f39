// Each mobilizer's X_FM, H_FM, HdotU_FM and qdot against finite differences of its pose along a
// motion q(t) with qdot = N(q) u(t).
#include "lockstep/engine/model.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

class MobilizerKinematics : public ::testing::TestWithParam<int> {};

Eigen::Vector3d vee(const Eigen::Matrix3d& W) { return {W(2, 1), W(0, 2), W(1, 0)}; }

TEST_P(MobilizerKinematics, MatchFiniteDifferencesOfThePose) {
  const MobilizerType type = static_cast<MobilizerType>(GetParam());
  const int nq = mobilizerNq(type), nu = mobilizerNu(type);
  Random rnd(100 + GetParam());
  for (int trial = 0; trial < 10; ++trial) {
    double q0[kMaxMobilizerQ] = {0}, u0[kMaxMobilizerU] = {0}, udot[kMaxMobilizerU] = {0};
    if (mobilizerQuaternionIndex(type) == 0) {
      rnd.rotation().toQuaternion(q0);
      for (int k = 4; k < nq; ++k) q0[k] = rnd.uniform();
    } else {
      for (int k = 0; k < nq; ++k) q0[k] = rnd.uniform(-1.2, 1.2);
    }
    for (int k = 0; k < nu; ++k) {
      u0[k] = rnd.uniform(-2, 2);
      udot[k] = rnd.uniform(-2, 2);
    }
    // Integrate q(t), u(t) = u0 + t udot with tiny RK4 steps so that q follows qdot = N(q) u.
    auto poseAt = [&](double t) {
      double q[kMaxMobilizerQ];
      for (int k = 0; k < nq; ++k) q[k] = q0[k];
      const int n = 64;
      const double h = t / n;
      auto f = [&](const double* qq, double s, double* qd) {
        double u[kMaxMobilizerU];
        for (int k = 0; k < nu; ++k) u[k] = u0[k] + s * udot[k];
        mobilizerQdot<double>(type, qq, u, qd);
      };
      for (int i = 0; i < n; ++i) {
        double k1[7], k2[7], k3[7], k4[7], tmp[7];
        const double s = i * h;
        f(q, s, k1);
        for (int k = 0; k < nq; ++k) tmp[k] = q[k] + 0.5 * h * k1[k];
        f(tmp, s + 0.5 * h, k2);
        for (int k = 0; k < nq; ++k) tmp[k] = q[k] + 0.5 * h * k2[k];
        f(tmp, s + 0.5 * h, k3);
        for (int k = 0; k < nq; ++k) tmp[k] = q[k] + h * k3[k];
        f(tmp, s + h, k4);
        for (int k = 0; k < nq; ++k) q[k] += h / 6 * (k1[k] + 2 * k2[k] + 2 * k3[k] + k4[k]);
      }
      return mobilizerX_FM<double>(type, q);
    };
    const double h = 1e-4;
    auto w = [&](double t) {
      const Eigen::Matrix3d Rd = (toEigen(poseAt(t + h).R.R) - toEigen(poseAt(t - h).R.R)) / (2 * h);
      return Eigen::Vector3d(vee(Rd * toEigen(poseAt(t).R.R).transpose()));
    };
    auto p = [&](double t) { return toEigen(poseAt(t).p); };
    Vec6 V_fd, A_fd;
    V_fd << w(0), (p(h) - p(-h)) / (2 * h);
    A_fd << (w(h) - w(-h)) / (2 * h), (p(h) - 2 * p(0) + p(-h)) / (h * h);

    SpatialVec<double> H[kMaxMobilizerU];
    mobilizerH_FM<double>(type, q0, H);
    Vec6 V = Vec6::Zero(), A = toEigen(mobilizerHdotU_FM<double>(type, q0, u0));
    for (int j = 0; j < nu; ++j) {
      V += u0[j] * toEigen(H[j]);
      A += udot[j] * toEigen(H[j]);
    }
    EXPECT_TRUE(near(V, V_fd, 1e-7)) << mobilizerName(type);
    EXPECT_TRUE(near(A, A_fd, 1e-5)) << mobilizerName(type);
  }
}

const char* const kNames[] = {"Weld", "Pin", "Slider", "Universal", "Cylinder", "Planar", "Gimbal", "Ball", "Translation", "Free"};
INSTANTIATE_TEST_SUITE_P(AllTypes, MobilizerKinematics, ::testing::Range(0, kMobilizerTypeCount),
                         [](const ::testing::TestParamInfo<int>& info) { return std::string(kNames[info.param]); });

TEST(Mobilizer, CountsMatchConventions) {
  const int nq[] = {0, 1, 1, 2, 2, 3, 3, 4, 3, 7};
  const int nu[] = {0, 1, 1, 2, 2, 3, 3, 3, 3, 6};
  for (int t = 0; t < kMobilizerTypeCount; ++t) {
    EXPECT_EQ(mobilizerNq(static_cast<MobilizerType>(t)), nq[t]);
    EXPECT_EQ(mobilizerNu(static_cast<MobilizerType>(t)), nu[t]);
  }
}

TEST(Mobilizer, QuaternionIsNormalizedOnTheFlyAndByNormalize) {
  double q[7] = {2, 0, 0, 0, 1, 2, 3};
  const Transform<double> X = mobilizerX_FM<double>(MobilizerType::Free, q);
  EXPECT_TRUE(near(toEigen(X.R.R), Eigen::Matrix3d::Identity(), 1e-15));
  double* qp = q;
  mobilizerNormalizeQ<double>(MobilizerType::Free, qp);
  EXPECT_DOUBLE_EQ(q[0], 1.0);
  EXPECT_DOUBLE_EQ(q[4], 1.0);
}

}  // namespace
}  // namespace lockstep::test
