// SpatialInertia and ArticulatedInertia (simbody-ArticulatedInertia.txt) against dense 6x6 Eigen.
#include "test_util.h"

namespace lockstep::test {
namespace {

Mat6 phiMat(const Eigen::Vector3d& l) {
  Mat6 m = Mat6::Identity();
  m.topRightCorner<3, 3>() = skew(l);
  return m;
}

TEST(SpatialInertia, DenseFormMomentumAndShift) {
  Random rnd(41);
  for (int trial = 0; trial < 100; ++trial) {
    const double m = rnd.uniform(0.1, 5);
    const Vec3<double> c = rnd.vec3();
    const SymMat33<double> Ic = rnd.centralInertia(m);
    const SpatialInertia<double> I = SpatialInertia<double>::fromCentral(m, c, Ic);
    // Dense spatial inertia about the origin from its definition.
    const Eigen::Vector3d ec = toEigen(c);
    Mat6 D;
    D << toEigen(Ic) - m * skew(ec) * skew(ec), m * skew(ec), -m * skew(ec), m * Eigen::Matrix3d::Identity();
    EXPECT_TRUE(near(toEigen(I.toSpatialMat()), D, 1e-12));
    const SpatialVec<double> V = rnd.spatialVec();
    EXPECT_TRUE(near(toEigen(I * V), D * toEigen(V), 1e-12));
    EXPECT_NEAR(I.kineticEnergy(V), 0.5 * toEigen(V).dot(D * toEigen(V)), 1e-12);
    EXPECT_TRUE(near(toEigen(I.centralInertia()), toEigen(Ic), 1e-12));
    // Moving the origin to O + s is the force shift on both sides: I' = ~S I S with S the motion shift.
    const Vec3<double> s = rnd.vec3();
    Mat6 S = Mat6::Identity();
    S.bottomLeftCorner<3, 3>() = skew(toEigen(s));  // velocity at O from velocity at O + s: v_O = v_O' + s x w
    EXPECT_TRUE(near(toEigen(I.shift(s).toSpatialMat()), S.transpose() * D * S, 1e-12));
    // Re-expression.
    const Rotation<double> R = rnd.rotation();
    Mat6 RR = Mat6::Zero();
    RR.topLeftCorner<3, 3>() = RR.bottomRightCorner<3, 3>() = toEigen(R.R);
    EXPECT_TRUE(near(toEigen(I.reexpress(R).toSpatialMat()), RR * D * RR.transpose(), 1e-12));
  }
}

TEST(SpatialInertia, GyroscopicForceMatchesNewtonEulerAboutTheCenterOfMass) {
  // With zero acceleration of the origin Bo and zero angular acceleration, the Newton-Euler
  // equations about the center of mass, moved to Bo, give the velocity-dependent force
  // [w x (J w); m w x (w x c)] with J the inertia about Bo.
  Random rnd(42);
  for (int trial = 0; trial < 50; ++trial) {
    const SpatialInertia<double> I = rnd.spatialInertia();
    const Vec3<double> w = rnd.vec3();
    // Direct: moment about Bo = Ic*0 + w x (Ic w) + c x m a_c, with a_c = w x (w x c).
    const Eigen::Vector3d ec = toEigen(I.c), ew = toEigen(w);
    const Eigen::Vector3d a_c = ew.cross(ew.cross(ec));
    const Eigen::Matrix3d Ic = toEigen(I.centralInertia());
    Vec6 expect;
    expect << ew.cross(Ic * ew) + ec.cross(I.m * a_c), I.m * a_c;
    EXPECT_TRUE(near(toEigen(I.gyroscopicForce(w)), expect, 1e-12));
  }
}

TEST(ArticulatedInertia, ArithmeticAndProducts) {
  Random rnd(43);
  for (int trial = 0; trial < 100; ++trial) {
    const ArticulatedInertia<double> P = rnd.articulatedInertia(), Q = rnd.articulatedInertia();
    const Mat6 dP = toEigen(P.toSpatialMat()), dQ = toEigen(Q.toSpatialMat());
    EXPECT_TRUE(near(dP, dP.transpose(), 0.0));
    EXPECT_TRUE(near(toEigen((P + Q).toSpatialMat()), dP + dQ, 1e-13));
    EXPECT_TRUE(near(toEigen((P - Q).toSpatialMat()), dP - dQ, 1e-13));
    ArticulatedInertia<double> R = P;
    R += Q;
    EXPECT_TRUE(near(toEigen(R.toSpatialMat()), dP + dQ, 1e-13));
    R -= Q;
    EXPECT_TRUE(near(toEigen(R.toSpatialMat()), dP, 1e-13));
    const SpatialVec<double> v = rnd.spatialVec();
    EXPECT_TRUE(near(toEigen(P * v), dP * toEigen(v), 1e-13));
    SpatialVec<double> cols[4], out[4];
    Eigen::Matrix<double, 6, 4> E;
    for (int j = 0; j < 4; ++j) {
      cols[j] = rnd.spatialVec();
      E.col(j) = toEigen(cols[j]);
    }
    P.timesColumns(cols, out, 4);
    for (int j = 0; j < 4; ++j) EXPECT_TRUE(near(toEigen(out[j]), dP * E.col(j), 1e-13));
  }
}

TEST(ArticulatedInertia, FromRigidBodyInertia) {
  Random rnd(44);
  for (int trial = 0; trial < 20; ++trial) {
    const SpatialInertia<double> I = rnd.spatialInertia();
    EXPECT_TRUE(near(toEigen(ArticulatedInertia<double>::fromRigid(I).toSpatialMat()), toEigen(I.toSpatialMat()),
                     1e-14));
  }
}

TEST(ArticulatedInertia, ShiftIdentities) {
  Random rnd(45);
  for (int trial = 0; trial < 100; ++trial) {
    const ArticulatedInertia<double> P = rnd.articulatedInertia();
    const Vec3<double> s = rnd.vec3();
    const Mat6 dP = toEigen(P.toSpatialMat());
    // The defining product: P' = [1 sx; 0 1] P [1 0; -sx 1].
    Mat6 L = Mat6::Identity(), Rm = Mat6::Identity();
    L.topRightCorner<3, 3>() = skew(toEigen(s));
    Rm.bottomLeftCorner<3, 3>() = -skew(toEigen(s));
    EXPECT_TRUE(near(toEigen(P.shift(s).toSpatialMat()), L * dP * Rm, 1e-12));
    // Phi * P * ~Phi == P.shift(l).
    EXPECT_TRUE(near(toEigen(P.shift(s).toSpatialMat()), phiMat(toEigen(s)) * dP * phiMat(toEigen(s)).transpose(),
                     1e-12));
    // Shifting by s then by -s restores P.
    EXPECT_TRUE(near(toEigen(P.shift(s).shift(-s).toSpatialMat()), dP, 1e-12));
    ArticulatedInertia<double> Q = P;
    Q.shiftInPlace(s);
    EXPECT_TRUE(near(toEigen(Q.toSpatialMat()), toEigen(P.shift(s).toSpatialMat()), 0.0));
    // For a rigid body the articulated shift by -s equals the rigid-body shift to O - s.
    const SpatialInertia<double> I = rnd.spatialInertia();
    EXPECT_TRUE(near(toEigen(ArticulatedInertia<double>::fromRigid(I).shift(s).toSpatialMat()),
                     toEigen(I.shift(-s).toSpatialMat()), 1e-12));
  }
}

// Float ABI operations agree with double to 2e-5 relative to the matrix scale (entries up to ~10,
// ~100 flops per entry, float epsilon 6e-8).
TEST(ArticulatedInertia, FloatAgreesWithDouble) {
  Random rnd(46);
  for (int trial = 0; trial < 50; ++trial) {
    const ArticulatedInertia<double> P = rnd.articulatedInertia();
    const Vec3<double> s = rnd.vec3();
    ArticulatedInertia<float> Pf;
    Pf.M = {float(P.M.xx), float(P.M.yy), float(P.M.zz), float(P.M.xy), float(P.M.xz), float(P.M.yz)};
    Pf.J = {float(P.J.xx), float(P.J.yy), float(P.J.zz), float(P.J.xy), float(P.J.xz), float(P.J.yz)};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Pf.F.m[i][j] = float(P.F.m[i][j]);
    const SpatialMat<float> Sf = Pf.shift(castVec3<float>(s)).toSpatialMat();
    Mat6 back;
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) back(i, j) = Sf(i, j);
    EXPECT_TRUE(near(back, toEigen(P.shift(s).toSpatialMat()), 2e-5));
  }
}

}  // namespace
}  // namespace lockstep::test
