// Joint stops (Simbody's MobilityLinearStop) and PD actuators against closed forms: a pendulum
// resting on a stop, the stop's force law and its no-sticking clamp, a PD-driven pin's second-order
// step response (critically and under-damped), the effort clamp; the energy balance KE + PE +
// sum(z) along RK4 with every element on; per-world gains (a world alone equals the same world in
// a batch whose other worlds differ, bit for bit); the parameters' names and checks.
// (Agreement with Simbody itself: tests/test_simbody.cpp and tests/frontend/test_urdf_simbody.cpp.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "lockstep/engine/batch.h"
#include "lockstep/study/study.h"
#include "random_tree.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

#define EXPECT_ERROR_CONTAINS(statement, text) EXPECT_ERROR_CONTAINS_OF(statement, text, std::exception)

// One body on a pin about z at Ground's origin: mass m, center of mass at (l, 0, 0), central
// inertia J about z (so that the inertia about the axis is J + m l^2), gravity (0, -g, 0).
std::shared_ptr<const Model> pinModel(double m, double l, double J, double g, const JointStopDesc* stop,
                                      const ActuatorDesc* actuator, double effortLimit = kInf) {
  ModelBuilder mb;
  mb.setGravity({{0, -g, 0}});
  BodyDesc b;
  b.name = "arm";
  b.jointName = "hinge";
  b.mobilizer = MobilizerType::Pin;
  b.mass.mass = m;
  b.mass.com = {{l, 0, 0}};
  b.mass.inertia = SymMat33d::diagonal(J, J, J);
  if (effortLimit < kInf) b.effortLimit = {effortLimit};
  mb.addBody(b);
  if (stop) mb.add(*stop);
  if (actuator) mb.add(*actuator);
  return mb.build();
}

TEST(JointStop, PendulumRestsOnItsStopWhereStiffnessBalancesGravity) {
  // Horizontal arm; gravity pulls q negative; the stop's lower bound is at 0, so at rest
  // k (-q) = m g l cos q (q = -m g l / k to first order).
  const double m = 2, l = 0.5, g = 9.81, k = 400;
  JointStopDesc stop{"hinge", 0.0, 1.0, k, 0.5};
  const auto model = pinModel(m, l, 0.01, g, &stop, nullptr);
  Batch<double> batch(model, 1);
  batch.setParameter(0, "damping.hinge", 0.5);  // settles faster
  batch.step(1e-3, 8000, Integrator::RK4);
  batch.evaluate();
  double q = -m * g * l / k;  // Newton on k q + m g l cos q = 0
  for (int i = 0; i < 20; ++i) q -= (k * q + m * g * l * std::cos(q)) / (k - m * g * l * std::sin(q));
  EXPECT_NEAR(batch.q(0)[0], q, 1e-9);
  EXPECT_NEAR(batch.q(0)[0], -m * g * l / k, 1e-4);  // the first-order figure m g l / k
  EXPECT_NEAR(batch.stopForces(0)[0], m * g * l * std::cos(q), 1e-7);
  EXPECT_NEAR(batch.potentialEnergy(0), 0.5 * k * q * q + m * g * l * std::sin(q), 1e-9);  // stop + gravity
}

TEST(JointStop, ForceLawDissipationAndNoSticking) {
  const double k = 300, d = 0.8;
  JointStopDesc stop{"hinge", -0.2, 0.3, k, d};
  const auto model = pinModel(1, 0.2, 0.01, 0, &stop, nullptr);
  Batch<double> batch(model, 1);
  struct Case {
    double q, u, f;
  };
  const Case cases[] = {
      {0.1, 5.0, 0.0},                                      // within the bounds: nothing
      {0.35, 0.5, -k * 0.05 * (1 + d * 0.5)},               // above, moving in
      {0.35, -0.5, -k * 0.05 * (1 - d * 0.5)},              // above, moving out
      {0.35, -2.0, 0.0},                                    // above, leaving fast: no sticking force
      {-0.26, -0.7, k * 0.06 * (1 + d * 0.7)},              // below, moving in
      {-0.26, 3.0, 0.0},                                    // below, leaving fast
  };
  for (const Case& c : cases) {
    batch.setQ(0, {c.q});
    batch.setU(0, {c.u});
    batch.evaluate();
    EXPECT_NEAR(batch.stopForces(0)[0], c.f, 1e-12 * k) << c.q << " " << c.u;
    EXPECT_NEAR(batch.appliedMobilityForces(0)[0], c.f, 1e-12 * k);
    const double x = c.q > 0.3 ? c.q - 0.3 : (c.q < -0.2 ? c.q + 0.2 : 0.0);
    const double pe = 0.5 * k * x * x;  // no gravity
    EXPECT_NEAR(batch.potentialEnergy(0), pe, 1e-12);
  }
}

// A pin with inertia I about its axis, no gravity, PD to target qt from rest at 0:
// I q'' = kp (qt - q) - kd q', wn = sqrt(kp / I), zeta = kd / (2 sqrt(kp I)).
double stepResponse(double t, double qt, double wn, double zeta) {
  if (zeta == 1) return qt * (1 - (1 + wn * t) * std::exp(-wn * t));
  const double wd = wn * std::sqrt(1 - zeta * zeta);
  return qt * (1 - std::exp(-zeta * wn * t) * (std::cos(wd * t) + zeta / std::sqrt(1 - zeta * zeta) * std::sin(wd * t)));
}

TEST(PdActuator, PinFollowsTheSecondOrderStepResponse) {
  const double I = 0.05, kp = 20, qt = 0.7;
  const double wn = std::sqrt(kp / I);
  for (double zeta : {1.0, 0.3}) {
    SCOPED_TRACE(zeta);
    const double kd = 2 * zeta * std::sqrt(kp * I);
    ActuatorDesc a{"hinge", ActuatorMode::Position, kp, kd};
    const auto model = pinModel(1, 0, I, 9.81, nullptr, &a);  // com on the axis: gravity does nothing
    Batch<double> batch(model, 1);
    batch.setTargets(0, {qt}, {0.0});
    const double dt = 1e-4;
    double worst = 0;
    for (int k = 1; k <= 10; ++k) {
      batch.step(dt, 500, Integrator::RK4);
      const double t = k * 500 * dt;
      worst = std::max(worst, std::abs(batch.q(0)[0] - stepResponse(t, qt, wn, zeta)));
    }
    EXPECT_LT(worst, 1e-10 * qt);
    // The actuator's work (its kp part gives kp qt^2 / 2, its kd part takes back what is not
    // kinetic energy) is carried by the "actuation" state: KE + PE + sum(z) = 0 from rest, to
    // rounding of the energies that flowed (kp qt^2 / 2).
    batch.evaluate();
    double z = 0;
    for (double x : batch.z(0)) z += x;
    EXPECT_NEAR(batch.kineticEnergy(0) + batch.potentialEnergy(0) + z, 0.0, 1e-11 * 0.5 * kp * qt * qt);
    EXPECT_NEAR(batch.actuatorWork(0), batch.kineticEnergy(0), 1e-11 * 0.5 * kp * qt * qt);  // no other source
  }
}

TEST(PdActuator, VelocityModeTracksTheTargetSpeed) {
  // I u' = kd (ut - u): u = ut (1 - exp(-kd t / I)); kp is ignored in velocity mode.
  const double I = 0.05, kd = 0.4, ut = 2.0;
  ActuatorDesc a{"hinge", ActuatorMode::Velocity, 1000, kd};
  const auto model = pinModel(1, 0, I, 0, nullptr, &a);
  Batch<double> batch(model, 1);
  batch.setTargets(0, {5.0}, {ut});
  batch.step(1e-4, 2000, Integrator::RK4);
  EXPECT_NEAR(batch.u(0)[0], ut * (1 - std::exp(-kd * 0.2 / I)), 1e-10);
}

TEST(PdActuator, EffortIsClampedToTheLimit) {
  // Far from the target, kp (qt - q) exceeds the limit L: the arm accelerates at L / I exactly
  // (q = L t^2 / (2 I)) and the reported effort and power are L and L u.
  const double I = 0.05, L = 0.3, kp = 50, qt = 2.0;
  ActuatorDesc a{"hinge", ActuatorMode::Position, kp, 0.1};
  const auto model = pinModel(1, 0, I, 0, nullptr, &a, L);
  Batch<double> batch(model, 1);
  batch.setTargets(0, {qt}, {0.0});
  batch.setTau(0, {0.5});  // actions add to the PD before the clamp
  batch.step(1e-3, 100, Integrator::RK4);
  const double t = 0.1;
  EXPECT_NEAR(batch.q(0)[0], L * t * t / (2 * I), 1e-12);
  EXPECT_NEAR(batch.u(0)[0], L * t / I, 1e-12);
  EXPECT_EQ(batch.actuatorEfforts(0)[0], L);
  EXPECT_NEAR(batch.actuatorPowers(0)[0], L * L * t / I, 1e-12);
  EXPECT_NEAR(batch.actuatorWork(0), L * L * t * t / (2 * I), 1e-12);  // all of it kinetic energy
  // Below: -L.
  batch.setTau(0, {-100.0});
  batch.evaluate();
  EXPECT_EQ(batch.actuatorEfforts(0)[0], -L);
  EXPECT_EQ(batch.appliedMobilityForces(0)[0], -L);
}

// A second check of the clamp, on the path of models with neither stop nor actuator (the action
// tau alone is clamped there), and on a torque actuator: the acceleration is clamp(tau, L) / I
// for tau below, within and above the limit, and tau itself where the limit is infinite.
TEST(EffortLimit, ClampsTheActionWithAndWithoutActuators) {
  const double I = 0.05, L = 0.3;
  const ActuatorDesc torque{"hinge", ActuatorMode::Torque, 0, 0};
  for (const ActuatorDesc* a : {static_cast<const ActuatorDesc*>(nullptr), &torque}) {
    for (double limit : {L, kInf}) {
      const auto model = pinModel(1, 0, I, 0, nullptr, a, limit);
      ASSERT_EQ(model->actuators().size(), a ? 1u : 0u);
      Batch<double> batch(model, 1);
      for (double tau : {-5.0, -0.2, 0.0, 0.1, 0.3, 7.0}) {
        batch.setTau(0, {tau});
        batch.evaluate();
        const double applied = std::min(limit, std::max(-limit, tau));
        EXPECT_EQ(batch.appliedMobilityForces(0)[0], applied) << tau << " limit " << limit << (a ? " actuated" : "");
        EXPECT_NEAR(batch.udot(0)[0], applied / I, 1e-14) << tau << " limit " << limit << (a ? " actuated" : "");
      }
    }
  }
}

// KE + PE + sum(z): constant along RK4 with stops, PD actuators (clamped some of the time),
// actions, joint damping, bushings and spring-dampers all on.
TEST(JointStopsAndActuators, EnergyBalanceClosesAlongRk4) {
  Random rnd(710);
  for (int trial = 0; trial < 4; ++trial) {
    const RandomCase base = randomTreeWithElements(rnd, 3 + trial, 1, 1);
    const ActuatedCase c = withStopsAndActuators(rnd, base, true, true);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    batch.setTargets(0, c.targetPosition, c.targetVelocity);
    for (int i = 0; i < c.model->nu(); ++i) batch.setParameter(0, "effort_limit." + c.model->uNames()[i], 3.0);
    auto total = [&] {
      batch.evaluate();
      double e = batch.kineticEnergy(0) + batch.potentialEnergy(0);
      for (double z : batch.z(0)) e += z;
      return e;
    };
    const double e0 = total();
    double drift = 0, scale = std::abs(batch.kineticEnergy(0)) + std::abs(batch.potentialEnergy(0));
    for (int k = 0; k < 20; ++k) {
      batch.step(2e-5, 100, Integrator::RK4);
      ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
      drift = std::max(drift, std::abs(total() - e0));
      scale = std::max(scale, std::abs(batch.kineticEnergy(0)) + std::abs(batch.actuatorWork(0)));
    }
    EXPECT_LT(drift, 1e-6 * scale) << "trial " << trial;
    std::printf("trial %d: energy balance drift %.2e of %.2e J over 2000 RK4 steps\n", trial, drift, scale);
    EXPECT_NE(batch.actuatorWork(0), 0.0);
  }
}

TEST(JointStopsAndActuators, WorldAloneEqualsTheSameWorldInABatchBitForBit) {
  Random rnd(711);
  const ActuatedCase c = withStopsAndActuators(rnd, randomTree(rnd, 7), true, true);
  const int n = 13;
  const int stopped = c.model->stops().front().u, actuated = c.model->actuators().front().u;
  const std::string stopName = "stop." + c.model->uNames()[stopped] + ".stiffness";
  const std::string kpName = "actuator." + c.model->uNames()[actuated] + ".kp";
  const std::string kdName = "actuator." + c.model->uNames()[actuated] + ".kd";
  Batch<double> batch(c.model, n);
  for (int w = 0; w < n; ++w) {
    batch.setQ(w, c.q);
    batch.setU(w, c.u);
    batch.setTargets(w, c.targetPosition, c.targetVelocity);
    batch.setParameter(w, kpName, 10.0 + w);
    batch.setParameter(w, kdName, 0.5 + 0.1 * w);
    batch.setParameter(w, stopName, 50.0 + 7 * w);
  }
  batch.step(1e-3, 200, Integrator::RK4);
  for (int w : {0, 6, 12}) {
    Batch<double> alone(c.model, 1);
    alone.setQ(0, c.q);
    alone.setU(0, c.u);
    alone.setTargets(0, c.targetPosition, c.targetVelocity);
    alone.setParameter(0, kpName, 10.0 + w);
    alone.setParameter(0, kdName, 0.5 + 0.1 * w);
    alone.setParameter(0, stopName, 50.0 + 7 * w);
    alone.step(1e-3, 200, Integrator::RK4);
    EXPECT_EQ(alone.q(0), batch.q(w)) << w;
    EXPECT_EQ(alone.u(0), batch.u(w)) << w;
    EXPECT_EQ(alone.z(0), batch.z(w)) << w;
    EXPECT_EQ(alone.actuatorEfforts(0), batch.actuatorEfforts(w)) << w;
  }
  EXPECT_NE(batch.q(0), batch.q(12));  // the gains made a difference
}

TEST(JointStopsAndActuators, ParametersByNameAndTheirChecks) {
  JointStopDesc stop{"hinge", -0.5, 0.5, 100, 0.1};
  ActuatorDesc a{"hinge", ActuatorMode::Position, 10, 1};
  const auto model = pinModel(1, 0.2, 0.01, 9.81, &stop, &a);
  Batch<double> batch(model, 2);
  EXPECT_EQ(batch.parameter(0, "stop.hinge.lower"), -0.5);
  EXPECT_EQ(batch.parameter(1, "stop.hinge.dissipation"), 0.1);
  EXPECT_EQ(batch.parameter(0, "actuator.hinge.mode"), 1.0);
  EXPECT_EQ(batch.parameter(0, "actuator.hinge.kd"), 1.0);
  batch.setParameter(1, "actuator.hinge.kp", 25);
  EXPECT_EQ(batch.parameter(1, "actuator.hinge.kp"), 25.0);
  EXPECT_EQ(batch.parameter(0, "actuator.hinge.kp"), 10.0);
  EXPECT_ERROR_CONTAINS(batch.setParameter(0, "actuator.hinge.kp", -1), "kp: must be >= 0");
  EXPECT_ERROR_CONTAINS(batch.setParameter(0, "actuator.hinge.mode", 3), "mode: must be 0 (torque)");
  EXPECT_ERROR_CONTAINS(batch.setParameter(0, "stop.hinge.lower", 0.7), "lower: must be <= upper");
  EXPECT_ERROR_CONTAINS(batch.setParameter(0, "stop.hinge.stiffness", -3), "stiffness: must be >= 0");
  EXPECT_ERROR_CONTAINS(batch.setParameter(0, "stop.hinge.upper", std::nan("")), "upper: must be a number");
  batch.setParameter(0, "stop.hinge.upper", kInf);  // no upper stop
  EXPECT_EQ(batch.parameter(0, "stop.hinge.upper"), kInf);

  // The builder refuses the same, naming the element and the field, and a coordinate whose qdot
  // is not u.
  auto build = [](const JointStopDesc* s, const ActuatorDesc* act) { return pinModel(1, 0.2, 0.01, 9.81, s, act); };
  JointStopDesc bad = stop;
  bad.lower = 1;
  EXPECT_ERROR_CONTAINS(build(&bad, nullptr), "joint stop 'hinge': lower: must be <= upper (got 1 > 0.5)");
  bad = stop;
  bad.dissipation = -1;
  EXPECT_ERROR_CONTAINS(build(&bad, nullptr), "joint stop 'hinge': dissipation: must be >= 0");
  bad = stop;
  bad.coordinate = "elbow";
  EXPECT_ERROR_CONTAINS(build(&bad, nullptr), "joint stop 'elbow': coordinate: no coordinate named 'elbow'");
  ActuatorDesc badA = a;
  badA.kd = std::nan("");
  EXPECT_ERROR_CONTAINS(build(nullptr, &badA), "actuator 'hinge': kd: must be a finite number");

  ModelBuilder mb;
  BodyDesc ball;
  ball.name = "ball";
  ball.mobilizer = MobilizerType::Ball;
  ball.mass.mass = 1;
  ball.mass.inertia = SymMat33d::diagonal(0.1, 0.1, 0.1);
  mb.addBody(ball);
  mb.add(JointStopDesc{"ball.qx", -1, 1, 10, 0});
  EXPECT_ERROR_CONTAINS(mb.build(), "joint stop 'ball.qx': coordinate: 'ball.qx' belongs to a ball mobilizer, whose qdot is not u");
  ModelBuilder plain;
  plain.addBody(ball);
  Batch<double> b2(plain.build(), 1);
  EXPECT_ERROR_CONTAINS(b2.setParameter(0, "actuator.ball.wx.mode", 1), "PD actuators need a coordinate whose qdot");
  EXPECT_ERROR_CONTAINS(b2.setParameter(0, "stop.ball.wx.upper", 1), "joint stops (as Simbody's MobilityLinearStop)");
  // A model that declares no stop and no actuator runs without their code: turning one on per world
  // is refused (inactive values are accepted).
  Batch<double> b3(pinModel(1, 0.2, 0.01, 9.81, nullptr, nullptr), 1);
  EXPECT_ERROR_CONTAINS(b3.setParameter(0, "actuator.hinge.mode", 1), "declares no joint stop and no actuator");
  EXPECT_ERROR_CONTAINS(b3.setParameter(0, "stop.hinge.lower", -1), "declares no joint stop and no actuator");
  b3.setParameter(0, "actuator.hinge.kp", 5);
}

// Gains and stops are study parameters: a study varying kp spreads where the arm is after 0.1 s
// (a stiffer PD gets further towards its target), and the stop's bound is a name studies take.
TEST(JointStopsAndActuators, GainsAreVariableInStudies) {
  ActuatorDesc a{"hinge", ActuatorMode::Position, 20, 0.5};
  JointStopDesc stop{"hinge", -1, 1, 100, 0.1};
  const auto model = pinModel(1, 0, 0.05, 0, &stop, &a);
  StudySpec spec;
  spec.vary = {{"actuator.hinge.kp", Distribution::Uniform, 5, 50}, {"stop.hinge.upper", Distribution::Uniform, 1, 2}};
  spec.worlds = 64;
  spec.steps = 100;
  spec.outputs = {"q.hinge"};
  validateStudy(model, spec);
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu, {}, [](Batch<double>& b, std::int64_t) {
    for (std::int64_t w = 0; w < b.numWorlds(); ++w) b.setTargets(w, {0.5}, {0.0});
  });
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].count, 64);
  EXPECT_GT(r.outputs[0].min, 0.0);
  EXPECT_LT(r.outputs[0].max, 1.0);  // under-damped: up to 1.6 times the target at the stiffest
  EXPECT_GT(r.outputs[0].max - r.outputs[0].min, 0.05);
  spec.vary = {{"actuator.hinge.kq", Distribution::Uniform, 5, 50}};
  EXPECT_ERROR_CONTAINS(validateStudy(model, spec), "actuator.hinge.kq");
}

}  // namespace
}  // namespace lockstep::test
