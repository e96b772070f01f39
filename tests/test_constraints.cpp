// SphereOnSphereContact and the constrained dynamics: Simbody's printed chain-7-seed case,
// closed-form cases, drift control, energy, enable/disable, per-world parameters.
#include <cmath>

#include "lockstep/backends/backend.h"
#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

TEST(SphereOnSphereContact, MatchesSimbodyReferenceCase1) {
  // docs/reference-values.md (sphere case 1): chain-7-seed at Simbody's assembled state.
  Batch<double> batch(makeChain7Seed(), 1);
  batch.setQ(0, {-0.15042011004075018, -0.076440357112119564, 0.0068070761040828643, 0.0915141602205084,
                 0.16972760733200887, 0.23416257272338142, 0.27891933102116429});
  batch.setU(0, {0.089081949380083486, 0.11573921414928448, -0.02431193631809242, -0.19035276970324333,
                 -0.21784029843104366, -0.070409317181568315, 0.12592456651791878});
  batch.evaluate();
  ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  const std::vector<double> udot = {156.08604412526211, -331.38627794519039, 89.617123534949954, -73.485840135760895,
                                    174.42503354442169, -652.60525281274181, 2310.5839747865539};
  EXPECT_TRUE(near(vec(batch.udot(0)), vec(udot), 1e-9));
  const Batch<double>::ContactQuantities c = batch.contact(0, 0);
  EXPECT_TRUE(c.enabled);
  EXPECT_NEAR(c.positionError, 5.395684e-14, 1e-13);
  EXPECT_NEAR(c.velocityErrors[0], 0.0, 0.0);
  EXPECT_NEAR(c.velocityErrors[2], -2.08166817117217e-16, 1e-13);
  EXPECT_NEAR(c.accelerationErrors[2], 0.0, 1e-9);  // Simbody: 8e-15, the residual of its solve
  EXPECT_TRUE(near(toEigen(c.multipliers), Eigen::Vector3d(0, 0, -634.844725288425), 1e-9));
  EXPECT_TRUE(near(toEigen(c.forceOnSphereBInG), Eigen::Vector3d(-509.839527452726, 378.274346834831, 0), 1e-9));
  EXPECT_TRUE(near(toEigen(c.X_GC.p), Eigen::Vector3d(0.139381345660174, -3.43082933297964, 0), 1e-12));
  EXPECT_TRUE(near(toEigen(c.X_GC.R.R.col(0)), Eigen::Vector3d(0.5958533351017, 0.803093271698986, 0), 1e-12));
  EXPECT_TRUE(near(toEigen(c.X_GC.R.R.col(2)), Eigen::Vector3d(-0.803093271698986, 0.5958533351017, 0), 1e-12));
  EXPECT_NEAR(batch.kineticEnergy(0) + batch.potentialEnergy(0), 560.715150494808, 1e-9 * 560.7);
  EXPECT_NEAR(batch.constraintError(0), 5.395684e-14, 1e-13);
}

TEST(SphereOnSphereContact, AssemblyProjectsTheChain7SeedInitialState) {
  // docs/scenes.md: chain-7-seed starts from q = 0.3, which violates the contact; assemble first.
  Batch<double> batch(makeChain7Seed(), 2);
  std::vector<double> u(7);
  for (int i = 0; i < 7; ++i) u[i] = 0.2 * std::sin(1.0 + i);
  batch.setQ(0, chainInitialQ(7));
  batch.setU(0, u);
  batch.setQ(1, chainInitialQ(7));
  EXPECT_GT(std::abs(batch.constraintError(0)), 0.1);
  batch.assemble();
  ASSERT_EQ(batch.status(0), kStatusOk);
  EXPECT_LT(batch.constraintError(0), 1e-10);
  const auto c = batch.contact(0, 0);
  EXPECT_LT(std::abs(c.velocityErrors[2]), 1e-10);
  EXPECT_LT(batch.constraintError(1), 1e-10);
}

// A Pin pendulum carrying a sphere that rests on a fixed sphere directly below its pivot... at an
// angle: the normal force balances gravity's component along the center line, and the pendulum
// stays put. Link: mass m, com at distance a below the pivot; sphere of radius r on the link at
// distance L; fixed sphere of radius R on Ground.
TEST(SphereOnSphereContact, PendulumResolvesGravityAlongTheNormal) {
  const double m = 2.0, L = 1.0, r = 0.1, R = 0.3, g = 9.81;
  ModelBuilder mb;
  mb.setGravity({{0, -g, 0}});
  BodyDesc link;
  link.name = "link";
  link.mass.mass = m;
  link.mass.com = {{0, -0.5, 0}};
  link.mass.inertia = SymMat33d::diagonal(0.05, 0.01, 0.05);
  mb.addBody(link);
  // The fixed sphere touches the link's sphere when the link hangs at angle theta0 from vertical.
  const double theta0 = 0.4;
  const Vec3d tip{{L * std::sin(theta0), -L * std::cos(theta0), 0}};
  const Vec3d dir{{std::sin(theta0 + 0.9), -std::cos(theta0 + 0.9), 0}};  // normal, not along the link
  SphereContactDesc c;
  c.bodyF = "ground";
  c.centerOnF = tip + (r + R) * dir;
  c.radiusOnF = R;
  c.bodyB = "link";
  c.centerOnB = {{0, -L, 0}};
  c.radiusOnB = r;
  mb.add(c);
  Batch<double> batch(mb.build(), 1);
  batch.setQ(0, {theta0});
  batch.evaluate();
  ASSERT_EQ(batch.status(0), kStatusOk);
  EXPECT_LT(batch.constraintError(0), 1e-14);
  // One dof, one constraint: the pendulum cannot move.
  EXPECT_NEAR(batch.udot(0)[0], 0.0, 1e-12);
  // Moment balance about the pivot: gravity's moment plus the normal force's moment = 0.
  const auto q = batch.contact(0, 0);
  const Vec3d p_com{{0.5 * std::sin(theta0), -0.5 * std::cos(theta0), 0}};
  const Vec3d f = q.forceOnSphereBInG;
  const double moment = cross(p_com, Vec3d{{0, -m * g, 0}})[2] + cross(tip, f)[2];
  EXPECT_NEAR(moment, 0.0, 1e-12);
  // The force is along the normal: no tangential component without rolling.
  EXPECT_NEAR(std::abs(dot(f, dir)), norm(f), 1e-12);
  // Gravity's component along the line from pivot ... the normal magnitude from the balance.
  const double normal = -cross(p_com, Vec3d{{0, -m * g, 0}})[2] / cross(tip, dir)[2];
  EXPECT_NEAR(dot(f, dir), normal, 1e-12);
  // Cz points from the fixed sphere to the link's sphere (-dir): the multiplier is -(f . Cz).
  EXPECT_NEAR(q.multipliers[2], normal, 1e-12);
}

// A ball rolling without slip on a fixed ball: the contact point of the moving ball has no
// velocity, so its center moves at w x (center - Co), and rolling is kept over time.
TEST(SphereOnSphereContact, BallRollsOnAFixedBallWithoutSlip) {
  const double rb = 0.2, rf = 0.5;
  Batch<double> batch(rollingBallModel(rb, rf), 1);
  // Start slightly off the top, rolling: center at angle 0.1 from vertical in the x-z plane.
  const double a = 0.1;
  const Vec3d n{{std::sin(a), 0, std::cos(a)}};
  std::vector<double> q = {1, 0, 0, 0, (rf + rb) * n[0], 0, (rf + rb) * n[2]};
  // Rolling: v_center = w x (center - Co) with Co = rf n, center = (rf + rb) n.
  const Vec3d w{{0.0, 1.5, 0.3}};
  const Vec3d v = cross(w, rb * n);
  batch.setQ(0, q);
  batch.setU(0, {w[0], w[1], w[2], v[0], v[1], v[2]});
  batch.evaluate();
  auto k = batch.contact(0, 0);
  EXPECT_LT(std::abs(k.velocityErrors[0]) + std::abs(k.velocityErrors[1]) + std::abs(k.velocityErrors[2]), 1e-14);
  EXPECT_LT(std::abs(k.accelerationErrors[0]) + std::abs(k.accelerationErrors[1]) + std::abs(k.accelerationErrors[2]),
            1e-11);
  batch.step(1e-3, 200, Integrator::RK4);
  ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  k = batch.contact(0, 0);
  EXPECT_LT(std::abs(k.positionError), 1e-10);
  // Rolling speed relation at the new state: v_center = w x (center - Co).
  const std::vector<double> qs = batch.q(0), us = batch.u(0);
  const Vec3d center{{qs[4], qs[5], qs[6]}}, ws{{us[0], us[1], us[2]}}, vs{{us[3], us[4], us[5]}};
  const Vec3d co = (rf / (rf + rb)) * center;
  EXPECT_TRUE(near(toEigen(vs), toEigen(cross(ws, center - co)), 1e-9));
  EXPECT_GT(norm(vs), 0.05);
}

TEST(SphereOnSphereContact, Chain7SeedKeepsItsConstraintFor10Seconds) {
  Batch<double> batch(makeChain7Seed(), 1);
  batch.setQ(0, chainInitialQ(7));
  batch.assemble();
  double worst = 0;
  for (int k = 0; k < 100; ++k) {
    batch.step(1e-3, 100, Integrator::RK4);
    worst = std::max(worst, batch.constraintError(0));
    const auto c = batch.contact(0, 0);
    worst = std::max(worst, std::abs(c.velocityErrors[2]));
  }
  EXPECT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  EXPECT_NEAR(batch.time(0), 10.0, 1e-9);
  EXPECT_LE(worst, batch.constraintTolerance());
}

TEST(SphereOnSphereContact, FrictionlessContactConservesEnergy) {
  // chain-7 with only the contact (no damping anywhere): KE + PE conserved, up to RK4 and the
  // projection, both converging with the step.
  auto drift = [](double dt) {
    Batch<double> batch(makeChain7Seed({false, false, true}), 1);
    batch.setQ(0, chainInitialQ(7));
    batch.assemble();
    batch.evaluate();
    const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
    batch.step(dt, static_cast<int>(std::lround(1.0 / dt)), Integrator::RK4);
    batch.evaluate();
    EXPECT_EQ(batch.status(0), kStatusOk);
    return std::abs(batch.kineticEnergy(0) + batch.potentialEnergy(0) - e0) / std::abs(e0);
  };
  const double d1 = drift(2e-4), d2 = drift(1e-4);
  EXPECT_LT(d2, 1e-7);
  EXPECT_LT(d2, d1);
}

TEST(SphereOnSphereContact, MultipliersEqualTheReactionForces) {
  // The constraint force makes up the difference between the constrained and unconstrained
  // motion: M (udot - udot_free) = -~G lambda. Check it with a world where the contact is disabled.
  Batch<double> batch(makeChain7Seed(), 2);
  for (int w = 0; w < 2; ++w) batch.setQ(w, chainInitialQ(7));
  batch.assemble();
  batch.setQ(1, batch.q(0));
  batch.setContactEnabled(1, 0, false);
  EXPECT_FALSE(batch.contactEnabled(1, 0));
  batch.evaluate();
  const auto c0 = batch.contact(0, 0), c1 = batch.contact(1, 0);
  EXPECT_EQ(c1.multipliers[2], 0.0);
  EXPECT_EQ(c1.forceOnSphereBInG[0], 0.0);
  // Apply the constraint force as an ordinary body force on link 7 in world 1: same udot as world 0.
  // The force acts along the center line, so it may be applied at the sphere center Sb = Co + rb Cz;
  // link 7's origin is found by walking down the chain (link i+1 hangs 0.5 m below link i).
  const Vec3d f = c0.forceOnSphereBInG;
  const std::vector<double> q = batch.q(0);
  const Vec3d Sb = c0.X_GC.p + 0.1 * c0.X_GC.R.R.col(2);
  double angle = 0;
  Vec3d p{{0, 0, 0}};
  for (int i = 0; i < 7; ++i) {
    if (i > 0) p += Vec3d{{0.5 * std::sin(angle), -0.5 * std::cos(angle), 0}};
    angle += q[i];
  }
  batch.setBodyForce(1, 6, shiftForceBy(SpatialVecd{Vec3d::zero(), f}, p - Sb));
  batch.evaluate();
  EXPECT_TRUE(near(vec(batch.udot(1)), vec(batch.udot(0)), 1e-9));
}

TEST(SphereOnSphereContact, PerWorldSphereParameters) {
  Batch<double> batch(makeChain7Seed(), 2);
  batch.setSphereRadii(1, 0, 0.25, 0.15);
  batch.setSphereCenters(1, 0, {{0.3, -3.6, 0}}, {{0, -0.45, 0}});
  EXPECT_EQ(batch.sphereRadii(1, 0)[0], 0.25);
  EXPECT_EQ(batch.sphereRadii(0, 0)[0], 0.2);
  EXPECT_THROW(batch.setSphereRadii(0, 0, 0.0, 0.1), ModelError);
  for (int w = 0; w < 2; ++w) batch.setQ(w, chainInitialQ(7));
  batch.assemble();
  EXPECT_LT(batch.constraintError(0), 1e-10);
  EXPECT_LT(batch.constraintError(1), 1e-10);
  EXPECT_NE(batch.q(0), batch.q(1));
  const auto c = batch.contact(1, 0);
  EXPECT_NEAR(c.positionError, 0.0, 1e-10);
}

// A world whose contact cannot be met (the fixed sphere moved out of the chain's reach) fails its
// assembly and is flagged, alone; the others, in the same SIMD pack or not, end as in a batch
// without it, bit for bit, and go on stepping. One world at a time the same.
TEST(SphereOnSphereContact, UnreachableContactFlagsOnlyThatWorld) {
  for (bool lanes : {true, false}) {
    const int n = 6;
    Batch<double> batch(makeChain7Seed(), n, Backend::Cpu, CpuOptions{0, lanes}),
        clean(makeChain7Seed(), n, Backend::Cpu, CpuOptions{0, lanes});
    for (Batch<double>* b : {&batch, &clean}) {
      for (int w = 0; w < n; ++w) b->setQ(w, chainInitialQ(7));
    }
    batch.setSphereCenters(2, 0, {{40.0, 0.0, 0.0}}, {{0, -0.5, 0}});
    batch.assemble(60);
    clean.assemble(60);
    EXPECT_EQ(batch.status(2), kStatusConstraintFailed) << describeStatus(batch.status(2));
    batch.step(1e-3, 20);
    clean.step(1e-3, 20);
    EXPECT_EQ(batch.time(2), 0.0);
    for (int w = 0; w < n; ++w) {
      if (w == 2) continue;
      EXPECT_EQ(batch.status(w), kStatusOk) << w;
      EXPECT_EQ(batch.q(w), clean.q(w)) << w;
      EXPECT_LT(std::abs(batch.constraintError(w)), 1e-10) << w;
    }
  }
}

TEST(SphereOnSphereContact, RedundantContactsAreSolved) {
  // Two identical contacts: the equations are redundant (rank 1 of 2); the motion is that of one.
  ModelBuilder mb;
  mb.setGravity({{0, -9.81, 0}});
  BodyDesc b;
  b.name = "link";
  b.mass.mass = 1;
  b.mass.com = {{0, -0.5, 0}};
  b.mass.inertia = SymMat33d::diagonal(0.02, 0.005, 0.02);
  mb.addBody(b);
  SphereContactDesc c;
  c.bodyF = "ground";
  c.centerOnF = {{0.5, -1.2, 0}};
  c.radiusOnF = 0.3;
  c.bodyB = "link";
  c.centerOnB = {{0, -1, 0}};
  c.radiusOnB = 0.1;
  mb.add(c).add(c);
  Batch<double> batch(mb.build(), 1);
  batch.setQ(0, {0.3});
  batch.setU(0, {0.5});
  batch.assemble();
  batch.evaluate();
  ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  EXPECT_NEAR(batch.udot(0)[0], 0.0, 1e-9);  // a 1-dof pendulum held by its contact
  EXPECT_NEAR(batch.u(0)[0], 0.0, 1e-10);    // projected onto the velocity constraint
  const double total = batch.contact(0, 0).multipliers[2] + batch.contact(0, 1).multipliers[2];
  EXPECT_TRUE(std::isfinite(total));
}

TEST(SphereOnSphereContact, ValidationAndLimits) {
  ModelBuilder mb;
  mb.addBody(simpleBody("link"));
  SphereContactDesc c;
  c.name = "touch";
  c.bodyB = "link";
  c.radiusOnF = -0.1;
  mb.add(c);
  try {
    mb.build();
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("sphere contact 'touch': radius on F: must be > 0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lockstep::test
