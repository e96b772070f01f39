// Exact derivatives of a step and of an evaluation (Batch::linearize, physics/derivatives.h) against
// central differences of the engine's own step and evaluation, on random trees of every mobilizer
// with bushings and spring-dampers, sphere contacts (constraint solve and projection), joint stops
// on either side of engaging, PD actuators with control clamps, ground contacts and per-world
// parameters; RK4 and semi-implicit Euler; one world alone against the same world in a batch, bit
// for bit, in double and in float.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/backends/device.h"
#include "lockstep/engine/builtin_scenes.h"
#include "central_differences.h"
#include "random_tree.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

using Case = DerivativeCase;

void expectStepAndEvaluationMatch(const Case& c, double dt, double h, double tol, const std::string& label) {
  expectMatches(c, Linearization::Step, dt, Integrator::RK4, h, tol, (label + " RK4").c_str());
  expectMatches(c, Linearization::Step, dt, Integrator::SemiImplicitEuler, h, tol, (label + " Euler").c_str());
  expectMatches(c, Linearization::Evaluation, dt, Integrator::RK4, h, tol, (label + " evaluation").c_str());
}

Case randomCase(unsigned seed, int bodies, int bushings, int springs) {
  Random rnd(seed);
  RandomCase r = bushings + springs > 0 ? randomTreeWithElements(rnd, bodies, bushings, springs)
                                        : randomTree(rnd, bodies);
  return {r.model, r.q, r.u, r.tau, {}};
}

}  // namespace

// Every mobilizer type (random trees of 6 bodies), joint damping, random gravity and actions.
TEST(Linearize, RandomTreesMatchCentralDifferences) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const Case c = randomCase(seed, 6, 0, 0);
    expectStepAndEvaluationMatch(c, 1e-3, 1e-6, 1e-7, "tree " + std::to_string(seed));
  }
}

// Bushings and spring-dampers between random bodies; the derivative by parameters too.
TEST(Linearize, ForceElementsAndParametersMatchCentralDifferences) {
  for (unsigned seed = 11; seed <= 14; ++seed) {
    Case c = randomCase(seed, 5, 2, 2);
    c.params = {"gravity.y", "damping." + c.model->uNames()[0]};
    for (const std::string& name : Batch<double>(c.model, 1).parameterNames()) {
      if (name.rfind("bushing.", 0) == 0 && name.find(".stiffness.4") != std::string::npos) c.params.push_back(name);
      if (name.rfind("spring.", 0) == 0 && name.find(".free_length") != std::string::npos) c.params.push_back(name);
      if (name.rfind("body.b2.", 0) == 0 && (name.find(".mass") != std::string::npos ||
                                            name.find(".com.x") != std::string::npos ||
                                            name.find(".inertia.xy") != std::string::npos))
        c.params.push_back(name);
    }
    ASSERT_GE(c.params.size(), 7u);
    expectStepAndEvaluationMatch(c, 1e-3, 1e-6, 1e-7, "elements " + std::to_string(seed));
  }
}

// chain-7-seed: bushing, spring and a sphere contact, whose constraint solve and projection (to a
// tolerance far below the differences' step) are differentiated through.
TEST(Linearize, SphereContactConstraintsMatchCentralDifferences) {
  Case c;
  c.model = makeChain7Seed();
  {
    Batch<double> b(c.model, 1);
    b.setConstraintTolerance(1e-14, 50);
    b.setQ(0, chainInitialQ(7));
    b.assemble();
    ASSERT_EQ(b.status(0), 0);
    b.step(1e-3, 50);  // moving along the contact
    c.q = b.q(0);
    c.u = b.u(0);
  }
  c.tau.assign(c.model->nu(), 0.2);
  c.params = {"contact.contact.radius_on_B", "spring.spring.stiffness"};
  c.constraintTolerance = 1e-14;
  // The projection moves the differences' states back onto the manifold, so only directions along it
  // are seen by both; the exact derivative of the projected step is compared with differences of it.
  expectMatches(c, Linearization::Step, 1e-3, Integrator::RK4, 1e-6, 1e-6, "chain-7-seed RK4");
  expectMatches(c, Linearization::Evaluation, 1e-3, Integrator::RK4, 1e-6, 1e-7, "chain-7-seed evaluation");
}

namespace {

// Two links on Pins with a stop each and PD actuators with a control clamp on the first; a box on a
// Free mobilizer with four ground-contact spheres.
Case stopsActuatorsGroundCase(double firstAngle) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -9.81}});
  BodyDesc a = simpleBody("a");
  a.X_BM = Transformd::translation({{0, 0, 0.3}});
  mb.addBody(a);
  BodyDesc b = simpleBody("b", "a");
  b.X_PF = Transformd::translation({{0.2, 0, 0}});
  b.mobilizer = MobilizerType::Slider;
  mb.addBody(b);
  BodyDesc box = simpleBody("box");
  box.mobilizer = MobilizerType::Free;
  box.X_PF = Transformd::translation({{2, 0, 0}});
  mb.addBody(box);
  JointStopDesc s1{"a", -0.5, 0.5, 200, 0.5};
  JointStopDesc s2{"b", -0.1, 0.1, 1000, 0.2};
  mb.add(s1);
  mb.add(s2);
  ActuatorDesc act;
  act.coordinate = "a";
  act.mode = ActuatorMode::Position;
  act.kp = 30;
  act.kd = 2;
  act.gear = 2;
  act.controlLower = -1;
  act.controlUpper = 1;
  mb.add(act);
  GroundMaterial mat;
  mat.stiffness = 1e6;
  mat.dissipation = 1;
  mat.staticFriction = 0.9;
  mat.dynamicFriction = 0.6;
  mat.viscousFriction = 0.1;
  mat.transitionVelocity = 0.05;
  for (int k = 0; k < 4; ++k) {
    GroundContactDesc g;
    g.name = "corner" + std::to_string(k);
    g.body = "box";
    g.center = {{k % 2 ? 0.1 : -0.1, k / 2 ? 0.1 : -0.1, -0.05}};
    g.radius = 0.02;
    g.material = mat;
    mb.add(g);
  }
  Case c;
  c.model = mb.build();
  // The box tilted, two corners in the ground, sliding; the slider past its upper stop.
  const Quat tilt = expMap({0.05, 0.03, 0.2});
  c.q = {firstAngle, 0.12, tilt[0], tilt[1], tilt[2], tilt[3], 2.0, 0.1, 0.062};
  c.u = {0.7, -0.3, 0.4, -0.2, 0.3, 0.25, -0.15, -0.05};
  c.tau = {0.3, -0.2, 0, 0, 0, 0, 0, 0};
  c.params = {"ground.corner0.stiffness", "ground.corner1.dynamic_friction", "stop.a.stiffness", "actuator.a.kp"};
  return c;
}

}  // namespace

// A stop on either side of engaging, a PD actuator on its clamp's open side, ground contacts
// sliding and penetrating (Hertz, Hunt-Crossley and the Stribeck curve).
TEST(Linearize, StopsActuatorsAndGroundContactsMatchCentralDifferences) {
  const Case inside = stopsActuatorsGroundCase(0.3);   // the first stop not engaged
  const Case beyond = stopsActuatorsGroundCase(0.62);  // engaged
  for (const Case* c : {&inside, &beyond}) {
    const std::string label = c == &inside ? "stop free" : "stop engaged";
    expectMatches(*c, Linearization::Step, 1e-4, Integrator::RK4, 1e-7, 1e-6, (label + " RK4").c_str());
    expectMatches(*c, Linearization::Step, 1e-4, Integrator::SemiImplicitEuler, 1e-7, 1e-6, (label + " Euler").c_str());
    expectMatches(*c, Linearization::Evaluation, 1e-4, Integrator::RK4, 1e-7, 1e-6, (label + " evaluation").c_str());
  }
}

// The linearization of a world does not depend on the batch around it, bit for bit: world 0 of a
// batch of one against world 5 of a batch of 9 whose other worlds differ, in double and in float;
// and the worlds are not changed.
template <class T>
void expectAloneEqualsInBatch() {
  const Case c = randomCase(21, 5, 1, 1);
  const std::vector<std::string> params = {"gravity.z"};
  Batch<T> alone(c.model, 1);
  alone.setQ(0, c.q);
  alone.setU(0, c.u);
  alone.setTau(0, c.tau);
  alone.linearize(1e-3, Integrator::RK4, params);
  Batch<T> many(c.model, 9, Backend::Cpu, CpuOptions(2));
  Random rnd(5);
  for (std::int64_t w = 0; w < 9; ++w) {
    std::vector<double> u = c.u;
    for (double& x : u) x += w == 5 ? 0.0 : rnd.uniform();
    many.setQ(w, c.q);
    many.setU(w, u);
    many.setTau(w, c.tau);
  }
  many.setParameter(3, "gravity.z", -3.0);
  const std::vector<double> q5 = many.q(5), u5 = many.u(5);
  many.linearize(1e-3, Integrator::RK4, params);
  const std::vector<double> a = alone.jacobian(0), b = many.jacobian(5);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i]));
    EXPECT_EQ(a[i], b[i]) << i;  // bit for bit
  }
  EXPECT_EQ(many.q(5), q5);
  EXPECT_EQ(many.u(5), u5);
}
TEST(Linearize, OneWorldAloneEqualsTheSameWorldInABatchDouble) { expectAloneEqualsInBatch<double>(); }
TEST(Linearize, OneWorldAloneEqualsTheSameWorldInABatchFloat) { expectAloneEqualsInBatch<float>(); }

// The CPU backend's two dual forms, packs of worlds (Dual<Pack<T>>, models without sphere contacts)
// and one world at a time (Dual<T>), agree to rounding; the central-difference tests above check the
// packs (their default) on the models without contacts and the scalar duals on chain-7-seed.
TEST(Linearize, PacksAgreeWithOneWorldAtATime) {
  const Case c = randomCase(31, 6, 2, 2);
  std::vector<double> J[2];
  for (int lanes = 0; lanes < 2; ++lanes) {
    Batch<double> b(c.model, 5, Backend::Cpu, CpuOptions(1, lanes == 1));
    for (std::int64_t w = 0; w < 5; ++w) place(b, w, c, c.q, c.u, c.tau);
    b.linearize(1e-3, Integrator::RK4, {"gravity.x"});
    J[lanes] = b.jacobian(4);
  }
  double scale = 1;
  for (double x : J[0]) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 0; i < J[0].size(); ++i) EXPECT_NEAR(J[0][i], J[1][i], 1e-12 * scale) << i;
}

// The float instance's derivatives are the double's to float accuracy.
TEST(Linearize, FloatAgreesWithDouble) {
  const Case c = randomCase(3, 4, 1, 1);
  Batch<float> f(c.model, 1);
  Batch<double> d(c.model, 1);
  f.setQ(0, c.q), f.setU(0, c.u), f.setTau(0, c.tau);
  d.setQ(0, c.q), d.setU(0, c.u), d.setTau(0, c.tau);
  f.linearize(1e-3, Integrator::RK4);
  d.linearize(1e-3, Integrator::RK4);
  const std::vector<double> a = f.jacobian(0), b = d.jacobian(0);
  double scale = 1;
  for (double x : b) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * scale) << i;
}

// The blocks A, B and C are the Jacobian's columns; the raw view is world innermost.
TEST(Linearize, BlocksAndViewAreTheJacobiansColumns) {
  const Case c = randomCase(4, 3, 0, 0);
  Batch<double> b(c.model, 2);
  for (std::int64_t w = 0; w < 2; ++w) place(b, w, c, c.q, c.u, c.tau);
  b.linearize(1e-3, Integrator::RK4, {"gravity.x", "gravity.y"});
  const int nu = c.model->nu(), columns = 3 * nu + 2, rows = 2 * nu;
  const std::vector<double> all = b.jacobian(1);
  const std::vector<double> A = b.jacobian(1, Batch<double>::JacobianBlock::State);
  const std::vector<double> B = b.jacobian(1, Batch<double>::JacobianBlock::Action);
  const std::vector<double> C = b.jacobian(1, Batch<double>::JacobianBlock::Parameters);
  ASSERT_EQ(A.size(), std::size_t(rows * 2 * nu));
  ASSERT_EQ(B.size(), std::size_t(rows * nu));
  ASSERT_EQ(C.size(), std::size_t(rows * 2));
  const FieldView v = b.jacobianView(MemorySpace::Host);
  EXPECT_EQ(v.components, rows * columns);
  const double* data = static_cast<const double*>(v.data);
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < columns; ++k) {
      const double x = all[std::size_t(r) * columns + k];
      EXPECT_EQ(data[(r * columns + k) * v.componentStride + 1 * v.worldStride], x);
      if (k < 2 * nu) EXPECT_EQ(A[std::size_t(r) * 2 * nu + k], x);
      else if (k < 3 * nu) EXPECT_EQ(B[std::size_t(r) * nu + k - 2 * nu], x);
      else EXPECT_EQ(C[std::size_t(r) * 2 + k - 3 * nu], x);
    }
  }
  // With zero step the state maps to itself: A = I (position rows by dq, speed rows by u) at dt -> 0.
  b.linearize(1e-12, Integrator::RK4);
  const std::vector<double> A0 = b.jacobian(0, Batch<double>::JacobianBlock::State);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < 2 * nu; ++k) EXPECT_NEAR(A0[std::size_t(r) * 2 * nu + k], r == k ? 1.0 : 0.0, 1e-9);
}

// A flagged world gets NaN, and so does one whose step fails; the others go on; bad names and reads
// before a linearization are refused.
TEST(Linearize, FlaggedAndFailingWorldsGetNaNAndBadRequestsAreRefused) {
  const Case c = randomCase(8, 3, 0, 0);
  Batch<double> b(c.model, 3);
  for (std::int64_t w = 0; w < 3; ++w) place(b, w, c, c.q, c.u, c.tau);
  EXPECT_THROW(b.jacobian(0), std::logic_error);
  std::vector<double> fast = c.u;
  fast[0] = 1e200;  // its step overflows
  b.setU(1, fast);
  b.linearize(1e-3);
  EXPECT_EQ(b.status(1), 0);  // the world itself is not changed
  for (double x : b.jacobian(1)) EXPECT_TRUE(std::isnan(x));
  for (double x : b.jacobian(0)) EXPECT_TRUE(std::isfinite(x));
  for (double x : b.jacobian(2)) EXPECT_TRUE(std::isfinite(x));
  EXPECT_THROW(b.linearize(1e-3, Integrator::RK4, {"gravity.w"}), std::invalid_argument);
  EXPECT_THROW(b.linearize(1e-3, Integrator::RK4, {"gravity.x", "gravity.x"}), std::invalid_argument);
  EXPECT_THROW(b.linearize(-1.0), std::invalid_argument);
  EXPECT_THROW(b.jacobian(3), std::out_of_range);
  // A world flagged at the start (u not finite in float).
  Batch<float> f(c.model, 2);
  std::vector<double> huge = c.u;
  huge[0] = 1e300;
  f.setU(0, huge);
  ASSERT_NE(f.status(0), 0);
  f.linearizeEvaluation();
  for (double x : f.jacobian(0)) EXPECT_TRUE(std::isnan(x));
  for (double x : f.jacobian(1)) EXPECT_TRUE(std::isfinite(x));
}

}  // namespace lockstep::test

namespace lockstep::test {

// The CUDA kernel (one thread per world, its dual world strided across worlds) against the CPU's
// duals: the same per-world code, so the Jacobians agree to rounding (the device fuses
// multiply-adds); with and without sphere contacts; a flagged world gets NaN on both.
TEST(Linearize, CudaMatchesCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  for (int model = 0; model < 2; ++model) {
    Case c = model == 0 ? randomCase(41, 6, 2, 2) : Case{makeChain7Seed(), chainInitialQ(7),
                                                       std::vector<double>(7, 0.0), std::vector<double>(7, 0.1), {}};
    const int n = 300;
    Batch<double> cpu(c.model, n, Backend::Cpu), gpu(c.model, n, Backend::Cuda);
    for (Batch<double>* b : {&cpu, &gpu}) {
      for (int w = 0; w < n; ++w) {
        std::vector<double> u = c.u;
        for (double& x : u) x += 0.001 * w;
        place(*b, w, c, c.q, u, c.tau);
      }
      b->setParameter(17, "gravity.y", -3.0);
      std::vector<double> fast = c.u;
      fast[0] = 1e200;
      b->setU(5, fast);
      b->upload();
      if (model == 1) b->assemble();
      b->linearize(1e-3, Integrator::RK4, {"gravity.y"});
    }
    for (int w : {0, 17, 150, 299}) {
      const std::vector<double> a = gpu.jacobian(w), b = cpu.jacobian(w);
      double scale = 1;
      for (double x : b) scale = std::max(scale, std::abs(x));
      for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-10 * scale) << "world " << w << " " << i;
    }
    for (double x : gpu.jacobian(5)) EXPECT_TRUE(std::isnan(x));
  }
}

}  // namespace lockstep::test

namespace lockstep::test {

// A linearization in pieces of worlds (as Python runs a large batch) equals one of every world, bit
// for bit; a piece keeps the other worlds' Jacobians of the same shape, and a new shape starts
// them as NaN; a range outside the batch is refused.
TEST(Linearize, PiecesOfWorldsEqualTheWhole) {
  const Case c = randomCase(51, 4, 1, 1);
  Batch<double> whole(c.model, 11), pieces(c.model, 11);
  for (Batch<double>* b : {&whole, &pieces})
    for (std::int64_t w = 0; w < 11; ++w) {
      std::vector<double> u = c.u;
      u[0] += 0.01 * w;
      place(*b, w, c, c.q, u, c.tau);
    }
  whole.linearize(1e-3, Integrator::RK4, {"gravity.z"});
  pieces.linearize(1e-3, Integrator::RK4, {"gravity.z"}, {0, 3});
  for (double x : pieces.jacobian(5)) EXPECT_TRUE(std::isnan(x));
  pieces.linearize(1e-3, Integrator::RK4, {"gravity.z"}, {3, 5});
  pieces.linearize(1e-3, Integrator::RK4, {"gravity.z"}, {8, -1});
  for (std::int64_t w = 0; w < 11; ++w) EXPECT_EQ(pieces.jacobian(w), whole.jacobian(w)) << w;
  EXPECT_THROW(pieces.linearize(1e-3, Integrator::RK4, {"gravity.z"}, {10, 2}), std::out_of_range);
  EXPECT_THROW(pieces.linearize(1e-3, Integrator::RK4, {"gravity.z"}, {-1, 2}), std::out_of_range);
}

namespace {

// The free box of softBoxOnPlane (test_util.h), pressed 2 mm into the plane and sliding.
Case softBoxCase(bool elliptic) {
  Case c;
  c.model = softBoxOnPlane(elliptic);
  const Quat tilt = expMap({0.01, -0.02, 0.3});
  c.q = {tilt[0], tilt[1], tilt[2], tilt[3], 0.1, -0.2, 0.048};
  c.u = {0.1, -0.05, 0.4, 0.6, -0.3, -0.02};
  c.tau = {0.1, -0.2, 0.05, 0.3, -0.1, 0.2};
  return c;
}

}  // namespace

// The CUDA kernel's linearizations under MuJoCo's law (linearizeKernel<*, 2>, the soft solve's
// tangents by the implicit function theorem) equal the CPU's to 1e-10 of each world's largest entry:
// a box sliding on a plane with a pyramid and with an elliptic cone, each world at its own speed,
// RK4 and Euler, by gravity too. (The derivatives themselves are checked against central differences
// and MuJoCo in tests/frontend/test_soft_constraints.cpp.)
TEST(Linearize, SoftContactsCudaMatchesCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  for (bool elliptic : {false, true}) {
    const Case c = softBoxCase(elliptic);
    const int n = 256;
    for (Integrator integrator : {Integrator::RK4, Integrator::SemiImplicitEuler}) {
      Batch<double> cpu(c.model, n, Backend::Cpu), gpu(c.model, n, Backend::Cuda);
      for (Batch<double>* b : {&cpu, &gpu}) {
        for (int w = 0; w < n; ++w) {
          std::vector<double> u = c.u;
          for (double& x : u) x *= 1 + 0.01 * w;
          place(*b, w, c, c.q, u, c.tau);
        }
        b->upload();
        b->linearize(0.005, integrator, {"gravity.z"});
      }
      for (int w : {0, 1, 100, 255}) {
        const std::vector<double> a = gpu.jacobian(w), b = cpu.jacobian(w);
        double scale = 1;
        for (double x : b) scale = std::max(scale, std::abs(x));
        for (std::size_t i = 0; i < a.size(); ++i)
          EXPECT_NEAR(a[i], b[i], 1e-10 * scale) << (elliptic ? "cone" : "pyramid") << " world " << w << " " << i;
      }
    }
  }
}

// The same box on the CPU: its Jacobians against central differences (the model built without MJCF,
// as the CUDA test above takes it).
TEST(Linearize, SoftContactsMatchCentralDifferences) {
  for (bool elliptic : {false, true}) {
    Case c = softBoxCase(elliptic);
    c.params = {"gravity.z"};
    {  // corners in the plane: points with rows
      Batch<double> b(c.model, 1);
      place(b, 0, c, c.q, c.u, c.tau);
      b.evaluate();
      const FieldView points = b.field("softContact", MemorySpace::Host);  // active first, point by point
      const std::int64_t width = points.components / b.sizes().nSoftPoints;
      int active = 0;
      for (std::int64_t k = 0; k < b.sizes().nSoftPoints; ++k)
        active += static_cast<const double*>(points.data)[width * k] > 0.5;
      EXPECT_GE(active, 2);
    }
    const std::string label = elliptic ? "soft box, cone" : "soft box, pyramid";
    expectMatches(c, Linearization::Step, 0.005, Integrator::RK4, 1e-6, 1e-6, (label + " RK4").c_str());
    expectMatches(c, Linearization::Step, 0.005, Integrator::SemiImplicitEuler, 1e-6, 1e-6,
                  (label + " Euler").c_str());
  }
}

}  // namespace lockstep::test
