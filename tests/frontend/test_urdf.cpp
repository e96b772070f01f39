// URDF import: the four robots of models/ against numbers read from their XML independently of
// urdfdom, the joint-axis mapping and the welding of fixed joints against closed forms, and the
// inertia repair.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "lockstep/engine/batch.h"
#include "lockstep/io/urdf.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

const std::string kModels = std::string(LOCKSTEP_SOURCE_DIR) + "/models/";

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The sum of every <mass value="..."/> of a URDF, found with a regular expression.
double sumOfMassTags(const std::string& xml) {
  double total = 0;
  const std::regex mass("<mass\\s+value\\s*=\\s*\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), mass); it != std::sregex_iterator(); ++it)
    total += std::stod((*it)[1]);
  return total;
}

// The number of <joint ... type="TYPE"> elements (transmissions' <joint name=...> have no type).
int countJoints(const std::string& xml, const std::string& type) {
  const std::regex joint("<joint\\s+name=\"[^\"]*\"\\s+type=\"" + type + "\"");
  return static_cast<int>(std::distance(std::sregex_iterator(xml.begin(), xml.end(), joint), std::sregex_iterator()));
}

struct RobotCase {
  const char* file;
  UrdfRootJoint root;
  int nq, nu;
};

TEST(UrdfImport, RobotsHaveTheirCoordinatesAndMass) {
  for (const RobotCase& c : {RobotCase{"panda.urdf", UrdfRootJoint::Fixed, 9, 9},
                             RobotCase{"ur5_robot.urdf", UrdfRootJoint::Fixed, 6, 6},
                             RobotCase{"solo12.urdf", UrdfRootJoint::Free, 19, 18},
                             RobotCase{"double_pendulum.urdf", UrdfRootJoint::Fixed, 2, 2}}) {
    SCOPED_TRACE(c.file);
    const std::string xml = readText(kModels + c.file);
    UrdfOptions options;
    options.rootJoint = c.root;
    const UrdfImport robot = importUrdf(xml, c.file, options);
    const auto model = robot.buildModel();
    EXPECT_EQ(model->nq(), c.nq);
    EXPECT_EQ(model->nu(), c.nu);
    const int moving = countJoints(xml, "revolute") + countJoints(xml, "continuous") + countJoints(xml, "prismatic");
    EXPECT_EQ(model->nu(), moving + (c.root == UrdfRootJoint::Free ? 6 : 0));
    EXPECT_EQ(model->numBodies(), 1 + moving);  // the root, then one body per moving joint
    EXPECT_EQ(robot.links.size(), static_cast<std::size_t>(1 + moving + countJoints(xml, "fixed")));
    EXPECT_NEAR(model->totalMass(), sumOfMassTags(xml), 1e-12);
    EXPECT_EQ(model->gravity()[2], -9.81);
    EXPECT_EQ(model->body(0).mobilizer, c.root == UrdfRootJoint::Free ? MobilizerType::Free : MobilizerType::Weld);
  }
}

TEST(UrdfImport, DampingAndEffortLimits) {
  const auto panda = importUrdfFile(kModels + "panda.urdf").buildModel();
  const int j1 = panda->body(panda->bodyIndex("panda_link1")).uOffset;
  const int j5 = panda->body(panda->bodyIndex("panda_link5")).uOffset;
  EXPECT_EQ(panda->damping()[j1], 0.003);
  EXPECT_EQ(panda->effortLimit()[j1], 87.0);
  EXPECT_EQ(panda->effortLimit()[j5], 12.0);
  EXPECT_EQ(panda->body(panda->bodyIndex("panda_leftfinger")).mobilizer, MobilizerType::Slider);
  // The double pendulum writes effort="0": no limit.
  const auto pendulum = importUrdfFile(kModels + "double_pendulum.urdf").buildModel();
  EXPECT_EQ(pendulum->damping(), (std::vector<double>{0.05, 0.05}));
  EXPECT_TRUE(std::isinf(pendulum->effortLimit()[0]));
  EXPECT_EQ(pendulum->qNames(), (std::vector<std::string>{"joint1", "joint2"}));
}

// A second check of <dynamics damping>, by what it does: a wheel spinning about a vertical axis (no
// torque from gravity) slows as u(t) = u0 exp(-c t / I), I = izz + m |com|^2 about the axis.
TEST(UrdfImport, JointDampingSlowsASpinningWheelExponentially) {
  const double c = 0.7, m = 2, izz = 0.05, r = 0.1, u0 = 3;
  const std::string xml =
      "<robot name=\"r\"><link name=\"base\"/>"
      "<link name=\"wheel\"><inertial><origin xyz=\"0.1 0 0\"/><mass value=\"2\"/>"
      "<inertia ixx=\"0.05\" iyy=\"0.05\" izz=\"0.05\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"
      "<joint name=\"spin\" type=\"continuous\"><parent link=\"base\"/><child link=\"wheel\"/>"
      "<axis xyz=\"0 0 1\"/><dynamics damping=\"0.7\"/></joint></robot>";
  const auto model = importUrdf(xml, "inline.urdf").buildModel();
  ASSERT_EQ(model->nu(), 1);
  Batch<double> batch(model, 1);
  batch.setU(0, {u0});
  const double I = izz + m * r * r, t = 0.5;
  batch.step(1e-3, 500, Integrator::RK4);
  EXPECT_NEAR(batch.u(0)[0], u0 * std::exp(-c * t / I), 1e-10);
}

TEST(UrdfImport, FreeRootJointIsNamedRoot) {
  UrdfOptions options;
  options.rootJoint = UrdfRootJoint::Free;
  const auto solo = importUrdfFile(kModels + "solo12.urdf", options).buildModel();
  EXPECT_EQ(solo->body(0).jointName, "root");
  EXPECT_EQ(solo->uNames()[0], "root.wx");
  EXPECT_EQ(solo->qNames()[6], "root.z");
}

// R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll, pitch, yaw, written independently of urdfdom.
Rotationd fromRpy(double roll, double pitch, double yaw) {
  return Rotationd::aboutAxis(2, yaw) * Rotationd::aboutAxis(1, pitch) * Rotationd::aboutAxis(0, roll);
}

std::string vec(const Vec3d& v) {
  std::ostringstream os;
  os.precision(17);
  os << v[0] << " " << v[1] << " " << v[2];
  return os.str();
}

// X_PB of a body at coordinate q: X_PF * X_FM(q) * ~X_BM.
Transformd poseInParent(const Body& b, double q) {
  const double qs[kMaxMobilizerQ] = {q};  // one coordinate; the array is sized for any mobilizer
  return b.X_PF * mobilizerX_FM<double>(b.mobilizer, qs) * b.X_BM.inverse();
}

void expectNear(const Transformd& a, const Transformd& b, double tol) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(a.p[i], b.p[i], tol);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(a.R(i, j), b.R(i, j), tol);
  }
}

TEST(UrdfImport, JointsMoveAboutAndAlongTheirAxes) {
  // base -(fixed: o1, rpy1)-> mid -(revolute or prismatic about a: o2, rpy2)-> arm. The arm's pose
  // on the base body at q must be X_base_mid * X_mid_J * (rotation by q about a, or q a along it).
  Random rnd(600);
  std::vector<Vec3d> axes = {{{0, 0, 1}}, {{0, 0, -1}}, {{1, 0, 0}}, {{-1, 0, 0}}, {{0, 1, 0}}};
  for (int k = 0; k < 6; ++k) axes.push_back(rnd.vec3());
  for (const char* type : {"revolute", "continuous", "prismatic"}) {
    for (const Vec3d& axis : axes) {
      SCOPED_TRACE(std::string(type) + " axis " + vec(axis));
      const Vec3d o1 = rnd.vec3(), r1 = rnd.vec3(), o2 = rnd.vec3(), r2 = rnd.vec3();
      const std::string limit = std::string(type) == "continuous" ? "" : "<limit effort=\"5\" velocity=\"1\"/>";
      const std::string xml =
          "<robot name=\"r\"><link name=\"base\"/><link name=\"mid\"/>"
          "<link name=\"arm\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"
          "<joint name=\"weld\" type=\"fixed\"><parent link=\"base\"/><child link=\"mid\"/>"
          "<origin xyz=\"" + vec(o1) + "\" rpy=\"" + vec(r1) + "\"/></joint>"
          "<joint name=\"j\" type=\"" + type + "\"><parent link=\"mid\"/><child link=\"arm\"/>"
          "<origin xyz=\"" + vec(o2) + "\" rpy=\"" + vec(r2) + "\"/><axis xyz=\"" + vec(axis) + "\"/>" + limit +
          "</joint></robot>";
      const auto model = importUrdf(xml, "inline.urdf").buildModel();
      ASSERT_EQ(model->numBodies(), 2);
      const Body& arm = model->body(1);
      EXPECT_EQ(model->body(arm.parent).name, "base");
      const Transformd X_base_mid{fromRpy(r1[0], r1[1], r1[2]), o1};
      const Transformd X_mid_J{fromRpy(r2[0], r2[1], r2[2]), o2};
      const Vec3d a = axis / norm(axis);
      for (double q : {0.0, 0.7, -2.1}) {
        const Transformd motion = std::string(type) == "prismatic"
                                      ? Transformd::translation(q * a)
                                      : Transformd{Rotationd::aboutUnitVector(a, q), Vec3d::zero()};
        expectNear(poseInParent(arm, q), X_base_mid * X_mid_J * motion, 1e-14);
      }
    }
  }
}

// R * v, for checking where a rotation takes the coordinate axes.
Vec3d rotated(const Rotationd& R, const Vec3d& v) { return (Transformd{R, Vec3d::zero()} * v); }

void expectNear(const Vec3d& a, const Vec3d& b, double tol) {
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], tol) << "component " << i;
}

TEST(UrdfImport, AnAxisOppositeToTheMobilizersTurnsItHalfAboutAFixedAxis) {
  // A joint axis opposite to the mobilizer's own (z of a Pin or Planar, x of a Slider) has no
  // shortest rotation: the import turns the mobilizer half about x (z onto -z, x stays x: a Planar
  // mobilizer's in-plane x is the joint frame's) or about z (x onto -x). The MJCF import turns a
  // hinge about y instead (test_mjcf.cpp); both keep their frames as they are.
  const Vec3d x = Vec3d::unit(0), y = Vec3d::unit(1), z = Vec3d::unit(2);
  const Rotationd Rz = rotationTaking(z, -1.0 * z, 0), Rx = rotationTaking(x, -1.0 * x, 2);
  expectNear(rotated(Rz, x), x, 1e-15);
  expectNear(rotated(Rz, y), -1.0 * y, 1e-15);
  expectNear(rotated(Rz, z), -1.0 * z, 1e-15);
  expectNear(rotated(Rx, x), -1.0 * x, 1e-15);
  expectNear(rotated(Rx, y), -1.0 * y, 1e-15);
  expectNear(rotated(Rx, z), z, 1e-15);
  expectNear(rotated(rotationTaking(z, z, 0), x), x, 0);  // the same axis: no turn at all

  struct Case {
    const char* type;
    const char* axis;
    Vec3d xImage, yImage;  // where X_BM's rotation takes x and y
  };
  for (const Case& c : {Case{"revolute", "0 0 -1", x, -1.0 * y}, Case{"continuous", "0 0 -1", x, -1.0 * y},
                        Case{"planar", "0 0 -1", x, -1.0 * y}, Case{"prismatic", "-1 0 0", -1.0 * x, -1.0 * y}}) {
    SCOPED_TRACE(c.type);
    const std::string limit = std::string(c.type) == "revolute" || std::string(c.type) == "prismatic"
                                  ? "<limit effort=\"5\" velocity=\"1\"/>"
                                  : "";
    const std::string xml =
        "<robot name=\"r\"><link name=\"base\"/>"
        "<link name=\"arm\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"
        "<joint name=\"j\" type=\"" + std::string(c.type) + "\"><parent link=\"base\"/><child link=\"arm\"/>"
        "<axis xyz=\"" + c.axis + "\"/>" + limit + "</joint></robot>";
    const UrdfImport robot = importUrdf(xml, "inline.urdf");
    ASSERT_EQ(robot.bodies.size(), 2u);
    const BodyDesc& arm = robot.bodies[1];
    expectNear(rotated(arm.X_BM.R, x), c.xImage, 1e-15);
    expectNear(rotated(arm.X_BM.R, y), c.yImage, 1e-15);
    expectNear(rotated(arm.X_PF.R, x), c.xImage, 1e-15);
  }
}

// Inertia of a part about the origin of frame B, in B's axes: R I R^T + m (|c|^2 1 - c c^T).
Eigen::Matrix3d aboutOrigin(double m, const Eigen::Vector3d& c, const Eigen::Matrix3d& R, const Eigen::Matrix3d& I) {
  return R * I * R.transpose() + m * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
}

TEST(UrdfImport, FixedJointsWeldMassPropertiesExactly) {
  // Link "base": mass 2 with an inertial frame turned and moved; link "tool", welded to it by a
  // fixed joint with its own turned inertial frame. Expected: both parts' inertias about the base
  // origin, summed (computed here with Eigen, without the importer's helpers).
  const double m1 = 2, m2 = 1.5;
  const Vec3d c1 = {{0.1, -0.05, 0.2}}, r1 = {{0.2, 0.1, -0.3}};   // base inertial origin
  const Vec3d o = {{0.3, 0.2, -0.1}}, ro = {{0.4, -0.2, 0.9}};     // fixed joint origin
  const Vec3d c2 = {{0.05, 0.02, 0.01}}, r2 = {{0.3, 0.1, -0.2}};  // tool inertial origin
  Eigen::Matrix3d I1, I2;
  I1 << 0.3, 0.01, 0.02, 0.01, 0.4, 0.03, 0.02, 0.03, 0.5;
  I2 << 0.05, -0.01, 0.0, -0.01, 0.06, 0.005, 0.0, 0.005, 0.07;
  auto inertial = [&](double m, const Vec3d& c, const Vec3d& r, const Eigen::Matrix3d& I) {
    std::ostringstream os;
    os.precision(17);
    os << "<inertial><origin xyz=\"" << vec(c) << "\" rpy=\"" << vec(r) << "\"/><mass value=\"" << m
       << "\"/><inertia ixx=\"" << I(0, 0) << "\" iyy=\"" << I(1, 1) << "\" izz=\"" << I(2, 2) << "\" ixy=\""
       << I(0, 1) << "\" ixz=\"" << I(0, 2) << "\" iyz=\"" << I(1, 2) << "\"/></inertial>";
    return os.str();
  };
  const std::string xml = "<robot name=\"r\"><link name=\"base\">" + inertial(m1, c1, r1, I1) +
                          "</link><link name=\"tool\">" + inertial(m2, c2, r2, I2) +
                          "</link><joint name=\"weld\" type=\"fixed\"><parent link=\"base\"/><child link=\"tool\"/>"
                          "<origin xyz=\"" + vec(o) + "\" rpy=\"" + vec(ro) + "\"/></joint></robot>";
  const UrdfImport robot = importUrdf(xml, "inline.urdf");
  ASSERT_EQ(robot.bodies.size(), 1u);
  EXPECT_EQ(robot.links.at("tool").body, "base");
  const MassProperties& mp = robot.bodies[0].mass;

  const Eigen::Matrix3d R1 = toEigen(fromRpy(r1[0], r1[1], r1[2]).R), Ro = toEigen(fromRpy(ro[0], ro[1], ro[2]).R);
  const Eigen::Matrix3d R2 = Ro * toEigen(fromRpy(r2[0], r2[1], r2[2]).R);
  const Eigen::Vector3d p1 = toEigen(c1), p2 = toEigen(o) + Ro * toEigen(c2);
  const Eigen::Matrix3d expected = aboutOrigin(m1, p1, R1, I1) + aboutOrigin(m2, p2, R2, I2);
  const Eigen::Vector3d com = (m1 * p1 + m2 * p2) / (m1 + m2);

  EXPECT_NEAR(mp.mass, m1 + m2, 1e-15);
  EXPECT_TRUE(near(toEigen(mp.com), com, 1e-15));
  const Eigen::Matrix3d got = aboutOrigin(mp.mass, toEigen(mp.com), Eigen::Matrix3d::Identity(), toEigen(mp.inertia));
  EXPECT_TRUE(near(got, expected, 1e-14));
}

TEST(UrdfImport, CombiningMassProperties) {
  // Two 1 kg points at (+-1, 0, 0): center at 0, inertia diag(0, 2, 2).
  MassProperties a, b;
  a.mass = b.mass = 1;
  a.com = {{1, 0, 0}};
  b.com = {{-1, 0, 0}};
  const MassProperties c = combineMassProperties(a, b);
  EXPECT_EQ(c.mass, 2);
  EXPECT_EQ(c.com[0], 0);
  EXPECT_EQ(c.inertia.xx, 0);
  EXPECT_EQ(c.inertia.yy, 2);
  EXPECT_EQ(c.inertia.zz, 2);
  // Massless parts: no center of mass to average, inertias still add.
  MassProperties e, f;
  e.inertia = SymMat33d::diagonal(1, 2, 3);
  f.inertia = SymMat33d::diagonal(1, 1, 1);
  const MassProperties g = combineMassProperties(e, f);
  EXPECT_EQ(g.mass, 0);
  EXPECT_EQ(g.inertia.zz, 4);
}

TEST(InertiaRepair, ValidInertiasAreUnchanged) {
  Random rnd(601);
  for (int k = 0; k < 20; ++k) {
    const SymMat33d I = rnd.centralInertia(rnd.uniform(0.1, 3));
    const SymMat33d J = nearestValidInertia(I);
    EXPECT_EQ(J.xx, I.xx);
    EXPECT_EQ(J.xy, I.xy);
    EXPECT_EQ(J.yz, I.yz);
  }
}

TEST(InertiaRepair, ClosedFormProjections) {
  // Triangle violation: (0.01, 0.01, 0.05) projects onto the plane p0 + p1 = p2 along (1, 1, -1).
  const Mat33<double> R = Random(602).rotation().R;
  const SymMat33d J = nearestValidInertia(reexpressSym(R, SymMat33d::diagonal(0.01, 0.01, 0.05)));
  EXPECT_TRUE(near(toEigen(J), toEigen(reexpressSym(R, SymMat33d::diagonal(0.02, 0.02, 0.04))), 1e-15));
  // A negative principal moment is clamped to zero when that already satisfies the triangle.
  const SymMat33d K = nearestValidInertia(SymMat33d::diagonal(-0.1, 0.1, 0.1));
  EXPECT_TRUE(near(toEigen(K), toEigen(SymMat33d::diagonal(0, 0.1, 0.1)), 1e-15));
}

TEST(InertiaRepair, ResultIsValidAndNearest) {
  Random rnd(603);
  for (int k = 0; k < 200; ++k) {
    const SymMat33d I = rnd.symmetric();
    const SymMat33d J = nearestValidInertia(I);
    MassProperties mp;
    mp.mass = 1;
    mp.inertia = J;
    EXPECT_NO_THROW(validateMassProperties(mp, "repaired"));
    // No valid inertia is nearer (Frobenius norm).
    const double d = (toEigen(I) - toEigen(J)).norm();
    for (int t = 0; t < 50; ++t) {
      const SymMat33d Y = rnd.centralInertia(rnd.uniform(0.01, 2));
      EXPECT_LE(d, (toEigen(I) - toEigen(Y)).norm() + 1e-12);
    }
  }
}

TEST(InertiaRepair, ImportRepairsOnRequestAndWarnsPerLink) {
  const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/bad/triangle_inertia.urdf";
  EXPECT_THROW(importUrdfFile(path), InputError);
  UrdfOptions options;
  options.repairInertia = true;
  const UrdfImport robot = importUrdfFile(path, options);
  ASSERT_EQ(robot.warnings.size(), 1u);
  EXPECT_NE(robot.warnings[0].find("link 'arm': inertia repaired"), std::string::npos) << robot.warnings[0];
  EXPECT_TRUE(near(toEigen(robot.bodies[1].mass.inertia), toEigen(SymMat33d::diagonal(0.02, 0.02, 0.04)), 1e-15));
}

}  // namespace
}  // namespace lockstep::test
