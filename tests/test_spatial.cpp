// The spatial algebra of simbody-SpatialAlgebra.txt: each function against a dense Eigen
// computation, against finite differences of moving frames, and in float.
#include <functional>

#include "test_util.h"

namespace lockstep::test {
namespace {

Mat6 blockDiag(const Eigen::Matrix3d& R) {
  Mat6 m = Mat6::Zero();
  m.topLeftCorner<3, 3>() = R;
  m.bottomRightCorner<3, 3>() = R;
  return m;
}
// The 6x6 matrix that shifts a motion vector measured at a point to a point displaced by r.
Mat6 motionShift(const Eigen::Vector3d& r) {
  Mat6 m = Mat6::Identity();
  m.bottomLeftCorner<3, 3>() = -skew(r);
  return m;
}
// The 6x6 matrix that moves a force applied at a point to a point displaced by r.
Mat6 forceShift(const Eigen::Vector3d& r) {
  Mat6 m = Mat6::Identity();
  m.topRightCorner<3, 3>() = -skew(r);
  return m;
}
Vec6 stack(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  Vec6 r;
  r << a, b;
  return r;
}

TEST(SpatialDense, Shifts) {
  Random rnd(11);
  for (int trial = 0; trial < 100; ++trial) {
    const SpatialVec<double> V = rnd.spatialVec(), F = rnd.spatialVec(), A = rnd.spatialVec();
    const Vec3<double> r = rnd.vec3(), from = rnd.vec3(), to = rnd.vec3(), w = rnd.vec3();
    const Eigen::Vector3d er = toEigen(r), ew = toEigen(w), ed = toEigen(to - from);
    EXPECT_TRUE(near(toEigen(shiftVelocityBy(V, r)), motionShift(er) * toEigen(V), 1e-12));
    EXPECT_TRUE(near(toEigen(shiftVelocityFromTo(V, from, to)), motionShift(ed) * toEigen(V), 1e-12));
    EXPECT_TRUE(near(toEigen(shiftForceBy(F, r)), forceShift(er) * toEigen(F), 1e-12));
    EXPECT_TRUE(near(toEigen(shiftForceFromTo(F, from, to)), forceShift(ed) * toEigen(F), 1e-12));
    const Vec6 centripetal = stack(Eigen::Vector3d::Zero(), ew.cross(ew.cross(er)));
    EXPECT_TRUE(near(toEigen(shiftAccelerationBy(A, w, r)), motionShift(er) * toEigen(A) + centripetal, 1e-12));
    const Vec6 centripetal2 = stack(Eigen::Vector3d::Zero(), ew.cross(ew.cross(ed)));
    EXPECT_TRUE(near(toEigen(shiftAccelerationFromTo(A, w, from, to)), motionShift(ed) * toEigen(A) + centripetal2,
                     1e-12));
  }
}

TEST(SpatialDense, RelativeVelocityAndAcceleration) {
  Random rnd(12);
  for (int trial = 0; trial < 100; ++trial) {
    const Transform<double> X_FA = rnd.transform(), X_FB = rnd.transform();
    const SpatialVec<double> V_FA = rnd.spatialVec(), V_FB = rnd.spatialVec();
    const SpatialVec<double> A_FA = rnd.spatialVec(), A_FB = rnd.spatialVec();
    const Eigen::Vector3d p = toEigen(X_FB.p - X_FA.p);
    const Eigen::Vector3d w_FA = toEigen(V_FA.ang), w_FB = toEigen(V_FB.ang);
    // Velocity of B in A: V_FB minus the velocity A's motion gives B's origin.
    const Vec6 V_AB_F = toEigen(V_FB) - motionShift(p) * toEigen(V_FA);
    EXPECT_TRUE(near(toEigen(findRelativeVelocityInF(X_FB.p - X_FA.p, V_FA, V_FB)), V_AB_F, 1e-12));
    EXPECT_TRUE(near(toEigen(findRelativeVelocity(X_FA, V_FA, X_FB, V_FB)),
                     blockDiag(toEigen(X_FA.R.R).transpose()) * V_AB_F, 1e-12));
    // Acceleration: transport terms of a rotating frame A.
    const Eigen::Vector3d v_rel = V_AB_F.tail<3>();
    const Vec6 A_AB_F = toEigen(A_FB) - motionShift(p) * toEigen(A_FA) -
                        stack(w_FA.cross(w_FB), w_FA.cross(w_FA.cross(p)) + 2 * w_FA.cross(v_rel));
    EXPECT_TRUE(near(toEigen(findRelativeAccelerationInF(X_FB.p - X_FA.p, V_FA, A_FA, V_FB, A_FB)), A_AB_F, 1e-12));
    EXPECT_TRUE(near(toEigen(findRelativeAcceleration(X_FA, V_FA, A_FA, X_FB, V_FB, A_FB)),
                     blockDiag(toEigen(X_FA.R.R).transpose()) * A_AB_F, 1e-12));
  }
}

TEST(SpatialDense, ReverseRelativeVelocity) {
  Random rnd(13);
  for (int trial = 0; trial < 100; ++trial) {
    const Transform<double> X_AB = rnd.transform();
    const SpatialVec<double> V_AB = rnd.spatialVec();
    const Eigen::Vector3d p = toEigen(X_AB.p);
    // V_BA_A = -(V_AB re-measured at Ao = Bo - p).
    const Vec6 V_BA_A = -(motionShift(-p) * toEigen(V_AB));
    EXPECT_TRUE(near(toEigen(reverseRelativeVelocityInA(X_AB, V_AB)), V_BA_A, 1e-12));
    EXPECT_TRUE(near(toEigen(reverseRelativeVelocity(X_AB, V_AB)),
                     blockDiag(toEigen(X_AB.R.R).transpose()) * V_BA_A, 1e-12));
    // Reversing twice gives back the original.
    const SpatialVec<double> V_BA = reverseRelativeVelocity(X_AB, V_AB);
    EXPECT_TRUE(near(toEigen(reverseRelativeVelocity(X_AB.inverse(), V_BA)), toEigen(V_AB), 1e-12));
  }
}

TEST(SpatialDense, ForceShiftPreservesPower) {
  Random rnd(14);
  for (int trial = 0; trial < 100; ++trial) {
    const SpatialVec<double> F_P = rnd.spatialVec(), V_P = rnd.spatialVec();
    const Vec3<double> r = rnd.vec3();
    // The same rigid motion measured at Q = P + r, and the same force moved to Q, do the same work.
    EXPECT_NEAR(dot(shiftForceBy(F_P, r), shiftVelocityBy(V_P, r)), dot(F_P, V_P), 1e-13);
  }
}

TEST(SpatialDense, PhiMatrix) {
  Random rnd(15);
  for (int trial = 0; trial < 50; ++trial) {
    const PhiMatrix<double> phi{rnd.vec3()};
    const SpatialVec<double> F = rnd.spatialVec(), V = rnd.spatialVec();
    const Mat6 P = toEigen(phi.toSpatialMat());
    EXPECT_TRUE(near(toEigen(phi * F), P * toEigen(F), 1e-13));
    EXPECT_TRUE(near(toEigen(phi.transposeTimes(V)), P.transpose() * toEigen(V), 1e-13));
    // Phi moves a force from B to P: the same as shifting it by -l.
    EXPECT_TRUE(near(toEigen(phi * F), toEigen(shiftForceBy(F, -phi.l)), 1e-13));
  }
}

// ---- finite differences of moving frames ------------------------------------------------------

// A frame whose pose is a smooth function of time: body-fixed XYZ angles and origin quadratic in t.
struct MovingFrame {
  Vec3<double> a0, a1, a2, p0, p1, p2;
  static MovingFrame random(Random& rnd) {
    return {rnd.vec3(), rnd.vec3(), rnd.vec3(), rnd.vec3(), rnd.vec3(), rnd.vec3()};
  }
  Transform<double> at(double t) const {
    return {Rotation<double>::bodyFixedXYZ(a0 + t * a1 + (t * t) * a2), p0 + t * p1 + (t * t) * p2};
  }
};

Eigen::Vector3d vee(const Eigen::Matrix3d& W) { return {W(2, 1), W(0, 2), W(1, 0)}; }

// Spatial velocity and acceleration of a moving pose X(t) in its reference frame, by central
// differences (angular velocity from vee(Rdot ~R)).
struct FDMotion {
  Vec6 V, A;
};
FDMotion differentiate(const std::function<Transform<double>(double)>& X, double t) {
  const double h = 1e-4;
  auto w = [&](double s) {
    const Eigen::Matrix3d Rd = (toEigen(X(s + h).R.R) - toEigen(X(s - h).R.R)) / (2 * h);
    return Eigen::Vector3d(vee(Rd * toEigen(X(s).R.R).transpose()));
  };
  auto p = [&](double s) { return toEigen(X(s).p); };
  FDMotion m;
  m.V << w(t), (p(t + h) - p(t - h)) / (2 * h);
  m.A << (w(t + h) - w(t - h)) / (2 * h), (p(t + h) - 2 * p(t) + p(t - h)) / (h * h);
  return m;
}
SpatialVec<double> toSV(const Vec6& v) { return {{{v(0), v(1), v(2)}}, {{v(3), v(4), v(5)}}}; }

TEST(SpatialFiniteDifference, RelativeVelocityAndAccelerationOfMovingFrames) {
  Random rnd(21);
  for (int trial = 0; trial < 20; ++trial) {
    const MovingFrame A = MovingFrame::random(rnd), B = MovingFrame::random(rnd);
    const double t = rnd.uniform(-0.5, 0.5);
    const FDMotion mA = differentiate([&](double s) { return A.at(s); }, t);
    const FDMotion mB = differentiate([&](double s) { return B.at(s); }, t);
    const FDMotion mAB = differentiate([&](double s) { return A.at(s).invTimes(B.at(s)); }, t);
    const SpatialVec<double> V_AB = findRelativeVelocity(A.at(t), toSV(mA.V), B.at(t), toSV(mB.V));
    const SpatialVec<double> A_AB =
        findRelativeAcceleration(A.at(t), toSV(mA.V), toSV(mA.A), B.at(t), toSV(mB.V), toSV(mB.A));
    EXPECT_TRUE(near(toEigen(V_AB), mAB.V, 1e-6));
    EXPECT_TRUE(near(toEigen(A_AB), mAB.A, 1e-5));
    // reverse: the motion of A seen from B.
    const FDMotion mBA = differentiate([&](double s) { return B.at(s).invTimes(A.at(s)); }, t);
    EXPECT_TRUE(near(toEigen(reverseRelativeVelocity(A.at(t).invTimes(B.at(t)), V_AB)), mBA.V, 1e-6));
  }
}

TEST(SpatialFiniteDifference, ShiftsFollowAPointFixedOnAMovingBody) {
  Random rnd(22);
  for (int trial = 0; trial < 20; ++trial) {
    const MovingFrame B = MovingFrame::random(rnd);
    const Vec3<double> r_B = rnd.vec3();  // point Q fixed in B
    const double t = rnd.uniform(-0.5, 0.5);
    const FDMotion mB = differentiate([&](double s) { return B.at(s); }, t);
    // Q as the origin of a frame translated from B by r_B.
    const FDMotion mQ = differentiate([&](double s) { return B.at(s) * Transform<double>::translation(r_B); }, t);
    const Vec3<double> r_A = B.at(t).R * r_B;
    EXPECT_TRUE(near(toEigen(shiftVelocityBy(toSV(mB.V), r_A)), mQ.V, 1e-6));
    EXPECT_TRUE(near(toEigen(shiftAccelerationBy(toSV(mB.A), toSV(mB.V).ang, r_A)), mQ.A, 1e-5));
    const Vec3<double> from = B.at(t).p, to = B.at(t) * r_B;
    EXPECT_TRUE(near(toEigen(shiftVelocityFromTo(toSV(mB.V), from, to)), mQ.V, 1e-6));
    EXPECT_TRUE(near(toEigen(shiftAccelerationFromTo(toSV(mB.A), toSV(mB.V).ang, from, to)), mQ.A, 1e-5));
  }
}

// ---- float ------------------------------------------------------------------------------------

template <class To, class From>
SpatialVec<To> castSV(const SpatialVec<From>& v) {
  return {castVec3<To>(v.ang), castVec3<To>(v.lin)};
}

// Float results agree with double to 5e-6 relative to the largest input magnitude (a few ulps of
// float's 6e-8 epsilon accumulated over at most ~100 flops of O(1) inputs).
TEST(SpatialFloat, AgreesWithDouble) {
  Random rnd(31);
  const double tol = 5e-6;
  for (int trial = 0; trial < 100; ++trial) {
    const Transform<double> X_FA = rnd.transform(), X_FB = rnd.transform();
    const SpatialVec<double> V_FA = rnd.spatialVec(), V_FB = rnd.spatialVec(), A_FA = rnd.spatialVec(),
                             A_FB = rnd.spatialVec();
    const Vec3<double> r = rnd.vec3();
    const Transform<float> fX_FA = castTransform<float>(X_FA), fX_FB = castTransform<float>(X_FB);
    const auto fV_FA = castSV<float>(V_FA), fV_FB = castSV<float>(V_FB), fA_FA = castSV<float>(A_FA),
               fA_FB = castSV<float>(A_FB);
    const auto fr = castVec3<float>(r);
    EXPECT_TRUE(near(toEigen(castSV<double>(findRelativeVelocity(fX_FA, fV_FA, fX_FB, fV_FB))),
                     toEigen(findRelativeVelocity(X_FA, V_FA, X_FB, V_FB)), tol));
    EXPECT_TRUE(near(toEigen(castSV<double>(findRelativeAcceleration(fX_FA, fV_FA, fA_FA, fX_FB, fV_FB, fA_FB))),
                     toEigen(findRelativeAcceleration(X_FA, V_FA, A_FA, X_FB, V_FB, A_FB)), tol));
    EXPECT_TRUE(near(toEigen(castSV<double>(reverseRelativeVelocity(fX_FA, fV_FA))),
                     toEigen(reverseRelativeVelocity(X_FA, V_FA)), tol));
    EXPECT_TRUE(near(toEigen(castSV<double>(shiftVelocityBy(fV_FA, fr))), toEigen(shiftVelocityBy(V_FA, r)), tol));
    EXPECT_TRUE(near(toEigen(castSV<double>(shiftForceBy(fV_FA, fr))), toEigen(shiftForceBy(V_FA, r)), tol));
    EXPECT_TRUE(near(toEigen(castSV<double>(shiftAccelerationBy(fA_FA, fV_FA.ang, fr))),
                     toEigen(shiftAccelerationBy(A_FA, V_FA.ang, r)), tol));
  }
}

}  // namespace
}  // namespace lockstep::test
