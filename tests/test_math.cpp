// Rotations, angle sets, quaternions and the N matrices of docs/conventions.md.
#include <cmath>

#include "lockstep/backends/lanes.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

Eigen::Matrix3d eigenBodyFixedXYZ(const Vec3<double>& a) {
  return (Eigen::AngleAxisd(a[0], Eigen::Vector3d::UnitX()) * Eigen::AngleAxisd(a[1], Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(a[2], Eigen::Vector3d::UnitZ()))
      .toRotationMatrix();
}

TEST(Math, BodyFixedXYZMatchesProductOfAxisRotations) {
  Random rnd(1);
  for (int trial = 0; trial < 100; ++trial) {
    const Vec3<double> a = rnd.vec3(3.0);
    EXPECT_TRUE(near(toEigen(Rotation<double>::bodyFixedXYZ(a).R), eigenBodyFixedXYZ(a), 1e-14));
    const Rotation<double> prod =
        Rotation<double>::aboutAxis(0, a[0]) * Rotation<double>::aboutAxis(1, a[1]) * Rotation<double>::aboutAxis(2, a[2]);
    EXPECT_TRUE(near(toEigen(prod.R), eigenBodyFixedXYZ(a), 1e-14));
  }
}

TEST(Math, BodyFixedXYZRoundTrip) {
  Random rnd(2);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3<double> a{{rnd.uniform(-3.1, 3.1), rnd.uniform(-1.5, 1.5), rnd.uniform(-3.1, 3.1)}};
    const Vec3<double> back = Rotation<double>::bodyFixedXYZ(a).toBodyFixedXYZ();
    EXPECT_TRUE(near(toEigen(back), toEigen(a), 1e-12));
  }
  // Gimbal lock: the angles are not unique, but they must rebuild the same rotation.
  for (double a1 : {M_PI / 2, -M_PI / 2}) {
    const Vec3<double> a{{0.3, a1, -0.2}};
    const Rotation<double> R = Rotation<double>::bodyFixedXYZ(a);
    const Rotation<double> R2 = Rotation<double>::bodyFixedXYZ(R.toBodyFixedXYZ());
    EXPECT_TRUE(near(toEigen(R2.R), toEigen(R.R), 1e-12));
  }
}

TEST(Math, QuaternionRoundTripAndEigenAgreement) {
  Random rnd(3);
  for (int trial = 0; trial < 200; ++trial) {
    const Rotation<double> R = rnd.rotation();
    double q[4];
    R.toQuaternion(q);
    EXPECT_GE(q[0], 0.0);
    EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-14);
    const Eigen::Quaterniond eq(q[0], q[1], q[2], q[3]);
    EXPECT_TRUE(near(eq.toRotationMatrix(), toEigen(R.R), 1e-14));
    EXPECT_TRUE(near(toEigen(Rotation<double>::fromQuaternion(q[0], q[1], q[2], q[3]).R), toEigen(R.R), 1e-14));
  }
}

TEST(Math, AboutUnitVectorMatchesEigenAngleAxis) {
  Random rnd(4);
  for (int trial = 0; trial < 50; ++trial) {
    Vec3<double> n = rnd.vec3();
    n = n / norm(n);
    const double a = rnd.uniform(-4, 4);
    EXPECT_TRUE(near(toEigen(Rotation<double>::aboutUnitVector(n, a).R),
                     Eigen::AngleAxisd(a, toEigen(n)).toRotationMatrix(), 1e-14));
  }
}

// w = vee(Rdot * ~R) in the parent frame, from a central difference of R(t).
Eigen::Vector3d angularVelocityFD(const std::function<Eigen::Matrix3d(double)>& R, double t, double h) {
  const Eigen::Matrix3d W = (R(t + h) - R(t - h)) / (2 * h) * R(t).transpose();
  return {0.5 * (W(2, 1) - W(1, 2)), 0.5 * (W(0, 2) - W(2, 0)), 0.5 * (W(1, 0) - W(0, 1))};
}

TEST(Math, BodyFixedXYZ_N_B_IsTheAngleRateMap) {
  Random rnd(5);
  for (int trial = 0; trial < 50; ++trial) {
    const Vec3<double> a0{{rnd.uniform(-2, 2), rnd.uniform(-1.2, 1.2), rnd.uniform(-2, 2)}};
    const Vec3<double> adot = rnd.vec3();
    auto R = [&](double t) { return eigenBodyFixedXYZ(a0 + t * adot); };
    const Eigen::Vector3d w_F = angularVelocityFD(R, 0.0, 1e-6);
    const Eigen::Vector3d w_M = R(0).transpose() * w_F;
    // qdot = N_B * w_M, and NInv_B inverts it.
    EXPECT_TRUE(near(toEigen(bodyFixedXYZ_N_B(a0)) * w_M, toEigen(adot), 1e-8));
    EXPECT_TRUE(near(toEigen(bodyFixedXYZ_NInv_B(a0)) * toEigen(adot), w_M, 1e-8));
    EXPECT_TRUE(near(toEigen(bodyFixedXYZ_N_B(a0)) * toEigen(bodyFixedXYZ_NInv_B(a0)), Eigen::Matrix3d::Identity(),
                     1e-13));
  }
}

TEST(Math, QuaternionRateMatchesFiniteDifference) {
  Random rnd(6);
  for (int trial = 0; trial < 50; ++trial) {
    const Rotation<double> R0 = rnd.rotation();
    const Vec3<double> w_F = rnd.vec3(2.0);
    // R(t) = exp(t [w_F]x) * R0 turns with the constant angular velocity w_F expressed in F.
    const double wn = norm(w_F);
    auto quatAt = [&](double t, double q[4]) {
      const Rotation<double> R = Rotation<double>::aboutUnitVector(w_F / wn, wn * t) * R0;
      R.toQuaternion(q);
    };
    double q0[4], qp[4], qm[4], qdot[4];
    quatAt(0, q0);
    quatAt(1e-6, qp);
    quatAt(-1e-6, qm);
    quaternionRate(q0, w_F, qdot);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(qdot[i], (qp[i] - qm[i]) / 2e-6, 1e-8);
  }
}

TEST(Math, TransformCompositionAndInverse) {
  Random rnd(7);
  for (int trial = 0; trial < 50; ++trial) {
    const Transform<double> X_AB = rnd.transform(), X_BC = rnd.transform();
    const Vec3<double> p_CQ = rnd.vec3();
    EXPECT_TRUE(near(toEigen((X_AB * X_BC) * p_CQ), toEigen(X_AB * (X_BC * p_CQ)), 1e-14));
    const Transform<double> I = X_AB.inverse() * X_AB;
    EXPECT_TRUE(near(toEigen(I.R.R), Eigen::Matrix3d::Identity(), 1e-14));
    EXPECT_TRUE(near(toEigen(I.p), Eigen::Vector3d::Zero(), 1e-14));
    const Transform<double> X_AC = X_AB * X_BC;
    const Transform<double> X_BC2 = X_AB.invTimes(X_AC);
    EXPECT_TRUE(near(toEigen(X_BC2.R.R), toEigen(X_BC.R.R), 1e-14));
    EXPECT_TRUE(near(toEigen(X_BC2.p), toEigen(X_BC.p), 1e-14));
  }
}

TEST(Math, SymMatReexpressAndProducts) {
  Random rnd(8);
  for (int trial = 0; trial < 50; ++trial) {
    const SymMat33<double> S = rnd.symmetric();
    const Mat33<double> R = rnd.rotation().R;
    const Vec3<double> v = rnd.vec3();
    EXPECT_TRUE(near(toEigen(reexpressSym(R, S)), toEigen(R) * toEigen(S) * toEigen(R).transpose(), 1e-14));
    EXPECT_TRUE(near(toEigen(S * v), toEigen(S) * toEigen(v), 1e-14));
    EXPECT_TRUE(near(toEigen(crossMat(v)) * toEigen(S * v), toEigen(cross(v, S * v)), 1e-14));
    EXPECT_TRUE(near(toEigen(transposeTimes(R, v)), toEigen(R).transpose() * toEigen(v), 1e-14));
  }
}

// Packs of worlds (lanes.h): sin and cos of a pack, against the library, lane by lane: within 2
// ulps over many periods (in float, near zero crossings, within 1e-10 absolute: the reduction's
// error); huge and non-finite arguments as the library gives them.
template <class S>
void expectPackSinCos(double ulps, S floor) {
  using P = Pack<S>;
  std::vector<S> xs = {S(0), S(-0.0), S(M_PI / 4), S(-M_PI / 4), S(M_PI / 2), S(M_PI), S(1e-30),
                       S(3e4), S(-99999), S(1e5), S(2.5e6), S(1e30), S(INFINITY), S(-INFINITY), S(NAN)};
  Random rnd(71);
  for (int i = 0; i < 20000; ++i) xs.push_back(S(rnd.uniform(-60, 60)));
  for (int i = 0; i < 2000; ++i) xs.push_back(S(rnd.uniform(-1, 1) * std::pow(10.0, rnd.uniform(-8, 4))));
  while (xs.size() % P::kWidth) xs.push_back(S(0.5));
  const S eps = std::numeric_limits<S>::epsilon();
  for (std::size_t i = 0; i < xs.size(); i += P::kWidth) {
    P x;
    for (int l = 0; l < P::kWidth; ++l) x.lane(l) = xs[i + l];
    const P s = sinT(x), c = cosT(x);
    for (int l = 0; l < P::kWidth; ++l) {
      const S a = xs[i + l];
      const S refS = std::sin(a), refC = std::cos(a);
      if (!std::isfinite(a)) {
        EXPECT_TRUE(std::isnan(s[l]) && std::isnan(c[l])) << a;
        continue;
      }
      // An ulp of the result, at least that of the smallest normal scale near zero crossings.
      EXPECT_LE(std::abs(s[l] - refS), std::max(S(ulps) * eps * std::abs(refS), floor)) << "sin " << a;
      EXPECT_LE(std::abs(c[l] - refC), std::max(S(ulps) * eps * std::abs(refC), floor)) << "cos " << a;
    }
  }
}

// atan2 of a pack against the library: every quadrant and octant, both sides of tan(pi/8), tiny
// and huge ratios, signed zeros, infinities and NaN.
template <class S>
void expectPackAtan2(double ulps) {
  using P = Pack<S>;
  std::vector<std::pair<S, S>> yx = {{S(0), S(1)},  {S(-0.0), S(1)}, {S(0), S(-1)}, {S(-0.0), S(-1)},
                                     {S(0), S(0)},  {S(-0.0), S(-0.0)}, {S(1), S(0)}, {S(-1), S(0)},
                                     {S(1), S(1)},  {S(-1), S(-1)}, {S(1e-30), S(1)}, {S(1), S(1e-30)},
                                     {S(INFINITY), S(1)}, {S(1), S(-INFINITY)}, {S(NAN), S(1)}, {S(2), S(NAN)}};
  const double tan8 = std::tan(M_PI / 8);
  for (double d : {-1e-7, 0.0, 1e-7}) {
    yx.push_back({S(tan8 + d), S(1)});
    yx.push_back({S(-1), S(-(tan8 + d))});
  }
  Random rnd(72);
  for (int i = 0; i < 20000; ++i) yx.push_back({S(rnd.uniform(-3, 3)), S(rnd.uniform(-3, 3))});
  for (int i = 0; i < 2000; ++i)
    yx.push_back({S(rnd.uniform(-1, 1) * std::pow(10.0, rnd.uniform(-6, 6))), S(rnd.uniform(-1, 1))});
  while (yx.size() % P::kWidth) yx.push_back({S(0.5), S(0.25)});
  const S eps = std::numeric_limits<S>::epsilon();
  for (std::size_t i = 0; i < yx.size(); i += P::kWidth) {
    P y, x;
    for (int l = 0; l < P::kWidth; ++l) {
      y.lane(l) = yx[i + l].first;
      x.lane(l) = yx[i + l].second;
    }
    const P r = atan2T(y, x);
    for (int l = 0; l < P::kWidth; ++l) {
      const S ref = std::atan2(yx[i + l].first, yx[i + l].second);
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(r[l]));
        continue;
      }
      EXPECT_EQ(std::signbit(r[l]), std::signbit(ref)) << yx[i + l].first << " " << yx[i + l].second;
      EXPECT_LE(std::abs(r[l] - ref), S(ulps) * eps * std::abs(ref)) << yx[i + l].first << " " << yx[i + l].second;
    }
  }
}

TEST(Lanes, Atan2OfAPackMatchesTheLibrary) {
  expectPackAtan2<double>(2.0);
  expectPackAtan2<float>(2.0);
}

TEST(Lanes, SinCosOfAPackMatchTheLibrary) {
  expectPackSinCos<double>(2.0, 1e-300);
  expectPackSinCos<float>(2.0, 1e-10f);
}

}  // namespace
}  // namespace lockstep::test
