// Lockstep against Simbody 3.7 on random trees of every mobilizer type and on chain-7.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "random_tree.h"
#include "simbody_oracle.h"

namespace lockstep::test {
namespace {

Eigen::VectorXd vec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

TEST(SimbodyOracle, RandomTreesGiveTheSameAccelerationsAndEnergies) {
  Random rnd(300);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = randomTree(rnd, 1 + trial % 12);
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk);
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    EXPECT_NEAR(batch.kineticEnergy(0), ref.kinetic, 1e-11 * std::max(1.0, std::abs(ref.kinetic)));
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential, 1e-11 * std::max(1.0, std::abs(ref.potential)));
  }
}

TEST(SimbodyOracle, BushingsAndSpringDampersGiveTheSameBodyForcesAndAccelerations) {
  Random rnd(302);
  int compared = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const RandomCase c = randomTreeWithElements(rnd, 2 + trial % 6, 1 + trial % 3, 1 + (trial + 1) % 3);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    bool singular = false;
    for (int i = 0; i < static_cast<int>(c.model->bushings().size()); ++i) singular |= batch.bushing(0, i).singular;
    if (singular) continue;
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau);
    const std::vector<SpatialVecd> F = batch.appliedBodyForces(0);
    for (std::size_t b = 0; b < F.size(); ++b)
      EXPECT_TRUE(near(toEigen(F[b]), toEigen(ref.bodyForces[b]), 1e-10)) << "trial " << trial << " body " << b;
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential, 1e-10 * std::max(1.0, std::abs(ref.potential)));
    ++compared;
  }
  EXPECT_GE(compared, 25);
}

// Random trees with a bushing, a spring-damper and one to three constant forces on random bodies.
TEST(SimbodyOracle, ConstantForcesGiveTheSameBodyForcesAndAccelerations) {
  Random rnd(4101);
  int compared = 0;
  for (int trial = 0; trial < 20; ++trial) {
    RandomCase c = randomTreeWithElements(rnd, 2 + trial % 5, 1, 1);
    ModelBuilder mb = ModelBuilder::fromModel(*c.model);
    for (int k = 0; k < 1 + trial % 3; ++k) {
      ConstantForceDesc d;
      d.body = c.model->body(rnd.integer(0, c.model->numBodies() - 1)).name;
      d.station = rnd.vec3(0.5);
      d.force = rnd.vec3(5.0);
      mb.add(d);
    }
    c.model = mb.build();
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    if (batch.bushing(0, 0).singular) continue;
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau);
    const std::vector<SpatialVecd> F = batch.appliedBodyForces(0);
    for (std::size_t b = 0; b < F.size(); ++b)
      EXPECT_TRUE(near(toEigen(F[b]), toEigen(ref.bodyForces[b]), 1e-10)) << "trial " << trial << " body " << b;
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    // Simbody counts no potential energy for a constant force; Lockstep counts -f_G . p_GS.
    double potential = ref.potential;
    for (const ConstantForce& e : c.model->constantForces())
      potential -= dot(e.desc.force, batch.bodyPose(0, e.body) * e.desc.station);
    EXPECT_NEAR(batch.potentialEnergy(0), potential, 1e-10 * std::max(1.0, std::abs(potential)));
    ++compared;
  }
  EXPECT_GE(compared, 15);
}

// Random trees with one to three sphere contacts, rolling or not, between random bodies or Ground.
RandomCase randomTreeWithContacts(Random& rnd, int nBodies, int nContacts) {
  RandomCase base = randomTreeWithElements(rnd, nBodies, 0, 0);
  ModelBuilder mb = ModelBuilder::fromModel(*base.model);
  // Two bodies can move relative to each other unless only Welds lie on the tree path between
  // them; a contact between rigidly joined bodies has no meaningful multipliers.
  const Model& m = *base.model;
  auto canMoveRelative = [&](int a, int b) {
    std::vector<int> pathA;
    for (int x = a; x >= 0; x = m.body(x).parent) pathA.push_back(x);
    for (int x = b; x >= 0; x = m.body(x).parent) {
      auto it = std::find(pathA.begin(), pathA.end(), x);
      if (it != pathA.end()) {
        pathA.erase(it, pathA.end());
        break;
      }
      if (m.body(x).nu > 0) return true;
    }
    for (int x : pathA)
      if (m.body(x).nu > 0) return true;
    return false;
  };
  for (int k = 0; k < nContacts; ++k) {
    SphereContactDesc c;
    int i, j;
    do {
      i = rnd.integer(-1, nBodies - 1);
      j = rnd.integer(0, nBodies - 1);
    } while (j == i || !canMoveRelative(i, j));
    c.bodyF = i < 0 ? "ground" : base.model->body(i).name;
    c.bodyB = base.model->body(j).name;
    c.centerOnF = rnd.vec3(0.5);
    c.centerOnB = rnd.vec3(0.5);
    c.radiusOnF = rnd.uniform(0.05, 0.5);
    c.radiusOnB = rnd.uniform(0.05, 0.5);
    c.enforceRolling = rnd.integer(0, 1) == 1;
    mb.add(c);
  }
  base.model = mb.build();
  return base;
}

TEST(SimbodyOracle, SphereContactsGiveTheSameAccelerationsAndMultipliers) {
  Random rnd(303);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = randomTreeWithContacts(rnd, 3 + trial % 6, 1 + trial % 3);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau);
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-9)) << "trial " << trial;
    for (int k = 0; k < static_cast<int>(c.model->contacts().size()); ++k)
      EXPECT_TRUE(near(toEigen(batch.contact(0, k).multipliers), toEigen(ref.multipliers[k]), 1e-9))
          << "trial " << trial << " contact " << k;
    ++compared;
  }
  EXPECT_EQ(compared, 40);
}

// Ground contacts (SmoothSphereHalfSpaceForce) on random bodies of a random tree: spheres placed so
// that the first penetrates by up to 5 cm (others by -2 cm to 5 cm), half-spaces with random
// normals (not unit), random materials; speeds random (sliding fast) or scaled down to well under
// the transition velocity (sliding slowly).
struct GroundCase {
  RandomCase tree;
  std::shared_ptr<const Model> model;
};

GroundCase randomTreeWithGround(Random& rnd, int nBodies, int nSpheres, bool slow) {
  GroundCase g;
  g.tree = randomTreeWithElements(rnd, nBodies, 0, 0);
  if (slow)
    for (double& u : g.tree.u) u *= 1e-3;
  // Body poses at the state, to place the planes.
  Batch<double> poses(g.tree.model, 1);
  poses.setQ(0, g.tree.q);
  poses.setU(0, g.tree.u);
  poses.evaluate();
  ModelBuilder mb = ModelBuilder::fromModel(*g.tree.model);
  const Model& m = *g.tree.model;
  for (int k = 0; k < nSpheres; ++k) {
    int b;
    do b = rnd.integer(0, nBodies - 1);
    while (m.body(b).nu == 0 && m.body(b).parent < 0);  // a body welded to Ground feels nothing
    GroundContactDesc d;
    d.body = m.body(b).name;
    d.center = rnd.vec3(0.3);
    d.radius = rnd.uniform(0.02, 0.2);
    d.planeNormal = rnd.vec3(1.0);
    if (norm(d.planeNormal) < 0.1) d.planeNormal = {{0, 0, 1}};
    const Vec3d n = d.planeNormal / norm(d.planeNormal);
    const Vec3d c_G = poses.bodyPose(0, b) * d.center;
    const double x = k == 0 ? rnd.uniform(0.0, 0.05) : rnd.uniform(-0.02, 0.05);
    d.planePoint = c_G - (d.radius - x) * n;
    GroundMaterial& mat = d.material;
    mat.stiffness = std::pow(10.0, rnd.uniform(4, 7));
    mat.dissipation = rnd.integer(0, 3) == 0 ? 0.0 : rnd.uniform(0.0, 2.0);
    mat.staticFriction = rnd.uniform(0.5, 1.0);
    mat.dynamicFriction = rnd.uniform(0.2, mat.staticFriction);
    mat.viscousFriction = rnd.uniform(0.0, 0.5);
    mat.transitionVelocity = rnd.uniform(0.005, 0.1);
    if (rnd.integer(0, 1)) {  // Simbody's defaults for cf, bd, bv otherwise
      mat.cf = std::pow(10.0, rnd.uniform(-8, -4));
      mat.bd = rnd.uniform(100, 1000);
      mat.bv = rnd.uniform(10, 100);
    }
    mb.add(d);
  }
  g.model = mb.build();
  return g;
}

// Largest |a - b| / max(1, |b|_inf) over the entries, as near() measures it.
double relativeError(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

TEST(SimbodyOracle, GroundContactsOnRandomTreesGiveTheSameBodyForcesAndAccelerations) {
  Random rnd(304);
  double worstForce = 0, worstUdot = 0;
  int penetrating = 0, slowSliding = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const bool slow = trial % 2 == 1;
    const GroundCase g = randomTreeWithGround(rnd, 2 + trial % 7, 1 + trial % 4, slow);
    Batch<double> batch(g.model, 1);
    batch.setQ(0, g.tree.q);
    batch.setU(0, g.tree.u);
    batch.setTau(0, g.tree.tau);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*g.model);
    const SimbodyOracle::Result ref = oracle.evaluate(g.tree.q, g.tree.u, g.tree.tau);
    const std::vector<SpatialVecd> F = batch.appliedBodyForces(0);
    for (std::size_t b = 0; b < F.size(); ++b) {
      EXPECT_TRUE(near(toEigen(F[b]), toEigen(ref.bodyForces[b]), 1e-10)) << "trial " << trial << " body " << b;
      worstForce = std::max(worstForce, relativeError(toEigen(F[b]), toEigen(ref.bodyForces[b])));
    }
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    worstUdot = std::max(worstUdot, relativeError(vec(batch.udot(0)), vec(ref.udot)));
    for (int i = 0; i < static_cast<int>(g.model->groundContacts().size()); ++i) {
      const GroundContactQuantities<double> r = batch.groundContact(0, i);
      penetrating += r.penetration > 0;
      slowSliding += slow && r.penetration > 0 && r.slipSpeed < g.model->groundContacts()[i].desc.material.transitionVelocity;
    }
  }
  std::printf("ground contacts vs Simbody: max relative error %.3g (body forces), %.3g (udot); %d penetrating, "
              "%d sliding slower than vt\n", worstForce, worstUdot, penetrating, slowSliding);
  EXPECT_GE(penetrating, 40);
  EXPECT_GE(slowSliding, 5);
}

// Largest |a - b| / max(1, max |b|) over the entries: the figure the tests below bound.
double relativeError(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 1, err = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, std::abs(b[i]));
    err = std::max(err, std::abs(a[i] - b[i]));
  }
  return err / scale;
}

// Joint stops (Simbody's MobilityLinearStop) and PD actuators (MobilityLinearSpring at the target
// plus MobilityLinearDamper plus kd * target velocity), each alone and together, on random trees
// at random states: generalized forces and udot to 1e-10 relative. (Effort limits are unbounded:
// Simbody has no clamp; tests/test_actuators.cpp checks it.)
TEST(SimbodyOracle, JointStopsAndPdActuatorsGiveTheSameMobilityForcesAndAccelerations) {
  Random rnd(304);
  double worstForce[3] = {0, 0, 0}, worstUdot[3] = {0, 0, 0};
  int stopsPenetrated = 0, clampedToZero = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int which = trial % 3;  // 0 stops, 1 actuators, 2 both
    const RandomCase base = randomTreeWithElements(rnd, 2 + trial % 8, trial % 2, trial % 2);
    const ActuatedCase c = withStopsAndActuators(rnd, base, which != 1, which != 0);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.setTau(0, c.tau);
    batch.setTargets(0, c.targetPosition, c.targetVelocity);
    bool singular = false;
    for (int i = 0; i < static_cast<int>(c.model->bushings().size()); ++i) singular |= batch.bushing(0, i).singular;
    if (singular) continue;
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    SimbodyOracle oracle(*c.model);
    const SimbodyOracle::Result ref = oracle.evaluate(c.q, c.u, c.tau, c.targetPosition, c.targetVelocity);
    const std::vector<double> f = batch.appliedMobilityForces(0);
    EXPECT_TRUE(near(vec(f), vec(ref.mobilityForces), 1e-10)) << "trial " << trial;
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-10)) << "trial " << trial;
    // Simbody counts its MobilityLinearSprings' kp (q - target)^2 / 2 as potential energy; Lockstep
    // counts the PD's work as the actuators' (the "actuation" z) instead.
    double springEnergy = 0;
    for (const Actuator& a : (*c.model).actuators())
      if (a.desc.mode == ActuatorMode::Position) springEnergy += 0.5 * a.desc.kp * std::pow(c.q[a.q] - c.targetPosition[a.u], 2);
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential - springEnergy, 1e-10 * std::max(1.0, std::abs(ref.potential)));
    worstForce[which] = std::max(worstForce[which], relativeError(f, ref.mobilityForces));
    worstUdot[which] = std::max(worstUdot[which], relativeError(batch.udot(0), ref.udot));
    for (const JointStop& e : c.model->stops()) {
      const double q = c.q[e.q];
      if (q > e.desc.upper || q < e.desc.lower) {
        ++stopsPenetrated;
        clampedToZero += batch.stopForces(0)[e.u] == 0;
      }
    }
  }
  std::printf("max relative error vs Simbody (mobility forces, udot): stops %.2e %.2e, PD %.2e %.2e, both %.2e %.2e\n",
              worstForce[0], worstUdot[0], worstForce[1], worstUdot[1], worstForce[2], worstUdot[2]);
  EXPECT_GE(stopsPenetrated, 20);  // the stops were exercised, the no-sticking clamp too
  EXPECT_GE(clampedToZero, 1);
}

TEST(SimbodyOracle, Chain7SeedReferenceState) {
  const auto model = makeChain7Seed();
  SimbodyOracle oracle(*model);
  Batch<double> batch(model, 1);
  batch.setQ(0, chainInitialQ(7));
  batch.assemble();
  std::vector<double> u(7);
  for (int i = 0; i < 7; ++i) u[i] = 0.2 * std::sin(1.0 + i);
  batch.setU(0, u);
  batch.assemble();  // projects u too
  batch.evaluate();
  const SimbodyOracle::Result ref = oracle.evaluate(batch.q(0), batch.u(0), std::vector<double>(7, 0.0));
  EXPECT_TRUE(near(vec(batch.udot(0)), vec(ref.udot), 1e-9));
  EXPECT_TRUE(near(toEigen(batch.contact(0, 0).multipliers), toEigen(ref.multipliers[0]), 1e-9));
  EXPECT_NEAR(batch.kineticEnergy(0) + batch.potentialEnergy(0), ref.kinetic + ref.potential, 1e-9 * 100);
}

TEST(SimbodyOracle, Chain7) {
  const auto model = makeChain(7);
  SimbodyOracle oracle(*model);
  Batch<double> batch(model, 1);
  Random rnd(301);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> q(7), u(7), tau(7, 0.0);
    for (int i = 0; i < 7; ++i) {
      q[i] = trial == 0 ? 0.3 : rnd.uniform(-2, 2);
      u[i] = trial == 0 ? 0.0 : rnd.uniform(-3, 3);
    }
    batch.setQ(0, q);
    batch.setU(0, u);
    batch.evaluate();
    EXPECT_TRUE(near(vec(batch.udot(0)), vec(oracle.evaluate(q, u, tau).udot), 1e-10));
  }
}

}  // namespace
}  // namespace lockstep::test
