// Helpers shared by the tests: seeded random values and conversions to Eigen, the reference.
#pragma once

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/model.h"

namespace lockstep::test {

// A builder of one solid ball, body and ground contact both named "ball", of mass m and radius R on
// a mobilizer from Ground (Translation: it slides like a block; Free: it rolls), against the
// half-space below the plane through the origin with outward normal n. Gravity -9.81 z.
inline ModelBuilder ballOnGround(MobilizerType mobilizer, double m, double R, const Vec3d& n,
                                 const GroundMaterial& material) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -9.81}});
  BodyDesc b;
  b.name = "ball";
  b.mobilizer = mobilizer;
  b.mass.mass = m;
  b.mass.inertia = SymMat33d::diagonal(0.4 * m * R * R, 0.4 * m * R * R, 0.4 * m * R * R);
  mb.addBody(b);
  GroundContactDesc c;
  c.name = "ball";
  c.body = "ball";
  c.radius = R;
  c.planeNormal = n;
  c.material = material;
  mb.add(c);
  return mb;
}

using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec6 = Eigen::Matrix<double, 6, 1>;

class Random {
 public:
  explicit Random(unsigned seed) : gen_(seed) {}
  double uniform(double lo = -1.0, double hi = 1.0) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  Vec3<double> vec3(double scale = 1.0) { return {{scale * uniform(), scale * uniform(), scale * uniform()}}; }
  Rotation<double> rotation() {
    double q[4];
    double n = 0;
    do {
      n = 0;
      for (double& x : q) { x = uniform(); n += x * x; }
    } while (n < 1e-3 || n > 1.0);
    n = std::sqrt(n);
    return Rotation<double>::fromQuaternion(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
  }
  Transform<double> transform(double scale = 1.0) { return {rotation(), vec3(scale)}; }
  SpatialVec<double> spatialVec(double scale = 1.0) { return {vec3(scale), vec3(scale)}; }
  SymMat33<double> symmetric() { return {uniform(), uniform(), uniform(), uniform(), uniform(), uniform()}; }
  Mat33<double> mat33() {
    Mat33<double> m;
    for (auto& row : m.m)
      for (double& x : row) x = uniform();
    return m;
  }
  // A physically valid central inertia: principal moments obeying the triangle inequality, rotated.
  SymMat33<double> centralInertia(double mass) {
    double a = uniform(0.2, 1.0), b = uniform(0.2, 1.0), c = uniform(std::abs(a - b) + 0.05, a + b - 0.05);
    const Mat33<double> R = rotation().R;
    return reexpressSym(R, SymMat33<double>::diagonal(mass * a, mass * b, mass * c));
  }
  SpatialInertia<double> spatialInertia() {
    const double m = uniform(0.5, 3.0);
    return SpatialInertia<double>::fromCentral(m, vec3(0.5), centralInertia(m));
  }
  ArticulatedInertia<double> articulatedInertia() {
    // A sum of a rigid inertia and a random symmetric positive semidefinite part: all 21 numbers
    // independent.
    ArticulatedInertia<double> P = ArticulatedInertia<double>::fromRigid(spatialInertia());
    Eigen::Matrix<double, 6, 6> A;
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) A(i, j) = uniform();
    const Eigen::Matrix<double, 6, 6> S = A * A.transpose();
    Mat33<double> F;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) F.m[i][j] = S(i, j + 3);
    P.J += SymMat33<double>{S(0, 0), S(1, 1), S(2, 2), S(0, 1), S(0, 2), S(1, 2)};
    P.M += SymMat33<double>{S(3, 3), S(4, 4), S(5, 5), S(3, 4), S(3, 5), S(4, 5)};
    P.F = P.F + F;
    return P;
  }
  std::mt19937& engine() { return gen_; }

 private:
  std::mt19937 gen_;
};

inline Eigen::Vector3d toEigen(const Vec3<double>& v) { return {v[0], v[1], v[2]}; }
inline Eigen::Matrix3d toEigen(const Mat33<double>& m) {
  Eigen::Matrix3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = m(i, j);
  return r;
}
inline Eigen::Matrix3d toEigen(const SymMat33<double>& s) { return toEigen(s.toMat33()); }
inline Vec6 toEigen(const SpatialVec<double>& v) {
  Vec6 r;
  for (int i = 0; i < 6; ++i) r(i) = v[i];
  return r;
}
inline Mat6 toEigen(const SpatialMat<double>& m) {
  Mat6 r;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) r(i, j) = m(i, j);
  return r;
}
inline Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d r;
  r << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return r;
}

// A 1 kg body with unit central inertia on a Pin (BodyDesc's default) to `parent`.
inline BodyDesc simpleBody(const std::string& name, const std::string& parent = "ground") {
  BodyDesc b;
  b.name = name;
  b.parent = parent;
  b.mass.mass = 1;
  b.mass.inertia = SymMat33d::diagonal(1, 1, 1);
  return b;
}

// MuJoCo's law without MJCF: a free box (half-sizes 0.1, 0.15, 0.05; simpleBody's mass) over the plane
// z = 0 (a plane contact, soft_constraints.h) under a pyramid or an elliptic cone, friction 0.8,
// impratio 2, a 2 mm margin, at MuJoCo's 5 ms step. With q = (a quaternion, 0.1, -0.2, 0.048) it is
// pressed 2 mm into the plane.
inline std::shared_ptr<const Model> softBoxOnPlane(bool elliptic) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -9.81}});
  BodyDesc box = simpleBody("box");
  box.mobilizer = MobilizerType::Free;
  mb.addBody(box);
  PlaneContactDesc contact;
  contact.name = "box";
  contact.body = "box";
  contact.shape = kShapeBox;
  contact.size = {{0.1, 0.15, 0.05}};
  contact.elliptic = elliptic;
  contact.friction = 0.8;
  contact.impratio = 2;
  contact.timestep = 0.005;
  contact.margin = 0.002;
  contact.invweight = 0.5;
  mb.add(contact);
  return mb.build();
}

// A 1 kg ball of radius rb (solid: inertia 0.4 m rb^2) on a Free mobilizer, in gravity -9.81 z,
// rolling without slip on a fixed ball of radius rf at Ground's origin.
inline std::shared_ptr<const Model> rollingBallModel(double rb, double rf) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -9.81}});
  BodyDesc ball;
  ball.name = "ball";
  ball.mobilizer = MobilizerType::Free;
  ball.mass.mass = 1.0;
  const double I = 0.4 * 1.0 * rb * rb;
  ball.mass.inertia = SymMat33d::diagonal(I, I, I);
  mb.addBody(ball);
  SphereContactDesc c;
  c.bodyF = "ground";
  c.radiusOnF = rf;
  c.bodyB = "ball";
  c.radiusOnB = rb;
  c.enforceRolling = true;
  mb.add(c);
  return mb.build();
}

// The chain-7 check value of docs/scenes.md: udot[0] summed over the batch's worlds, world k at q0
// with its first angle raised by 1e-9 k (u = 0). Simbody 3.7 and MuJoCo 2.2.2 give 2.11259e+06 for
// 200000 worlds from q = 0.3.
inline double chain7CheckSum(Batch<double>& batch, const std::vector<double>& q0) {
  for (std::int64_t k = 0; k < batch.numWorlds(); ++k) {
    std::vector<double> q = q0;
    q[0] += 1e-9 * double(k);
    batch.setQ(k, q);
  }
  batch.evaluate();
  double sum = 0;
  for (std::int64_t k = 0; k < batch.numWorlds(); ++k) sum += batch.udot(k)[0];
  return sum;
}

// |a - b| <= tol * max(1, |b|), elementwise on the infinity norm: the relative tolerance used by
// every comparison against a reference in the tests.
template <class A, class B>
::testing::AssertionResult near(const A& a, const B& b, double tol) {
  const double scale = std::max(1.0, b.cwiseAbs().maxCoeff());
  const double err = (a - b).cwiseAbs().maxCoeff();
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "difference " << err << " exceeds " << tol << " * " << scale
                                       << "\n got:\n" << a << "\n expected:\n" << b;
}

// The message of the first exception of the types E... that f throws ("" when it throws none;
// an exception of another type propagates, and fails the test).
template <class F>
std::string messageOf(F&& f) {
  f();
  return "";
}
template <class E, class... More, class F>
std::string messageOf(F&& f) {
  try {
    return messageOf<More...>(std::forward<F>(f));
  } catch (const E& e) {
    return e.what();
  }
}

}  // namespace lockstep::test

// Expects `statement` to throw one of the exception types listed after `text`, with `text` in its message.
#define EXPECT_ERROR_CONTAINS_OF(statement, text, ...)                                              \
  do {                                                                                              \
    const std::string message_ = ::lockstep::test::messageOf<__VA_ARGS__>([&] { statement; });     \
    EXPECT_NE(message_.find(text), std::string::npos) << "got: " << message_;                       \
  } while (0)
