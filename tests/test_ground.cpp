// Ground contact (Simbody 3.7's SmoothSphereHalfSpaceForce): closed forms (Hertz's static
// penetration, creep below the static friction angle, dynamic friction above it), the energy
// balance with the contact's work carried as an auxiliary state, per-world parameters (a world
// alone equals the same world in a batch, bit for bit), parameter checks and CPU against GPU.
// Simbody itself is compared in test_simbody.cpp.
#include <cmath>

#include "lockstep/engine/batch.h"
#include "lockstep/backends/device.h"
#include "lockstep/engine/fields.h"
#include "lockstep/physics/force_elements.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

constexpr double kG = 9.81;

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

// Simbody's Hertz force without smoothing: (4/3) k sqrt(R k) x^(3/2), k = E^(2/3) / 2, that is
// (4/3) E_eff sqrt(R) x^(3/2) with E_eff = k^(3/2) = E / (2 sqrt 2).
double hertzForce(double E, double R, double x) {
  const double k = 0.5 * std::pow(E, 2.0 / 3.0);
  return 4.0 / 3.0 * k * std::sqrt(R * k) * std::pow(x, 1.5);
}

// One body of mass m on a Translation mobilizer (it cannot turn, so it slides like a block), a
// sphere of radius R at its origin, the half-space below the plane through the origin with
// outward normal n. Gravity -g z.
std::shared_ptr<const Model> slidingSphere(double m, double R, const Vec3d& n, const GroundMaterial& material) {
  return ballOnGround(MobilizerType::Translation, m, R, n, material).build();
}

// A sphere resting on a level plane settles where the smoothed Hertz force carries its weight; with
// cf and the tanh transitions made negligible that is Hertz's m g = (4/3) E_eff sqrt(R) x^(3/2).
TEST(GroundContact, SettlesAtHertzStaticPenetration) {
  const double m = 2.0, R = 0.1, xHertz = 0.01;
  GroundMaterial mat;
  // E for which Hertz's static penetration is xHertz.
  mat.stiffness = m * kG / hertzForce(1.0, R, xHertz);
  mat.dissipation = 5;  // about critically damped
  mat.cf = 1e-14;       // (x^2 + cf)^(3/4) = x^(3/2) to 1e-10
  mat.bd = 3000;        // tanh(bd x) = 1 to 1e-25
  mat.bv = 500;         // tanh(bv 2/(3c)) = 1 at rest
  const auto model = slidingSphere(m, R, {{0, 0, 1}}, mat);
  Batch<double> batch(model, 1);
  batch.setQ(0, {0, 0, R});  // touching
  batch.step(1e-4, 30000, Integrator::RK4);
  ASSERT_EQ(batch.status(0), kStatusOk);
  batch.evaluate();
  const double x = R - batch.q(0)[2];
  std::printf("static penetration %.12g, Hertz %.12g (relative %.2g)\n", x, xHertz, std::abs(x - xHertz) / xHertz);
  EXPECT_NEAR(x, xHertz, 1e-7 * xHertz);
  EXPECT_NEAR(batch.udot(0)[2], 0.0, 1e-8);
  const GroundContactQuantities<double> r = batch.groundContact(0, 0);
  EXPECT_NEAR(r.normalForce, m * kG, 1e-8 * m * kG);
  EXPECT_NEAR(r.penetration, x, 1e-15);
  // The observation field holds the same numbers, to rounding: it comes from the CPU backend's
  // pack code (fused multiply-adds with AVX2 or AVX-512), groundContact() from the host's scalar code.
  const FieldView f = batch.field("groundState", MemorySpace::Host);
  const double* state = static_cast<const double*>(f.data);
  EXPECT_NEAR(state[0], r.penetration, 1e-15 * r.penetration);
  EXPECT_NEAR(state[2 * f.componentStride], r.normalForce, 1e-15 * r.normalForce);
}

// Steady creep speed on a slope of angle a below the static friction angle: friction carries
// m g sin a, the normal force m g cos a, so  |vt|/vs * vrel (ud + 2 (us - ud)/(1 + vrel^2)) = tan a
// with vs = sqrt(|vt|^2 + cf), vrel = vs / vtr (viscous friction 0). Solved by bisection.
double creepSpeed(const GroundMaterial& p, double slope) {
  auto excess = [&](double v) {
    const double vs = std::sqrt(v * v + p.cf), vrel = vs / p.transitionVelocity;
    const double mu = std::min(vrel, 1.0) * (p.dynamicFriction + 2 * (p.staticFriction - p.dynamicFriction) / (1 + vrel * vrel));
    return v / vs * mu - std::tan(slope);
  };
  double lo = 0, hi = p.transitionVelocity;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The indentation at which the smoothed Hertz force (cf, bd; at rest, so no Hunt-Crossley factor
// but its tanh, 1 here) carries a normal load N. By bisection.
double restingIndentation(const GroundMaterial& p, double R, double N) {
  auto force = [&](double x) {
    const double k = 0.5 * std::pow(p.stiffness, 2.0 / 3.0);
    return 4.0 / 3.0 * k * std::sqrt(R * k) * std::pow(x * x + p.cf, 0.75) * (0.5 + 0.5 * std::tanh(p.bd * x));
  };
  double lo = -0.1, hi = 0.1;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (force(mid) < N ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct Slope {
  Vec3d n, downhill;
};
Slope slope(double a) { return {{{0, -std::sin(a), std::cos(a)}}, {{0, -std::cos(a), -std::sin(a)}}}; }

GroundMaterial slopeMaterial() {
  GroundMaterial mat;
  mat.stiffness = 1e7;
  mat.dissipation = 2;
  mat.staticFriction = 0.8;
  mat.dynamicFriction = 0.5;
  mat.transitionVelocity = 0.01;
  return mat;  // cf, bd, bv: Simbody's defaults
}

// A sphere of mass 1 and radius 0.05 started at rest on a slope of angle a (slopeMaterial), at the
// indentation that carries its normal load, after `steps` RK4 steps of 0.1 ms and an evaluation:
// its speed and acceleration down the slope, and the contact's slip speed.
struct SlopeRun {
  double speed, accel, slipSpeed;
};
SlopeRun runOnSlope(double a, int steps) {
  const GroundMaterial mat = slopeMaterial();
  const Slope s = slope(a);
  const double m = 1.0, R = 0.05;
  Batch<double> batch(slidingSphere(m, R, s.n, mat), 1);
  const Vec3d start = (R - restingIndentation(mat, R, m * kG * std::cos(a))) * s.n;
  batch.setQ(0, {start[0], start[1], start[2]});
  batch.step(1e-4, steps, Integrator::RK4);
  EXPECT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  batch.evaluate();
  const Vec3d v{{batch.u(0)[0], batch.u(0)[1], batch.u(0)[2]}};
  const Vec3d udot{{batch.udot(0)[0], batch.udot(0)[1], batch.udot(0)[2]}};
  return {dot(v, s.downhill), dot(udot, s.downhill), batch.groundContact(0, 0).slipSpeed};
}

// The model has no stiction: below the static angle the sphere creeps, slower than the
// transition velocity, at the speed the friction law gives. (The slope is steeper than the
// dynamic friction angle, so that only the friction law's rise to us below vt holds it.)
TEST(GroundContact, CreepsBelowTheStaticFrictionAngle) {
  const double a = std::atan(0.6);  // ud = 0.5 < tan a = 0.6 < us = 0.8
  const GroundMaterial mat = slopeMaterial();
  const SlopeRun r = runOnSlope(a, 10000);  // 1 s
  const double expected = creepSpeed(mat, a);
  std::printf("creep speed %.10g m/s (friction law %.10g, transition velocity %g)\n", r.speed, expected,
              mat.transitionVelocity);
  EXPECT_GT(r.speed, 0.0);
  EXPECT_LT(r.speed, mat.transitionVelocity);
  EXPECT_NEAR(r.speed, expected, 1e-6 * expected);
  EXPECT_NEAR(r.slipSpeed, r.speed, 1e-6 * expected);
  EXPECT_NEAR(r.accel, 0.0, 1e-6);
}

// Above it the sphere accelerates; once it slides much faster than the transition velocity the
// friction is dynamic: a = g (sin a - ud cos a).
TEST(GroundContact, SlidesWithDynamicFrictionAboveTheStaticAngle) {
  const double a = std::atan(1.2);  // tan a = 1.2 > us = 0.8
  const GroundMaterial mat = slopeMaterial();
  const SlopeRun r = runOnSlope(a, 5000);  // 0.5 s
  const double expected = kG * (std::sin(a) - mat.dynamicFriction * std::cos(a));
  std::printf("sliding at %.4g m/s: acceleration %.10g, g (sin a - ud cos a) = %.10g (relative %.2g)\n", r.speed,
              r.accel, expected, std::abs(r.accel - expected) / expected);
  EXPECT_GT(r.speed, 100 * mat.transitionVelocity);
  EXPECT_NEAR(r.accel, expected, 1e-4 * expected);
  // And the speed gained over the run is nearly all at that rate.
  EXPECT_NEAR(r.speed, expected * 0.5, 0.01 * expected * 0.5);
}

// A free box with a sphere at each bottom corner and an arm on a pin with a sphere at its tip,
// dropped turning and sliding onto a tilted plane with friction.
std::shared_ptr<const Model> tumblingBox() {
  ModelBuilder mb;
  mb.setGravity({{0.3, -0.2, -kG}});
  BodyDesc box;
  box.name = "box";
  box.mobilizer = MobilizerType::Free;
  box.mass.mass = 2.0;
  box.mass.inertia = SymMat33d::diagonal(0.02, 0.03, 0.04);
  mb.addBody(box);
  BodyDesc arm;
  arm.name = "arm";
  arm.parent = "box";
  arm.mobilizer = MobilizerType::Pin;
  arm.X_PF = {Rotationd::aboutAxis(0, 0.5 * M_PI), {{0.15, 0, 0}}};
  arm.mass.mass = 0.5;
  arm.mass.com = {{0.1, 0, 0}};
  arm.mass.inertia = SymMat33d::diagonal(0.001, 0.002, 0.002);
  arm.damping = {0.01};
  mb.addBody(arm);
  GroundMaterial mat;
  mat.stiffness = 2e6;
  mat.dissipation = 1.0;
  mat.staticFriction = 0.9;
  mat.dynamicFriction = 0.6;
  mat.viscousFriction = 0.05;
  int k = 0;
  for (double x : {-0.1, 0.1})
    for (double y : {-0.08, 0.08}) {
      GroundContactDesc c;
      c.name = "corner" + std::to_string(k++);
      c.body = "box";
      c.center = {{x, y, -0.05}};
      c.radius = 0.02;
      c.planeNormal = {{0.05, 0.1, 1}};
      c.material = mat;
      mb.add(c);
    }
  GroundContactDesc tip;
  tip.name = "tip";
  tip.body = "arm";
  tip.center = {{0.2, 0, 0}};
  tip.radius = 0.03;
  tip.planeNormal = {{0.05, 0.1, 1}};
  tip.material = mat;
  mb.add(tip);
  return mb.build();
}

std::vector<double> tumblingBoxQ() {
  // A small tilt, 8 cm up (the corners 1 cm above the plane), the arm hanging at 0.3 rad.
  const double h = 0.5 * 0.1;
  return {std::cos(h), std::sin(h), 0.3 * std::sin(h), 0, 0, 0, 0.08, 0.3};
}
std::vector<double> tumblingBoxU() { return {0.5, -1.0, 2.0, 0.4, -0.3, -0.5, 1.0}; }

double totalEnergy(Batch<double>& batch, std::int64_t w) {
  batch.evaluate();
  double e = batch.kineticEnergy(w) + batch.potentialEnergy(w);
  for (double z : batch.z(w)) e += z;
  return e;
}

// KE + PE + dissipated energy + what the contacts absorbed (minus their work) stays constant; the
// drift falls at RK4's fourth order when the step is halved.
TEST(GroundContact, EnergyBalanceClosesWithContactsOn) {
  const auto model = tumblingBox();
  auto drift = [&](double dt, std::vector<double>* z) {
    Batch<double> batch(model, 1);
    batch.setQ(0, tumblingBoxQ());
    batch.setU(0, tumblingBoxU());
    const double e0 = totalEnergy(batch, 0);
    batch.step(dt, static_cast<int>(std::lround(0.4 / dt)), Integrator::RK4);
    const double e1 = totalEnergy(batch, 0);
    EXPECT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    if (z) *z = batch.z(0);
    return std::abs(e1 - e0) / std::abs(e0);
  };
  std::vector<double> z;
  const double d1 = drift(2e-4, &z);
  const double d2 = drift(1e-4, nullptr);
  double absorbed = 0;
  for (int i = 0; i < static_cast<int>(model->groundContacts().size()); ++i) absorbed += z[model->groundContactZ(i)];
  std::printf("energy drift %.3g (dt 2e-4), %.3g (dt 1e-4); contacts absorbed %.4g J\n", d1, d2, absorbed);
  EXPECT_GT(absorbed, 0.1);  // the contacts did work (friction and Hunt-Crossley took energy out)
  EXPECT_LT(d2, 1e-8);
  EXPECT_GT(d1 / d2, 12.0) << d1 << " " << d2;
}

// Per-world friction, stiffness and sphere sizes: each world of a batch equals that world alone.
TEST(GroundContact, WorldOfABatchEqualsTheSameWorldAloneBitForBit) {
  const auto model = tumblingBox();
  const int n = 13;
  auto configure = [&](Batch<double>& b, std::int64_t slot, int w) {
    std::vector<double> u = tumblingBoxU();
    for (double& x : u) x *= 1.0 + 0.02 * w;
    b.setQ(slot, tumblingBoxQ());
    b.setU(slot, u);
    GroundMaterial mat = b.groundMaterial(slot, 0);
    mat.staticFriction = 0.5 + 0.05 * w;
    mat.dynamicFriction = 0.3 + 0.03 * w;
    mat.stiffness = 1e6 * (1 + 0.1 * w);
    for (int i = 0; i < 5; ++i) b.setGroundMaterial(slot, i, mat);
    b.setParameter(slot, "ground.tip.radius", 0.03 + 0.001 * w);
  };
  Batch<double> batch(model, n);
  for (int w = 0; w < n; ++w) configure(batch, w, w);
  batch.step(1e-4, 300, Integrator::RK4);
  for (int w : {0, 5, 12}) {
    Batch<double> alone(model, 1);
    configure(alone, 0, w);
    alone.step(1e-4, 300, Integrator::RK4);
    EXPECT_EQ(alone.q(0), batch.q(w)) << w;
    EXPECT_EQ(alone.u(0), batch.u(w)) << w;
    EXPECT_EQ(alone.z(0), batch.z(w)) << w;
  }
  // The worlds differ (the parameters took effect).
  EXPECT_NE(batch.q(0), batch.q(12));
}

TEST(GroundContact, ParametersByNameAndTheirChecks) {
  const auto model = tumblingBox();
  Batch<double> batch(model, 3);
  batch.setParameter(1, "ground.corner2.static_friction", 0.7);
  EXPECT_EQ(batch.groundMaterial(1, 2).staticFriction, 0.7);
  EXPECT_EQ(batch.groundMaterial(0, 2).staticFriction, 0.9);
  const std::vector<std::string> names = batch.parameterNames();
  for (const char* name : {"ground.tip.stiffness", "ground.tip.transition_velocity", "ground.tip.cf", "ground.tip.bd",
                           "ground.tip.bv", "ground.tip.radius", "ground.tip.normal.z", "ground.corner0.center.x"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  auto fails = [&](auto f, const std::string& field) {
    try {
      f();
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("ground contact 'tip'"), std::string::npos) << what;
      EXPECT_NE(what.find(field), std::string::npos) << what;
    }
  };
  fails([&] { batch.setParameter(0, "ground.tip.stiffness", -1); }, "stiffness");
  fails([&] { batch.setParameter(0, "ground.tip.radius", 0); }, "radius");
  fails([&] { batch.setParameter(0, "ground.tip.dynamic_friction", std::nan("")); }, "dynamic friction");
  fails([&] { batch.setParameter(0, "ground.tip.transition_velocity", 0); }, "transition velocity");
  fails([&] { batch.setGroundPlane(0, 4, Vec3d::zero(), Vec3d::zero()); }, "normal");
  // Static friction below the dynamic (0.6): refused, by name and by block, and by the builder.
  fails([&] { batch.setParameter(0, "ground.tip.static_friction", 0.5); },
        "static friction: must be >= the dynamic friction (got 0.5 < 0.6)");
  GroundMaterial slippery = batch.groundMaterial(0, 4);
  slippery.dynamicFriction = 1.2;
  fails([&] { batch.setGroundMaterial(0, 4, slippery); }, "static friction");
  {
    ModelBuilder below = ModelBuilder::fromModel(*model);
    GroundContactDesc c = model->groundContacts()[0].desc;
    c.name = "below";
    c.material.staticFriction = 0.1;
    below.add(c);
    EXPECT_THROW(below.build(), ModelError);
  }
  // The builder refuses the same.
  GroundContactDesc d;
  d.body = "box";
  d.radius = -0.1;
  ModelBuilder mb = ModelBuilder::fromModel(*model);
  mb.add(d);
  EXPECT_THROW(mb.build(), ModelError);
  GroundContactDesc onGround;
  onGround.body = "ground";
  ModelBuilder mb2 = ModelBuilder::fromModel(*model);
  mb2.add(onGround);
  EXPECT_THROW(mb2.build(), ModelError);
}

// Hunt and Crossley's law at one penetration x and one approach speed vn, with cf and the tanh
// transitions made negligible: the normal force (4/3) E_eff sqrt(R) x^(3/2) (1 + (3/2) c vn) along
// the plane's unit outward normal; sliding at a speed far above the transition velocity, Coulomb's
// dynamic friction plus the viscous term, fN (ud + uv |vt|), against the slip. A tilted, non-unit
// normal, so that the direction is checked as well as the sizes.
TEST(GroundContact, ForceIsHuntCrossleysClosedFormAtAGivenPenetrationAndSpeed) {
  const double R = 0.1, x = 0.004, vn = 0.4, vSlip = 2.0;
  GroundContactParams<double> p;
  p.center = Vec3d::zero();
  p.radius = R;
  p.normal = {{0, 3, 4}};  // unit: (0, 0.6, 0.8)
  p.point = {{0.2, -0.1, 0.3}};
  p.stiffness = 2e7;
  p.dissipation = 0.5;
  p.staticFriction = 0.7;
  p.dynamicFriction = 0.7;  // equal: no Stribeck peak, Coulomb alone
  p.viscousFriction = 0.05;
  p.transitionVelocity = 1e-3;
  p.cf = 1e-16;  // (x^2 + cf)^(3/4) = x^(3/2) to 1e-11, and vs = |vt| to 1e-17
  p.bd = 1e4;    // tanh(bd x) = 1 to 1e-34
  p.bv = 1e3;    // tanh(bv (vn + 2/(3c))) = 1
  const Vec3d n = {{0, 0.6, 0.8}}, t = {{1, 0, 0}};
  const Transformd X_GB{Rotationd::identity(), p.point + (R - x) * n};
  SpatialVec<double> V_GB;
  V_GB.ang = Vec3d::zero();
  V_GB.lin = vSlip * t - vn * n;
  const GroundContactQuantities<double> r = evaluateGroundContact(X_GB, V_GB, p);

  const double Eeff = p.stiffness / (2 * std::sqrt(2.0));
  const double fN = 4.0 / 3.0 * Eeff * std::sqrt(R) * std::pow(x, 1.5) * (1 + 1.5 * p.dissipation * vn);
  const double fF = fN * (p.dynamicFriction + p.viscousFriction * vSlip);
  EXPECT_NEAR(r.penetration, x, 1e-15);
  EXPECT_NEAR(r.normalVelocity, vn, 1e-15);
  EXPECT_NEAR(r.slipSpeed, vSlip, 1e-14);
  EXPECT_NEAR(r.normalForce, fN, 1e-10 * fN);
  EXPECT_NEAR(r.frictionForce, fF, 1e-10 * fF);
  const Vec3d F = fN * n - fF * t;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.forceOnSphere[k], F[k], 1e-10 * fN) << k;
  EXPECT_NEAR(r.power, -fN * vn - fF * vSlip, 1e-10 * fN * vSlip);
  // The contact point lies halfway into the overlap, on the line through the center along n.
  const Vec3d p_GP = p.point + (R - x) * n - (R - 0.5 * x) * n;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.p_GP[k], p_GP[k], 1e-15) << k;
}

// A normal's length does not matter, however large or small: [0, 0, 1e155] (whose |n|^2 overflows)
// and [0, 0, 1e-170] (whose |n|^2 underflows) act as [0, 0, 1], given to the model or per world.
TEST(GroundContact, NormalsOfExtremeLengthActAsTheUnitNormal) {
  GroundMaterial mat;
  mat.stiffness = 1e7;
  mat.dissipation = 0.5;
  mat.staticFriction = 0.8;
  mat.dynamicFriction = 0.5;
  const double R = 0.1;
  const std::vector<double> q = {0.02, -0.01, R - 0.003}, u = {0.3, 0.1, -0.2};
  auto contactOf = [&](const std::shared_ptr<const Model>& model) {
    Batch<double> batch(model, 1);
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.evaluate();
    return batch.groundContact(0, 0);
  };
  const GroundContactQuantities<double> unit = contactOf(slidingSphere(1, R, {{0, 0, 1}}, mat));
  ASSERT_GT(unit.normalForce, 0);
  for (double z : {1e155, 1e-170, 1e300, 4.9e-324}) {
    const auto model = slidingSphere(1, R, {{0, 0, z}}, mat);
    const GroundContactQuantities<double> r = contactOf(model);
    EXPECT_EQ(r.normalForce, unit.normalForce) << z;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(r.forceOnSphere[k], unit.forceOnSphere[k]) << z;
    // A float batch of the same model (no float holds 1e155 or 1e-170; the model holds it unit).
    Batch<float> f(model, 1);
    f.setQ(0, q);
    f.setU(0, u);
    f.evaluate();
    EXPECT_NEAR(f.groundContact(0, 0).normalForce, unit.normalForce, 1e-4 * unit.normalForce) << z;
    // The same normal set per world, through the parameters by name and by block.
    Batch<double> batch(slidingSphere(1, R, {{0, 0, 1}}, mat), 2);
    batch.setParameter(0, "ground.ball.normal.z", z);
    batch.setGroundPlane(1, 0, {{0, 0, z}}, Vec3d::zero());
    for (std::int64_t w = 0; w < 2; ++w) {
      batch.setQ(w, q);
      batch.setU(w, u);
    }
    batch.evaluate();
    for (std::int64_t w = 0; w < 2; ++w) {
      const GroundContactQuantities<double> pw = batch.groundContact(w, 0);
      EXPECT_EQ(pw.normalForce, unit.normalForce) << z << " world " << w;
      for (int k = 0; k < 3; ++k) EXPECT_EQ(pw.forceOnSphere[k], unit.forceOnSphere[k]) << z << " world " << w;
    }
  }
}

// The float batch on CPU packs agrees with double to float's accuracy over a short run.
TEST(GroundContact, FloatFollowsDouble) {
  const auto model = tumblingBox();
  Batch<double> d(model, 8);
  Batch<float> f(model, 8);
  d.setAllStates(tumblingBoxQ(), tumblingBoxU());
  f.setAllStates(tumblingBoxQ(), tumblingBoxU());
  d.step(1e-4, 200, Integrator::RK4);
  f.step(1e-4, 200, Integrator::RK4);
  ASSERT_EQ(f.status(3), kStatusOk);
  EXPECT_TRUE(near(vec(f.q(3)), vec(d.q(3)), 1e-4));
}

TEST(GroundContact, CudaBackendMatchesCpuBackend) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = tumblingBox();
  const int n = 256;
  Batch<double> cpu(model, n, Backend::Cpu), gpu(model, n, Backend::Cuda);
  for (int w = 0; w < n; ++w) {
    std::vector<double> u = tumblingBoxU();
    for (double& x : u) x *= 1.0 + 0.002 * w;
    for (Batch<double>* b : {&cpu, &gpu}) {
      b->setQ(w, tumblingBoxQ());
      b->setU(w, u);
      b->setParameter(w, "ground.corner1.static_friction", 0.7 + 0.001 * w);
    }
  }
  gpu.upload();
  cpu.evaluate();
  gpu.evaluate();
  gpu.download();
  for (int w : {0, 7, 255}) EXPECT_TRUE(near(vec(gpu.udot(w)), vec(cpu.udot(w)), 1e-12)) << w;
  cpu.step(1e-4, 500, Integrator::RK4);
  gpu.step(1e-4, 500, Integrator::RK4);
  gpu.download();
  double worst = 0;
  for (int w = 0; w < n; w += 17) {
    EXPECT_TRUE(near(vec(gpu.q(w)), vec(cpu.q(w)), 1e-9)) << w;
    EXPECT_TRUE(near(vec(gpu.z(w)), vec(cpu.z(w)), 1e-9)) << w;
    EXPECT_EQ(gpu.status(w), cpu.status(w));
    worst = std::max(worst, (vec(gpu.q(w)) - vec(cpu.q(w))).cwiseAbs().maxCoeff());
  }
  std::printf("GPU vs CPU after 500 RK4 steps with contacts: max |dq| %.3g\n", worst);
}

}  // namespace
}  // namespace lockstep::test
