// ConstantForce (Simbody's Force::ConstantForce): a closed form, the energy balance along a run,
// per-world parameters by name and bad input. Against Simbody on random trees: test_simbody.cpp;
// in scene files: frontend/test_scene.cpp.
#include <cmath>

#include "lockstep/engine/batch.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

// The message of the exception of type E that f throws ("" and a failure when it throws none).
template <class E, class F>
std::string messageOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing was thrown";
  return "";
}

// A body on a slider along x, pulled along and across the slider: udot = f_x / m, whatever the
// station (a slider carries the torque).
TEST(ConstantForce, SliderAcceleratesAtForceOverMass) {
  ModelBuilder mb;
  BodyDesc b;
  b.name = "cart";
  b.mobilizer = MobilizerType::Slider;
  b.mass.mass = 2.5;
  b.mass.inertia = {0.1, 0.1, 0.1, 0, 0, 0};
  mb.addBody(b);
  ConstantForceDesc f;
  f.name = "push";
  f.body = "cart";
  f.station = {{0.1, 0.3, -0.2}};
  f.force = {{4.0, 1.5, -3.0}};
  mb.add(f);
  Batch<double> batch(mb.build(), 2);
  batch.setParameter(1, "constant_force.push.force.x", -1.0);
  batch.evaluate();
  EXPECT_NEAR(batch.udot(0)[0], 4.0 / 2.5, 1e-14);
  EXPECT_NEAR(batch.udot(1)[0], -1.0 / 2.5, 1e-14);
  EXPECT_EQ(batch.parameter(1, "constant_force.push.station.y"), 0.3);
}

// A pendulum on a ball joint pulled sideways at its tip, under gravity: KE + PE (gravity and the
// constant force's -f . p_GS) + the dissipated energies stays constant along an RK4 run.
TEST(ConstantForce, EnergyIsConservedAlongARun) {
  ModelBuilder mb;
  mb.setGravity({{0, 0, -9.81}});
  BodyDesc b;
  b.name = "bob";
  b.mobilizer = MobilizerType::Ball;
  b.X_BM = Transformd::translation({{0, 0, 1}});
  b.mass.mass = 1.2;
  b.mass.inertia = {0.02, 0.03, 0.01, 0, 0, 0};
  b.damping = {0.05, 0.0, 0.02};
  mb.addBody(b);
  ConstantForceDesc f;
  f.body = "bob";
  f.station = {{0.05, 0, -0.1}};
  f.force = {{3.0, -1.0, 2.0}};
  mb.add(f);
  const auto model = mb.build();
  EXPECT_EQ(model->constantForces()[0].desc.name, "force0");
  Batch<double> batch(model, 1);
  batch.setAllStates({std::cos(0.4), std::sin(0.4), 0, 0}, {0.5, -1.0, 2.0});
  batch.evaluate();
  const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
  batch.step(1e-3, 2000, Integrator::RK4);
  batch.evaluate();
  ASSERT_EQ(batch.status(0), kStatusOk);
  double dissipated = 0;
  for (double z : batch.z(0)) dissipated += z;
  EXPECT_GT(dissipated, 1e-3);
  EXPECT_NEAR(batch.kineticEnergy(0) + batch.potentialEnergy(0) + dissipated, e0, 1e-9 * std::abs(e0) + 1e-9);
}

TEST(ConstantForce, BadInputIsRefusedNamingTheElement) {
  ModelBuilder mb;
  BodyDesc b;
  b.name = "link";
  b.mass.mass = 1;
  b.mass.inertia = {1, 1, 1, 0, 0, 0};
  mb.addBody(b);
  ConstantForceDesc f;
  f.name = "push";
  f.body = "ground";
  ModelBuilder onGround = mb;
  onGround.add(f);
  EXPECT_EQ(messageOf<ModelError>([&] { onGround.build(); }), "constant force 'push': body: must be a body, not ground");
  f.body = "nowhere";
  ModelBuilder unknown = mb;
  unknown.add(f);
  EXPECT_EQ(messageOf<ModelError>([&] { unknown.build(); }), "constant force 'push': body: no body named 'nowhere'");
  f.body = "link";
  f.force = {{1, NAN, 0}};
  ModelBuilder nan = mb;
  nan.add(f);
  EXPECT_EQ(messageOf<ModelError>([&] { nan.build(); }), "constant force 'push': force: must be a finite number");
  f.force = {{1, 0, 0}};
  mb.add(f);
  Batch<double> batch(mb.build(), 1);
  EXPECT_EQ(messageOf<ModelError>([&] { batch.setParameter(0, "constant_force.push.station.z", INFINITY); }),
            "world 0 constant force 'push': station: must be a finite number");
}

}  // namespace
}  // namespace lockstep::test
