// The compliant law's implicit step (soft_constraints.h, "THE COMPLIANT LAW"; docs/contact-laws.md):
// Hunt and Crossley's contact and the stops as convex implicit constraints, stepped with
// semi-implicit Euler at 1, 5 and 10 ms. The block's forces are minus the gradient of a convex cost
// whose Hessian is exact; closed forms (Hertz's static penetration, a stop's static deflection, a
// block holding below mu and sliding at g (sin t - mu cos t) above it, a ball rolling at
// g sin t / (1 + I / (m r^2)), a box resting without creep); energy that never grows; derivatives
// against central differences; a world alone against the same world in a batch, bit for bit; the
// refusals.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <functional>

#include "central_differences.h"
#include "lockstep/backends/device.h"
#include "lockstep/engine/batch.h"
#include "lockstep/physics/soft_constraints.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

constexpr double kG = 9.81;
const double kSteps[] = {1e-3, 5e-3, 1e-2};

// Hertz's force as Simbody's contact gives it without smoothing: K x^(3/2), K = (4/3) k sqrt(R k),
// k = E^(2/3) / 2.
double hertzK(double E, double R) {
  const double k = 0.5 * std::pow(E, 2.0 / 3.0);
  return 4.0 / 3.0 * k * std::sqrt(R * k);
}

GroundMaterial material(double E, double c, double mu, double vs) {
  GroundMaterial m;
  m.stiffness = E;
  m.dissipation = c;
  m.staticFriction = m.dynamicFriction = mu;
  m.transitionVelocity = vs;
  return m;
}

// A ball of mass m and radius R on a mobilizer (Translation: it slides like a block; Free: it rolls),
// against the plane through the origin with outward normal n, under the compliant law at step dt.
std::shared_ptr<const Model> ball(MobilizerType mobilizer, double m, double R, const Vec3d& n,
                                  const GroundMaterial& mat, double dt) {
  ModelBuilder mb = ballOnGround(mobilizer, m, R, n, mat);
  mb.compliantConstraints(dt);
  return mb.build();
}

// A box of 1 kg, half-sizes 0.1, 0.08, 0.05, free, with a sphere of radius 1 cm at each corner,
// against the plane with outward normal n.
std::shared_ptr<const Model> box(const Vec3d& n, double dt) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -kG}});
  BodyDesc b;
  b.name = "box";
  b.mobilizer = MobilizerType::Free;
  b.mass.mass = 1;
  b.mass.inertia = SymMat33d::diagonal(1.0 / 3 * (0.08 * 0.08 + 0.05 * 0.05), 1.0 / 3 * (0.1 * 0.1 + 0.05 * 0.05),
                                       1.0 / 3 * (0.1 * 0.1 + 0.08 * 0.08));
  mb.addBody(b);
  int k = 0;
  for (double x : {-0.1, 0.1})
    for (double y : {-0.08, 0.08})
      for (double z : {-0.05, 0.05}) {
        GroundContactDesc c;
        c.name = "corner" + std::to_string(k++);
        c.body = "box";
        c.center = {{x, y, z}};
        c.radius = 0.01;
        c.planeNormal = n;
        c.material = material(1e8, 2, 0.6, 1e-4);
        mb.add(c);
      }
  mb.compliantConstraints(dt);
  return mb.build();
}

// Component c of world w's field.
double component(Batch<double>& batch, const char* field, int c, std::int64_t w = 0) {
  const FieldView f = batch.field(field, MemorySpace::Host);
  return static_cast<const double*>(f.data)[c * f.componentStride + w * f.worldStride];
}

// Under both approximations of friction (lagged, similar) the block's forces are minus the gradient
// of a convex cost: its Hessian equals the differences of the forces, is symmetric and positive
// semidefinite, and the friction stays within mu times the normal force (lagged: the step's
// start's); at rest (x = 0) the normal force is K x0^p.
TEST(CompliantLaw, BlockForcesAreMinusTheGradientOfAConvexCost) {
  for (double lagged : {0.0, 1.0}) {
    const double C[7] = {2.0, 0.3, 0.4, lagged, 0.6, 0.05, 0.7};  // A, c, delta, lagged, mu, eps, F0
    double worst = 0;
    for (int n : {1, 3}) {
      for (int trial = 0; trial < 300; ++trial) {
        double x[3];
        for (int k = 0; k < 3; ++k) x[k] = std::sin(1.3 * trial + 2.1 * k + n) * (k == 0 ? 0.6 : 0.3);
        SoftConeForce<double> b, plus, minus;
        softCompliantForceInto<double>(x, C, n, true, &b);
        Eigen::MatrixXd H(n, n);
        for (int j = 0; j < n; ++j) {
          double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
          const double e = 1e-6;
          xp[j] += e;
          xm[j] -= e;
          softCompliantForceInto<double>(xp, C, n, true, &plus);
          softCompliantForceInto<double>(xm, C, n, true, &minus);
          for (int i = 0; i < n; ++i) {
            H(i, j) = b.H[n * i + j];
            worst = std::max(worst, std::abs(-(plus.force[i] - minus.force[i]) / (2 * e) - b.H[n * i + j]));
            EXPECT_EQ(b.H[n * i + j], b.H[n * j + i]);
          }
        }
        EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(H).eigenvalues().minCoeff(), -1e-12) << trial;
        EXPECT_GE(b.force[0], 0);
        // Coulomb's bound: mu times the normal force (lagged: the step's start's, F0).
        if (n == 3) {
          EXPECT_LE(std::hypot(b.force[1], b.force[2]), C[4] * (lagged ? C[6] : b.force[0]) * (1 + 1e-15));
        }
      }
      const double rest[3] = {0, 0, 0};
      SoftConeForce<double> b;
      softCompliantForceInto<double>(rest, C, n, true, &b);
      EXPECT_NEAR(b.force[0], C[0] * std::pow(C[1], n == 3 ? 1.5 : 1.0), 1e-15);
    }
    // (Differences of step 1e-6 next to the force's kinks, where (c - zeta)^(1/2) turns steep, err by
    // a few 1e-7; a wrong term errs by its size, 0.1 to 1 here.)
    std::printf("%s: largest |H - differences| %.3g\n", lagged ? "lagged" : "similar", worst);
    EXPECT_LT(worst, 1e-6);
  }
}

// The pendulum of StopHoldsAPendulumAtItsStaticDeflection: 1 kg at 0.5 m on a Pin turning about
// Ground's -y (q > 0 lifts it), with a stop at `bound` under the compliant law.
std::shared_ptr<const Model> pendulumOnAStop(double bound, double k, double d, double dt) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -kG}});
  BodyDesc b;
  b.name = "rod";
  b.mobilizer = MobilizerType::Pin;  // about z of F, which is Ground's -y
  b.X_PF = {Rotationd::aboutAxis(0, 0.5 * M_PI), Vec3d::zero()};
  b.mass.mass = 1;
  b.mass.com = {{0.5, 0, 0}};
  b.mass.inertia = SymMat33d::diagonal(1e-4, 1e-4, 1e-4);
  mb.addBody(b);
  JointStopDesc stop;
  stop.coordinate = "rod";
  stop.lower = bound;
  stop.upper = 10;
  stop.stiffness = k;
  stop.dissipation = d;
  mb.add(stop);
  mb.compliantConstraints(dt);
  return mb.build();
}

// The forces of a solve are the law's at the velocities the step ends with (u + h qacc): a sliding
// ball's normal force K (x0 - h z)^(3/2) (1 - d z) with d = 3c/2 and its friction
// -mu N v_t / sqrt(|v_t|^2 + vs^2), where (lagged) z = vn and N = K x0^(3/2) (1 - d vn0), the force
// at the step's start, or (similar) z = vn - mu (sqrt(|v_t|^2 + vs^2) - vs) and N the normal force;
// a stop's k (x0 - h v) (1 - d v), v the speed away from its bound.
TEST(CompliantLaw, ForcesAreHuntCrossleysAtTheStepsEnd) {
  const double h = 5e-3;
  for (bool lagged : {true, false}) {
    const double R = 0.05, E = 1e7, c = 2, d = 1.5 * c, mu = 0.5, vs = 1e-3, x0 = 5e-4, K = hertzK(E, R);
    const double u0[3] = {0.3, -0.1, -0.2};
    const auto model = ball(MobilizerType::Translation, 1, R, {{0, 0, 1}}, material(E, c, mu, vs), h);
    Batch<double> batch(model, 1);
    batch.setParameter(0, "plane_contact.ball.lagged", lagged ? 1 : 0);
    batch.setQ(0, {0, 0, R - x0});
    batch.setU(0, {u0[0], u0[1], u0[2]});
    batch.evaluate();
    double v[3];
    for (int i = 0; i < 3; ++i) v[i] = u0[i] + h * batch.udot(0)[i];
    const double r = std::sqrt(v[0] * v[0] + v[1] * v[1] + vs * vs);
    const double z = lagged ? v[2] : v[2] - mu * (r - vs);
    const double F = K * std::pow(x0 - h * z, 1.5) * (1 - d * z);
    const double N = lagged ? K * std::pow(x0, 1.5) * (1 - d * u0[2]) : F;
    std::printf("%s: normal force %.12g, the law's at the step's end %.12g\n", lagged ? "lagged" : "similar",
                component(batch, "softContact", 8), F);
    EXPECT_NEAR(component(batch, "softContact", 8), F, 1e-9 * F);
    EXPECT_NEAR(component(batch, "softContact", 11), -mu * N * v[0] / r, 1e-9 * F);  // Ground x
    EXPECT_NEAR(component(batch, "softContact", 12), -mu * N * v[1] / r, 1e-9 * F);  // Ground y
    EXPECT_NEAR(batch.udot(0)[2], F - kG, 1e-9 * F);                                  // m = 1
  }
  {
    const double bound = -0.5, k = 300, d = 0.4, x0 = 0.01;
    const auto model = pendulumOnAStop(bound, k, d, h);
    Batch<double> batch(model, 1);
    batch.setQ(0, {bound - x0});
    batch.setU(0, {-1.5});
    batch.evaluate();
    const double v = batch.u(0)[0] + h * batch.udot(0)[0];  // away from the lower bound
    const double F = k * (x0 - h * v) * (1 - d * v);
    std::printf("stop: force %.12g, the law's at the step's end %.12g\n", component(batch, "softLimitForce", 0), F);
    EXPECT_NEAR(component(batch, "softLimitForce", 0), F, 1e-9 * F);
  }
}

// A ball set on the plane settles where Hertz's force carries its weight, at every step: at rest the
// implicit force is K x0^(3/2) exactly.
TEST(CompliantLaw, BallSettlesAtHertzsStaticPenetrationAtEveryStep) {
  const double m = 2, R = 0.1;
  const double E = 1e8, K = hertzK(E, R);
  const double mg = m * kG, xHertz = std::pow(mg / K, 2.0 / 3.0);
  for (double dt : kSteps) {
    const auto model = ball(MobilizerType::Translation, m, R, {{0, 0, 1}}, material(E, 2, 0.5, 1e-4), dt);
    Batch<double> batch(model, 1);
    batch.setQ(0, {0, 0, R});
    batch.step(dt, static_cast<int>(std::lround(2.0 / dt)), Integrator::SemiImplicitEuler);
    ASSERT_EQ(batch.status(0), kStatusOk) << dt;
    batch.evaluate();
    const double penetration = R - batch.q(0)[2];
    std::printf("dt %g: penetration %.12g, Hertz %.12g; Newton iterations %g\n", dt, penetration, xHertz,
                component(batch, "softSolver", 0));
    EXPECT_NEAR(penetration, xHertz, 1e-9 * xHertz) << dt;
    EXPECT_NEAR(batch.u(0)[2], 0, 1e-9) << dt;
    EXPECT_EQ(component(batch, "softContact", 0), 1);                  // active
    EXPECT_NEAR(component(batch, "softContact", 8), mg, 1e-8 * mg);    // normal force
    EXPECT_NEAR(component(batch, "softContact", 13), mg, 1e-8 * mg);   // its z in Ground
  }
}

// A ball dropped from half a metre, with and without dissipation, sliding sideways: its energy
// (kinetic, gravity's, Hertz's elastic 2/5 K x^(5/2)) never grows from one step to the next, it
// never sinks through (its penetration stays below a fifth of its radius), and it comes to rest.
TEST(CompliantLaw, DroppedBallNeverGainsEnergy) {
  const double m = 0.5, R = 0.05, E = 1e8, K = hertzK(E, R);
  for (double c : {0.0, 2.0}) {
    for (double dt : kSteps) {
      const auto model = ball(MobilizerType::Translation, m, R, {{0, 0, 1}}, material(E, c, 0.5, 1e-4), dt);
      Batch<double> batch(model, 1);
      batch.setQ(0, {0, 0, 0.5});
      batch.setU(0, {0.3, 0, 0});
      auto energy = [&] {
        const std::vector<double> q = batch.q(0), u = batch.u(0);
        const double x = std::max(0.0, R - q[2]);
        return 0.5 * m * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) + m * kG * q[2] + 0.4 * K * std::pow(x, 2.5);
      };
      const double e0 = energy();
      double previous = e0, deepest = 0, rise = 0;
      const int steps = static_cast<int>(std::lround(3.0 / dt));
      for (int k = 0; k < steps; ++k) {
        batch.step(dt, 1, Integrator::SemiImplicitEuler);
        ASSERT_EQ(batch.status(0), kStatusOk) << c << " " << dt << " " << k;
        const double e = energy();
        rise = std::max(rise, e - previous);
        previous = e;
        deepest = std::max(deepest, R - batch.q(0)[2]);
      }
      std::printf("c %g, dt %g: largest rise of the energy in a step %.3g J (of %.3g), deepest %.3g m, at the end "
                  "%.4g J\n",
                  c, dt, rise, e0, deepest, previous);
      EXPECT_LE(rise, 1e-12 * e0) << c << " " << dt;
      EXPECT_LT(deepest, 0.2 * R) << c << " " << dt;
      EXPECT_LT(std::abs(batch.u(0)[2]), 1e-6) << c << " " << dt;
      EXPECT_LT(std::abs(batch.u(0)[0]), 1e-6) << c << " " << dt;  // friction stopped it
    }
  }
}

// A box resting on a plane tilted 0.05 rad, below its friction's angle, does not creep (slower than
// 0.1 mm/s), and its corners carry its weight.
TEST(CompliantLaw, BoxRestsWithoutCreep) {
  const Vec3d n{{std::sin(0.05), 0, std::cos(0.05)}};
  for (double dt : kSteps) {
    const auto model = box(n, dt);
    Batch<double> batch(model, 1);
    batch.setQ(0, {1, 0, 0, 0, 0, 0, 0.0595});
    batch.step(dt, static_cast<int>(std::lround(1.0 / dt)), Integrator::SemiImplicitEuler);
    ASSERT_EQ(batch.status(0), kStatusOk) << dt;
    const std::vector<double> p0 = batch.q(0);
    double fastest = 0;
    for (int k = 0; k < static_cast<int>(std::lround(1.0 / dt)); ++k) {
      batch.step(dt, 1, Integrator::SemiImplicitEuler);
      const std::vector<double> u = batch.u(0);
      fastest = std::max(fastest, std::sqrt(u[3] * u[3] + u[4] * u[4] + u[5] * u[5]));
    }
    ASSERT_EQ(batch.status(0), kStatusOk) << dt;
    const std::vector<double> p1 = batch.q(0);
    const double moved = std::hypot(p1[4] - p0[4], p1[5] - p0[5]);
    batch.evaluate();
    double fz = 0;
    for (int point = 0; point < 8; ++point) fz += component(batch, "softContact", 20 * point + 13);
    std::printf("dt %g: fastest %.3g m/s over the second second, moved %.3g m; corners carry %.10g N\n", dt, fastest,
                moved, fz);
    EXPECT_LT(fastest, 1e-4) << dt;
    EXPECT_LT(moved, 1e-4) << dt;
    EXPECT_NEAR(fz, kG, 1e-8 * kG) << dt;
  }
}

// A block (a ball that cannot turn) on a slope with mu = 0.5: it holds at tan t = 0.3 and slides at
// g (sin t - mu cos t) at tan t = 0.8, within 1%.
TEST(CompliantLaw, BlockHoldsBelowMuAndSlidesAtCoulombsAccelerationAbove) {
  const double mu = 0.5;
  for (double dt : kSteps) {
    for (double slope : {0.3, 0.8}) {
      const double t = std::atan(slope);
      const Vec3d n{{-std::sin(t), 0, std::cos(t)}};  // the plane rises along +x
      const auto model = ball(MobilizerType::Translation, 1, 0.05, n, material(1e8, 2, mu, 1e-5), dt);
      Batch<double> batch(model, 1);
      batch.setQ(0, {0, 0, 0.05 / std::cos(t)});
      const int half = static_cast<int>(std::lround(0.5 / dt));
      batch.step(dt, half, Integrator::SemiImplicitEuler);
      const std::vector<double> u0 = batch.u(0);
      batch.step(dt, half, Integrator::SemiImplicitEuler);
      ASSERT_EQ(batch.status(0), kStatusOk) << dt << " " << slope;
      const std::vector<double> u1 = batch.u(0);
      const Vec3d down{{-std::cos(t), 0, -std::sin(t)}};
      const double v0 = u0[0] * down[0] + u0[2] * down[2], v1 = u1[0] * down[0] + u1[2] * down[2];
      if (slope < mu) {
        std::printf("dt %g, tan t %g: speed %.3g m/s\n", dt, slope, v1);
        EXPECT_LT(std::abs(v1), 1e-4) << dt;
      } else {
        const double a = (v1 - v0) / (half * dt), expected = kG * (std::sin(t) - mu * std::cos(t));
        std::printf("dt %g, tan t %g: acceleration %.8g, Coulomb's %.8g\n", dt, slope, a, expected);
        EXPECT_NEAR(a, expected, 0.01 * expected) << dt;
      }
    }
  }
}

// A free ball on a slope of 0.3 rad (mu = 0.8: it rolls without slipping) accelerates at
// g sin t / (1 + I / (m r^2)) = g sin t / 1.4, within 1% (its radius is the contact's less its
// penetration of a few micrometres).
TEST(CompliantLaw, BallRollsAtTheRollingAcceleration) {
  const double t = 0.3, R = 0.05;
  const Vec3d n{{-std::sin(t), 0, std::cos(t)}};
  for (double dt : kSteps) {
    const auto model = ball(MobilizerType::Free, 1, R, n, material(1e9, 2, 0.8, 1e-5), dt);
    Batch<double> batch(model, 1);
    batch.setQ(0, {1, 0, 0, 0, 0, 0, R / std::cos(t)});
    const int half = static_cast<int>(std::lround(0.5 / dt));
    batch.step(dt, half, Integrator::SemiImplicitEuler);
    const std::vector<double> q0 = batch.q(0), u0 = batch.u(0);
    batch.step(dt, half, Integrator::SemiImplicitEuler);
    ASSERT_EQ(batch.status(0), kStatusOk) << dt;
    const std::vector<double> u1 = batch.u(0);
    const Vec3d down{{-std::cos(t), 0, -std::sin(t)}};
    const double v0 = u0[3] * down[0] + u0[5] * down[2], v1 = u1[3] * down[0] + u1[5] * down[2];
    const double a = (v1 - v0) / (half * dt), expected = kG * std::sin(t) / 1.4;
    std::printf("dt %g: rolling acceleration %.8g, closed form %.8g\n", dt, a, expected);
    EXPECT_NEAR(a, expected, 0.01 * expected) << dt;
  }
}

// A pendulum of 1 kg on a 0.5 m massless rod falls from horizontal onto a stop at -0.5 rad (k =
// 200 N m/rad, d = 0.5 s/rad): its energy never grows, it never passes far beyond the bound, and
// after 4 s it rests where the stop carries it, k x = m g l cos(q) at the bound less x (to 1e-6: at
// 1 ms its last swing has not quite died out).
TEST(CompliantLaw, StopHoldsAPendulumAtItsStaticDeflection) {
  const double m = 1, l = 0.5, k = 200, bound = -0.5;
  for (double dt : kSteps) {
    const auto model = pendulumOnAStop(bound, k, 0.5, dt);
    Batch<double> batch(model, 1);
    batch.setQ(0, {0});
    batch.evaluate();
    const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
    double previous = e0, rise = 0, lowest = 0;
    for (int s = 0; s < static_cast<int>(std::lround(4.0 / dt)); ++s) {
      batch.step(dt, 1, Integrator::SemiImplicitEuler);
      batch.evaluate();
      const double q = batch.q(0)[0], x = std::max(0.0, bound - q);
      const double e = batch.kineticEnergy(0) + batch.potentialEnergy(0) + 0.5 * k * x * x;
      rise = std::max(rise, e - previous);
      previous = e;
      lowest = std::min(lowest, q);
    }
    ASSERT_EQ(batch.status(0), kStatusOk) << dt;
    // F's z is Ground's -y: q > 0 lifts the rod, gravity turns it down onto the lower stop.
    const double q = batch.q(0)[0], x = bound - q;
    const double expected = m * kG * l * std::cos(q) / k;
    std::printf("dt %g: energy rose at most %.3g J in a step; lowest %.4g; at rest %.10g beyond the bound (k x = m "
                "g l cos q: %.10g); limit force %.8g\n",
                dt, rise, lowest, x, expected, component(batch, "softLimitForce", 0));
    EXPECT_LE(rise, 1e-12 * std::abs(e0) + 1e-12) << dt;
    EXPECT_NEAR(x, expected, 1e-6 * expected) << dt;
    EXPECT_NEAR(component(batch, "softLimitForce", 0), k * x, 1e-6 * k * x) << dt;
    EXPECT_GT(lowest, bound - 0.2) << dt;
  }
}

// The step's derivatives (linearize, by the implicit function theorem at the solve's solution) equal
// central differences of the step, for a sliding ball, a rolling ball and a resting box.
TEST(CompliantLaw, StepDerivativesEqualCentralDifferences) {
  const double dt = 5e-3;
  {
    DerivativeCase c;
    c.model = ball(MobilizerType::Translation, 1, 0.05, {{0, 0, 1}}, material(1e7, 2, 0.5, 1e-3), dt);
    c.q = {0, 0, 0.0495};
    c.u = {0.4, -0.2, -0.05};
    c.tau = {0.1, 0.2, 0.3};
    c.params = {"plane_contact.ball.stiffness", "plane_contact.ball.friction"};
    expectMatches(c, Linearization::Step, dt, Integrator::SemiImplicitEuler, 1e-7, 1e-6, "sliding ball");
  }
  {
    DerivativeCase c;
    c.model = ball(MobilizerType::Free, 1, 0.05, {{0, 0, 1}}, material(1e7, 2, 0.8, 1e-3), dt);
    c.q = {1, 0, 0, 0, 0, 0, 0.0497};
    c.u = {0, 2, 0, 0.1, 0, 0};
    c.tau = std::vector<double>(6, 0.0);
    expectMatches(c, Linearization::Step, dt, Integrator::SemiImplicitEuler, 1e-7, 1e-6, "rolling ball");
  }
  {
    DerivativeCase c;
    c.model = box({{0, 0, 1}}, dt);
    c.q = {1, 0, 0, 0, 0, 0, 0.0599};
    c.u = {0.01, -0.02, 0.03, 0.01, 0.02, -0.01};
    c.tau = std::vector<double>(6, 0.0);
    expectMatches(c, Linearization::Step, dt, Integrator::SemiImplicitEuler, 1e-8, 1e-6, "resting box");
  }
}

// Worlds with their own friction, stiffness and stop in one batch equal each world stepped alone, bit
// for bit (the CPU backend's packs of worlds against one world).
TEST(CompliantLaw, WorldOfABatchEqualsTheSameWorldAloneBitForBit) {
  const double dt = 1e-2;
  const auto model = box({{0.1, 0, 1}}, dt);
  const int n = 11;
  auto configure = [&](Batch<double>& b, std::int64_t slot, int w) {
    b.setQ(slot, {1, 0, 0, 0, 0, 0, 0.0595 + 0.01 * w});
    b.setU(slot, {0.1 * w, 0, 0, 0.2, 0, 0});
    b.setParameter(slot, "plane_contact.corner0.friction", 0.3 + 0.05 * w);
    b.setParameter(slot, "plane_contact.corner4.stiffness", 1e7 * (1 + w));
  };
  Batch<double> batch(model, n);
  for (int w = 0; w < n; ++w) configure(batch, w, w);
  batch.step(dt, 100, Integrator::SemiImplicitEuler);
  for (int w : {0, 4, 10}) {
    Batch<double> alone(model, 1);
    configure(alone, 0, w);
    alone.step(dt, 100, Integrator::SemiImplicitEuler);
    EXPECT_EQ(alone.status(0), kStatusOk);
    EXPECT_EQ(alone.q(0), batch.q(w)) << w;
    EXPECT_EQ(alone.u(0), batch.u(w)) << w;
  }
  EXPECT_NE(batch.q(0), batch.q(10));
}

// The CUDA kernels run the same template: a batch of boxes dropped with their own speeds and friction
// equals the CPU's, state and recorded contact forces (skipped without a GPU).
TEST(CompliantLaw, CudaMatchesCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const double dt = 1e-2;
  const auto model = box({{0.1, 0, 1}}, dt);
  const int n = 300;
  Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
  for (Batch<double>* b : {&cpu, &gpu})
    for (int w = 0; w < n; ++w) {
      b->setQ(w, {1, 0, 0, 0, 0, 0, 0.0595 + 1e-4 * w});
      b->setU(w, {0.01 * w, 0, 0, 0.2, 0, -0.001 * w});
      b->setParameter(w, "plane_contact.corner0.friction", 0.3 + 1e-3 * w);
    }
  cpu.step(dt, 50, Integrator::SemiImplicitEuler);
  gpu.step(dt, 50, Integrator::SemiImplicitEuler);
  cpu.evaluate();
  gpu.evaluate();
  double worst = 0;
  for (int w = 0; w < n; ++w) {
    ASSERT_EQ(gpu.status(w), cpu.status(w)) << w;
    for (int i = 0; i < model->nq(); ++i) worst = std::max(worst, std::abs(gpu.q(w)[i] - cpu.q(w)[i]));
    for (int i = 0; i < model->nu(); ++i) worst = std::max(worst, std::abs(gpu.u(w)[i] - cpu.u(w)[i]));
  }
  double force = 0;
  for (int c = 0; c < 8 * 20; ++c)
    for (int w = 0; w < n; w += 37)
      force = std::max(force, std::abs(component(gpu, "softContact", c, w) - component(cpu, "softContact", c, w)));
  std::printf("CUDA against the CPU: state %.3g, contact values %.3g\n", worst, force);
  EXPECT_LT(worst, 1e-10);
  EXPECT_LT(force, 1e-7);
}

// Bad values are refused naming the element, the field and the reason; a step other than the law's,
// or RK4, is refused naming the constraint.
TEST(CompliantLaw, BadValuesAndStepsAreRefused) {
  auto refused = [](const std::function<void()>& f, const std::vector<std::string>& words) {
    try {
      f();
      ADD_FAILURE() << "not refused";
    } catch (const std::exception& e) {
      for (const std::string& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  };
  auto plane = [](auto change) {
    ModelBuilder mb;
    BodyDesc b;
    b.name = "ball";
    b.mobilizer = MobilizerType::Translation;
    b.mass.mass = 1;
    b.mass.inertia = SymMat33d::diagonal(1e-3, 1e-3, 1e-3);
    mb.addBody(b);
    PlaneContactDesc d;
    d.name = "floor";
    d.body = "ball";
    d.law = kLawCompliant;
    change(d);
    mb.add(d);
    return mb.build();
  };
  refused([&] { plane([](PlaneContactDesc& d) { d.stiffness = -1; }); }, {"floor", "stiffness", ">= 0"});
  refused([&] { plane([](PlaneContactDesc& d) { d.dissipation = NAN; }); }, {"floor", "dissipation"});
  refused([&] { plane([](PlaneContactDesc& d) { d.stictionVelocity = 0; }); }, {"floor", "stiction_velocity", "> 0"});
  refused([&] { plane([](PlaneContactDesc& d) { d.shape = kShapeBox, d.size = {{0.1, 0.1, 0.1}}; }); },
          {"floor", "shape", "sphere or a capsule"});
  refused([&] { plane([](PlaneContactDesc& d) { d.condim = 1; }); }, {"floor", "condim", "3"});
  const auto model = plane([](PlaneContactDesc& d) { d.timestep = 0.01; });
  Batch<double> batch(model, 1);
  refused([&] { batch.step(0.005, 1, Integrator::SemiImplicitEuler); }, {"dt", "floor", "compliant", "0.01"});
  refused([&] { batch.step(0.01, 1, Integrator::RK4); }, {"integrator", "floor", "semi-implicit Euler"});
  refused([&] { batch.setParameter(0, "plane_contact.floor.stiction_velocity", -1); }, {"stiction_velocity"});
  batch.step(0.01, 1, Integrator::SemiImplicitEuler);
  EXPECT_EQ(batch.status(0), kStatusOk);
}

}  // namespace
}  // namespace lockstep::test
