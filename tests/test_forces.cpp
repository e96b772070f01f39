// Force elements: LinearBushing against the values Simbody printed (docs/reference-values.md (bushing case 1)),
// LinearSpringDamper against Drake's own closed-form cases, energy and power balances,
// per-world parameters, failure flags, validation.
#include <cmath>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }
template <class A>
Eigen::VectorXd vec6(const A& a) {
  Eigen::VectorXd r(6);
  for (int i = 0; i < 6; ++i) r(i) = a[i];
  return r;
}

// ---- docs/reference-values.md (bushing case 1) -----------------------------------------------------------------

struct BushingCase1 {
  std::shared_ptr<const Model> model;
  std::vector<double> q, u;
};

BushingCase1 bushingCase1() {
  MassProperties mp;
  mp.mass = 1.234;
  mp.com = {{0.1, 0.2, 0.3}};
  mp.inertia = mp.mass * SymMat33d{1.0, 1.1, 1.2, 0.01, 0.02, 0.03} - mp.mass * SpatialInertia<double>::pointInertia(mp.com);
  ModelBuilder mb;
  for (const char* name : {"body1", "body2"}) {
    BodyDesc b;
    b.name = name;
    b.mobilizer = MobilizerType::Free;
    b.mass = mp;
    mb.addBody(b);
  }
  LinearBushingDesc d;
  d.body1 = "body1";
  d.X_B1F = {Rotationd::bodyFixedXYZ({{0.2, 0, 0.1}}), {{0.5, 0, 0}}};
  d.body2 = "body2";
  d.X_B2M = {Rotationd::bodyFixedXYZ({{0, 0.3, 0}}), {{-0.2, 0.1, 0}}};
  d.stiffness = {1, 2, 3, 4, 5, 6};
  d.damping = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  mb.add(d);
  BushingCase1 c;
  c.model = mb.build();
  auto pose = [&](const Vec3d& angles, const Vec3d& p) {
    double quat[4];
    Rotationd::bodyFixedXYZ(angles).toQuaternion(quat);
    c.q.insert(c.q.end(), quat, quat + 4);
    c.q.insert(c.q.end(), p.v, p.v + 3);
  };
  pose({{0.3, -0.2, 0.5}}, {{0.1, 0.2, -0.3}});
  pose({{0.1, 0.25, -0.4}}, {{1, 0.6, 0.2}});
  c.u = {0.4, -0.1, 0.2, 0.05, 0.3, -0.2, -0.3, 0.5, 0.1, 0.2, -0.1, 0.4};
  return c;
}

TEST(LinearBushing, MatchesSimbodyReferenceCase1) {
  const BushingCase1 c = bushingCase1();
  Batch<double> batch(c.model, 1);
  batch.setQ(0, c.q);
  batch.setU(0, c.u);
  const BushingQuantities<double> b = batch.bushing(0, 0);
  const double tol = 1e-10;
  auto expect6 = [&](const double* got, std::initializer_list<double> want, const char* what) {
    Eigen::VectorXd w(6), g(6);
    int i = 0;
    for (double x : want) w(i++) = x;
    for (i = 0; i < 6; ++i) g(i) = got[i];
    EXPECT_TRUE(near(g, w, tol)) << what;
  };
  expect6(b.q, {0.216737862773, 0.636196338114, -1.20272932695, 0.576694242593, 0.205624382824, 0.153861138546}, "q");
  expect6(b.qdot, {0.0327928758563, 0.742910088309, -0.573910151002, 0.214275546348, -0.335824639929, 0.398437727935},
          "qdot");
  expect6(b.f, {-0.220017150359, -1.42097469389, 3.78036102615, -2.39248718891, -0.860209594157, -1.16222946803}, "f");
  EXPECT_NEAR(b.potentialEnergy, 3.43994589784, tol * 3.44);
  EXPECT_NEAR(b.powerDissipation, 0.379308747682, tol);
  auto sv = [](const SpatialVec<double>& v) {
    double a[6];
    for (int i = 0; i < 6; ++i) a[i] = v[i];
    return std::vector<double>(a, a + 6);
  };
  expect6(sv(b.F_GF).data(), {-0.530055503628, 3.77451789533, -3.13441240192, 1.30845488278, 1.26951087693, 2.11920286533},
          "F_GF");
  expect6(sv(b.F_GM).data(), {0.791818766044, -3.95059756925, 3.07827319999, -1.30845488278, -1.26951087693, -2.11920286533},
          "F_GM");
  expect6(sv(b.V_FM).data(), {-0.30819023188, 0.824800540809, -0.291071896368, 0.214275546348, -0.335824639929, 0.398437727935},
          "V_FM");
  const std::vector<SpatialVecd> Fb = batch.appliedBodyForces(0);
  expect6(sv(Fb[0]).data(), {-0.294997095952, 3.06482614484, -2.85440236373, 1.30845488278, 1.26951087693, 2.11920286533},
          "F_GB1");
  expect6(sv(Fb[1]).data(), {0.50792280362, -4.31788128224, 3.47358019985, -1.30845488278, -1.26951087693, -2.11920286533},
          "F_GB2");
  batch.evaluate();
  const std::vector<double> udot = batch.udot(0);
  const std::vector<double> want = {-0.159774729084, 2.17276079444, -1.8578658426, 0.0479038109544, 0.877684169256,
                                    1.65750394147, 0.253238764928, -3.92440194614, 2.7483979982, 0.38436558273,
                                    -1.58440662551, -2.59508607533};
  EXPECT_TRUE(near(vec(udot), vec(want), tol));
  // Frames and velocities are consistent with the poses.
  EXPECT_TRUE(near(toEigen(b.X_GF.invTimes(b.X_GM).p), toEigen(b.X_FM.p), 1e-14));
  EXPECT_FALSE(b.singular);
  EXPECT_NEAR(batch.potentialEnergy(0), b.potentialEnergy, 1e-14);
}

TEST(LinearBushing, DissipatedEnergyIsAStateVariable) {
  const BushingCase1 c = bushingCase1();
  Batch<double> batch(c.model, 2);
  batch.setAllStates(c.q, c.u);
  batch.setDissipatedEnergy(1, 0, 5.0);
  EXPECT_EQ(batch.dissipatedEnergy(1, 0), 5.0);
  EXPECT_THROW(batch.setDissipatedEnergy(0, 0, -1.0), ModelError);
  batch.evaluate();
  const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
  batch.step(1e-3, 500, Integrator::RK4);
  batch.evaluate();
  const double e1 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
  const double dissipated = batch.dissipatedEnergy(0, 0);
  EXPECT_GT(dissipated, 0.01);
  EXPECT_NEAR(e1 + dissipated, e0, 1e-9 * e0);
  EXPECT_NEAR(batch.dissipatedEnergy(1, 0) - 5.0, dissipated, 1e-12);
}

TEST(LinearBushing, MiddleAngleSingularityFlagsOnlyThatWorld) {
  const BushingCase1 c = bushingCase1();
  Batch<double> batch(c.model, 3);
  batch.setAllStates(c.q, c.u);
  // Turn body 2 of world 1 so that the bushing's middle angle is exactly 90 degrees.
  const BushingQuantities<double> b = batch.bushing(1, 0);
  const Rotationd R_FM = Rotationd::bodyFixedXYZ({{0.1, M_PI / 2, 0.2}});
  const Rotationd R_GM = b.X_GF.R * R_FM;
  const Rotationd R_GB2 = R_GM * Rotationd::bodyFixedXYZ({{0, 0.3, 0}}).inverse();
  std::vector<double> q = c.q;
  R_GB2.toQuaternion(&q[7]);
  batch.setQ(1, q);
  EXPECT_TRUE(batch.bushing(1, 0).singular);
  batch.step(1e-3, 10);
  EXPECT_EQ(batch.status(1), kStatusBushingSingular) << describeStatus(batch.status(1));
  EXPECT_EQ(batch.status(0), kStatusOk);
  EXPECT_EQ(batch.status(2), kStatusOk);
  EXPECT_NEAR(batch.time(2), 0.01, 1e-15);
  EXPECT_NE(describeStatus(kStatusBushingSingular).find("90 degrees"), std::string::npos);
}

TEST(LinearBushing, PerWorldParametersMatchARebuiltModel) {
  const BushingCase1 c = bushingCase1();
  Batch<double> batch(c.model, 2);
  batch.setAllStates(c.q, c.u);
  const std::array<double, 6> k2 = {7, 1, 0.5, 3, 9, 2}, c2 = {0, 0.1, 0.7, 1, 0.2, 0.3};
  const Transformd X1 = {Rotationd::bodyFixedXYZ({{-0.1, 0.2, 0.3}}), {{0.1, 0.2, 0.3}}};
  const Transformd X2 = {Rotationd::bodyFixedXYZ({{0.3, 0.1, 0.0}}), {{0.0, -0.2, 0.1}}};
  batch.setBushingStiffness(1, 0, k2);
  batch.setBushingDamping(1, 0, c2);
  batch.setBushingFrames(1, 0, X1, X2);
  EXPECT_EQ(batch.bushingStiffness(1, 0), k2);
  EXPECT_EQ(batch.bushingStiffness(0, 0)[0], 1.0);
  batch.evaluate();

  ModelBuilder source = ModelBuilder::fromModel(*c.model);
  ModelBuilder mb;
  for (const BodyDesc& b : source.bodies()) mb.addBody(b);
  LinearBushingDesc d = source.bushings()[0];
  d.stiffness = k2;
  d.damping = c2;
  d.X_B1F = X1;
  d.X_B2M = X2;
  mb.add(d);
  Batch<double> rebuilt(mb.build(), 1);
  rebuilt.setQ(0, c.q);
  rebuilt.setU(0, c.u);
  rebuilt.evaluate();
  EXPECT_EQ(batch.udot(1), rebuilt.udot(0));
  EXPECT_NE(batch.udot(0), rebuilt.udot(0));
  // All worlds at once.
  batch.setBushingStiffness(Batch<double>::kAllWorlds, 0, k2);
  EXPECT_EQ(batch.bushingStiffness(0, 0), k2);
}

TEST(LinearBushing, RejectsNegativeParameters) {
  const BushingCase1 c = bushingCase1();
  Batch<double> batch(c.model, 1);
  EXPECT_THROW(batch.setBushingStiffness(0, 0, {1, 1, -1, 1, 1, 1}), ModelError);
  EXPECT_THROW(batch.setBushingDamping(0, 0, {1, 1, 1, 1, NAN, 1}), ModelError);
  EXPECT_THROW(batch.setBushingStiffness(0, 1, {1, 1, 1, 1, 1, 1}), std::out_of_range);
  ModelBuilder mb;
  mb.addBody(simpleBody("b"));
  LinearBushingDesc d;
  d.name = "mount";
  d.body2 = "b";
  d.stiffness = {1, 1, 1, 1, 1, -3};
  mb.add(d);
  try {
    mb.build();
    FAIL() << "negative stiffness accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("bushing 'mount': stiffness[5]: must be >= 0"), std::string::npos) << e.what();
  }
}

// ---- LinearSpringDamper: Drake's cases ----------------------------------------------------------

// Drake's linear_spring_damper_test: body B on a prismatic joint along x, P = (0, 1, 0) on the
// world, Q = (0, 1, 0) on B, free length 1, stiffness 2, damping 0.5. The length is |x|.
std::shared_ptr<const Model> drakeSpringModel() {
  ModelBuilder mb;
  BodyDesc b;
  b.name = "B";
  b.mobilizer = MobilizerType::Slider;
  b.mass.mass = 1.5;
  b.mass.inertia = SymMat33d::diagonal(1, 1, 1);
  mb.addBody(b);
  SpringDamperDesc s;
  s.bodyA = "ground";
  s.p_AP = {{0, 1, 0}};
  s.bodyB = "B";
  s.p_BQ = {{0, 1, 0}};
  s.freeLength = 1;
  s.stiffness = 2;
  s.damping = 0.5;
  mb.add(s);
  return mb.build();
}

TEST(LinearSpringDamper, DrakeCases) {
  const auto model = drakeSpringModel();
  Batch<double> batch(model, 1);
  for (double x : {0.5, 1.0, 2.0}) {
    for (double xdot : {0.0, 1.0, -1.0}) {
      batch.setQ(0, {x});
      batch.setU(0, {xdot});
      const SpringDamperQuantities<double> s = batch.spring(0, 0);
      const double stretch = x - 1.0;
      // Tension k (l - l0) + c ldot pulls B back toward P along -x.
      const double tension = 2.0 * stretch + 0.5 * xdot;
      EXPECT_NEAR(s.length, x, 1e-15);
      EXPECT_NEAR(s.lengthDot, xdot, 1e-15);
      EXPECT_NEAR(s.f_AP[0], tension, 1e-15);
      EXPECT_NEAR(s.potentialEnergy, 0.5 * 2.0 * stretch * stretch, 1e-15);
      EXPECT_NEAR(s.conservativePower, -2.0 * stretch * xdot, 1e-15);
      EXPECT_NEAR(s.nonConservativePower, -0.5 * xdot * xdot, 1e-15);
      const std::vector<SpatialVecd> F = batch.appliedBodyForces(0);
      EXPECT_NEAR(F[0].lin[0], -tension, 1e-15);
      EXPECT_NEAR(F[0].lin[1], 0.0, 1e-15);
      EXPECT_NEAR(F[0].ang[2], -(1.0 * 0 - 0 * -tension) + tension * 1.0, 1e-15);  // Q is 1 m above Bo
      batch.evaluate();
      EXPECT_NEAR(batch.udot(0)[0], -tension / 1.5, 1e-14);
      EXPECT_NEAR(batch.potentialEnergy(0), 0.5 * 2.0 * stretch * stretch, 1e-15);
    }
  }
  // x = 0: the spring has no direction; the world is flagged with Drake's message, not aborted.
  Batch<double> two(model, 2);
  two.setQ(0, {0.0});
  two.setQ(1, {1.5});
  EXPECT_TRUE(two.spring(0, 0).lengthNearlyZero);
  two.step(1e-3, 3);
  EXPECT_EQ(two.status(0), kStatusSpringLengthZero);
  EXPECT_EQ(two.status(1), kStatusOk);
  EXPECT_EQ(describeStatus(two.status(0)),
            "The length of the spring became nearly zero. Revisit your model to avoid this situation.");
}

TEST(LinearSpringDamper, ConstructorChecks) {
  auto attempt = [](double l0, double k, double c) -> std::string {
    ModelBuilder mb;
    mb.addBody(simpleBody("B"));
    SpringDamperDesc s;
    s.name = "s";
    s.bodyB = "B";
    s.freeLength = l0;
    s.stiffness = k;
    s.damping = c;
    mb.add(s);
    try {
      mb.build();
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(attempt(0, 1, 1).find("spring-damper 's': free length: must be strictly positive"), std::string::npos);
  EXPECT_NE(attempt(-1, 1, 1).find("free length"), std::string::npos);
  EXPECT_NE(attempt(1, -1, 1).find("stiffness: must be >= 0"), std::string::npos);
  EXPECT_NE(attempt(1, 1, -1).find("damping: must be >= 0"), std::string::npos);
  EXPECT_EQ(attempt(1, 0, 0), "");
  Batch<double> batch(drakeSpringModel(), 1);
  EXPECT_THROW(batch.setSpringParameters(0, 0, 0.0, 1, 1), ModelError);
  batch.setSpringParameters(0, 0, 2.0, 3.0, 0.0);
  batch.setQ(0, {2.5});
  EXPECT_NEAR(batch.spring(0, 0).f_AP[0], 3.0 * 0.5, 1e-15);
  batch.setSpringPoints(0, 0, {{0, 0, 0}}, {{0, 0, 0}});
  EXPECT_NEAR(batch.spring(0, 0).length, 2.5, 1e-15);
}

// ---- power balance ------------------------------------------------------------------------------

// d/dt (KE + PE) + dissipated power = 0: KE + PE + dissipated energy stays constant along RK4.
double totalEnergy(Batch<double>& batch, std::int64_t w) {
  batch.evaluate();
  double e = batch.kineticEnergy(w) + batch.potentialEnergy(w);
  for (double z : batch.z(w)) e += z;
  return e;
}

// Relative drift of KE + PE + dissipated energy over a run of `duration` with step dt.
double energyDrift(const std::shared_ptr<const Model>& model, const std::vector<double>& q0, double dt,
                   double duration, std::vector<double>* z = nullptr) {
  Batch<double> batch(model, 1);
  batch.setQ(0, q0);
  const double e0 = totalEnergy(batch, 0);
  batch.step(dt, static_cast<int>(std::lround(duration / dt)), Integrator::RK4);
  const double e1 = totalEnergy(batch, 0);
  EXPECT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  if (z) *z = batch.z(0);
  return std::abs(e1 - e0) / std::abs(e0);
}

// The balance holds to integration accuracy: the drift is small and falls at RK4's fourth order
// when the step is halved (a missing or wrong power term would leave a drift that does not).
TEST(PowerBalance, Chain7SeedWithoutTheConstraint) {
  const auto model = makeChain7Seed({true, true, false});
  std::vector<double> z;
  const double d1 = energyDrift(model, chainInitialQ(7), 1e-4, 0.5, &z);
  const double d2 = energyDrift(model, chainInitialQ(7), 5e-5, 0.5);
  EXPECT_GT(z[0], 1.0);  // the bushing dissipated
  EXPECT_GT(z[1], 1.0);  // the spring's damper dissipated
  EXPECT_LT(d2, 1e-5);
  EXPECT_GT(d1 / d2, 12.0) << d1 << " " << d2;
}

TEST(PowerBalance, FreeBushingGrid) {
  const auto model = makeFreeBushingGrid(4);
  std::vector<double> z;
  const double d1 = energyDrift(model, freeBushingGridInitialQ(4), 2e-3, 2.0, &z);
  const double d2 = energyDrift(model, freeBushingGridInitialQ(4), 1e-3, 2.0);
  double dissipated = 0;
  for (double x : z) dissipated += x;
  EXPECT_GT(dissipated, 0.1);
  EXPECT_LT(d2, 1e-7);
  EXPECT_GT(d1 / d2, 12.0) << d1 << " " << d2;
}

TEST(PowerBalance, SpringPowersAreTheRateOfItsEnergy) {
  // Finite difference of PE along the motion equals minus the conservative power.
  Batch<double> batch(makeChain7Seed({false, true, false}), 1);
  std::vector<double> q = chainInitialQ(7), u(7);
  for (int i = 0; i < 7; ++i) u[i] = 0.3 * std::sin(i + 1.0);
  batch.setQ(0, q);
  batch.setU(0, u);
  const SpringDamperQuantities<double> s = batch.spring(0, 0);
  const double h = 1e-6;
  auto peAt = [&](double t) {
    std::vector<double> qt(7);
    for (int i = 0; i < 7; ++i) qt[i] = q[i] + t * u[i];
    batch.setQ(0, qt);
    return batch.spring(0, 0).potentialEnergy;
  };
  EXPECT_NEAR((peAt(h) - peAt(-h)) / (2 * h), -s.conservativePower, 1e-7 * std::max(1.0, std::abs(s.conservativePower)));
}

// A second check of the spring's powers, in three dimensions: P fixed on Ground, Q on a body
// that turns and moves, so that the length's rate ldot = (Q - P)/l . v_Q has parts along and
// across the spring; -k (l - l0) ldot and -c ldot^2, with v_Q = v_B + w_B x (Q - Bo).
TEST(LinearSpringDamper, PowersInThreeDimensionsAreTheClosedForms) {
  const double k = 40, c = 1.5, l0 = 0.6;
  const Vec3d p_AP = {{0.1, -0.2, 0.3}}, p_BQ = {{0.2, 0.1, -0.1}};
  const Transformd X_GA = Transformd::identity();
  const Transformd X_GB{Rotationd::bodyFixedXYZ({{0.3, -0.5, 0.8}}), {{0.9, 0.4, -0.2}}};
  SpatialVec<double> V_GB;
  V_GB.ang = {{0.7, -1.1, 0.4}};
  V_GB.lin = {{-0.3, 0.8, 0.5}};
  const SpringDamperQuantities<double> s =
      evaluateSpringDamper(X_GA, SpatialVec<double>::zero(), X_GB, V_GB, p_AP, p_BQ, l0, k, c);
  const Vec3d P = p_AP, Q = X_GB * p_BQ;
  const Vec3d v_Q = V_GB.lin + cross(V_GB.ang, Q - X_GB.p);
  const double l = norm(Q - P), ldot = dot(Q - P, v_Q) / l;
  EXPECT_NEAR(s.length, l, 1e-15);
  EXPECT_NEAR(s.lengthDot, ldot, 1e-14);
  EXPECT_NEAR(s.potentialEnergy, 0.5 * k * (l - l0) * (l - l0), 1e-13);
  EXPECT_NEAR(s.conservativePower, -k * (l - l0) * ldot, 1e-13);
  EXPECT_NEAR(s.nonConservativePower, -c * ldot * ldot, 1e-13);
  // The power the spring's forces deliver to the two bodies is the sum of both.
  const Vec3d f_BQ = -s.f_AP;
  EXPECT_NEAR(dot(f_BQ, v_Q), s.conservativePower + s.nonConservativePower, 1e-13);
}

}  // namespace
}  // namespace lockstep::test
