// The multibody core: the articulated-body sweep against a dense reference, the chain-7 check
// value, energy conservation, batch consistency, failure isolation, parameters, validation.
#include <cmath>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "random_tree.h"
#include "reference_dynamics.h"

namespace lockstep::test {
namespace {

// The CPU backend one world at a time, on the scalar code.
const CpuOptions kOneWorldAtATime{0, false};

Eigen::VectorXd toEigenVec(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size()); }

// Loads one random case into world w of a batch.
template <class T>
void load(Batch<T>& batch, std::int64_t w, const RandomCase& c) {
  batch.setQ(w, c.q);
  batch.setU(w, c.u);
  batch.setTau(w, c.tau);
}

TEST(ArticulatedBodySweep, MatchesDenseMassMatrixSolveOnRandomTrees) {
  Random rnd(200);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = randomTree(rnd, 1 + trial % 12);
    Batch<double> batch(c.model, 1);
    load(batch, 0, c);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    const DenseDynamics ref = denseForwardDynamics(*c.model, c.q, c.u, c.tau);
    EXPECT_TRUE(near(toEigenVec(batch.udot(0)), ref.udot, 1e-10)) << "trial " << trial;
    EXPECT_NEAR(batch.kineticEnergy(0), ref.kinetic, 1e-12 * std::max(1.0, std::abs(ref.kinetic)));
    EXPECT_NEAR(batch.potentialEnergy(0), ref.potential, 1e-12 * std::max(1.0, std::abs(ref.potential)));
  }
}

TEST(ArticulatedBodySweep, Chain7CheckValue) {
  // docs/scenes.md: summing udot[0] over q0 = 0.3 + 1e-9 k, k = 0..199999 (other q = 0.3, u = 0) gives
  // 2.11259e+06 in Simbody 3.7 and MuJoCo 2.2.2. One batch of 200000 worlds does it.
  const auto model = makeChain(7);
  const int n = 200000;
  Batch<double> batch(model, n);
  EXPECT_NEAR(chain7CheckSum(batch, chainInitialQ(7)), 2.11259e+06, 0.000005e+06);
}

TEST(Integration, Rk4ConservesEnergyOnChain7) {
  const auto model = makeChain(7);
  Batch<double> batch(model, 1);
  batch.setQ(0, chainInitialQ(7));
  batch.evaluate();
  const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
  batch.step(1e-4, 20000, Integrator::RK4);  // 2 s
  batch.evaluate();
  EXPECT_EQ(batch.status(0), kStatusOk);
  EXPECT_NEAR(batch.time(0), 2.0, 1e-12);
  const double e1 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
  EXPECT_LT(std::abs(e1 - e0), 1e-7 * std::abs(e0)) << "E0 " << e0 << " E1 " << e1;
  EXPECT_GT(batch.kineticEnergy(0), 1.0);  // it really moved
}

TEST(Integration, DampedEnergyPlusDissipationIsConstantOnRandomTrees) {
  Random rnd(201);
  for (int trial = 0; trial < 5; ++trial) {
    RandomCase c = randomTree(rnd, 6, /*withDamping=*/true);
    Batch<double> batch(c.model, 1);
    batch.setQ(0, c.q);
    batch.setU(0, c.u);
    batch.evaluate();
    const double e0 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
    batch.step(2e-4, 2500, Integrator::RK4);
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk);
    const double dissipated = batch.z(0)[0];
    const double e1 = batch.kineticEnergy(0) + batch.potentialEnergy(0);
    EXPECT_GT(dissipated, 0.0);
    EXPECT_NEAR(e1 + dissipated, e0, 1e-7 * std::max(1.0, std::abs(e0))) << "trial " << trial;
  }
}

TEST(Integration, SemiImplicitEulerConvergesAtFirstOrder) {
  const auto model = makeChain(3);
  auto finalQ = [&](Integrator integ, double dt) {
    Batch<double> batch(model, 1);
    batch.setQ(0, chainInitialQ(3));
    batch.step(dt, static_cast<int>(std::lround(0.5 / dt)), integ);
    return toEigenVec(batch.q(0));
  };
  const Eigen::VectorXd exact = finalQ(Integrator::RK4, 1e-4);
  const double e1 = (finalQ(Integrator::SemiImplicitEuler, 1e-3) - exact).norm();
  const double e2 = (finalQ(Integrator::SemiImplicitEuler, 5e-4) - exact).norm();
  EXPECT_GT(e1 / e2, 1.8);
  EXPECT_LT(e1 / e2, 2.2);
  // RK4 converges at fourth order.
  const double r1 = (finalQ(Integrator::RK4, 1e-2) - exact).norm();
  const double r2 = (finalQ(Integrator::RK4, 5e-3) - exact).norm();
  EXPECT_GT(r1 / r2, 14.0);
}

// One semi-implicit Euler step from rest: the speeds take dt udot, and the positions move with the
// new speeds (q1 = q0 + dt u1; pins: qdot = u), where explicit Euler would leave them where they were.
TEST(Integration, SemiImplicitEulerMovesThePositionsWithTheNewSpeeds) {
  const auto model = makeChain(3);
  Batch<double> batch(model, 1);
  const std::vector<double> q0 = chainInitialQ(3);
  batch.setQ(0, q0);
  const double dt = 1e-3;
  batch.step(dt, 1, Integrator::SemiImplicitEuler);
  const std::vector<double> q1 = batch.q(0), u1 = batch.u(0);
  ASSERT_EQ(q1.size(), u1.size());
  double moved = 0;
  for (std::size_t i = 0; i < q1.size(); ++i) {
    EXPECT_NEAR(q1[i] - q0[i], dt * u1[i], 1e-15) << "coordinate " << i;
    moved = std::max(moved, std::abs(q1[i] - q0[i]));
  }
  EXPECT_GT(moved, 1e-8);  // gravity moves the chain from rest
}

TEST(Batch, WorldOfABatchEqualsTheSameWorldAloneBitForBit) {
  Random rnd(202);
  const RandomCase c = randomTree(rnd, 8);
  const int n = 37;
  Batch<double> batch(c.model, n);
  std::vector<std::vector<double>> q0(n), u0(n);
  for (int w = 0; w < n; ++w) {
    q0[w] = c.q;
    u0[w] = c.u;
    for (double& x : u0[w]) x += 0.01 * w;
    batch.setQ(w, q0[w]);
    batch.setU(w, u0[w]);
  }
  batch.step(1e-3, 50, Integrator::RK4);
  for (int w : {0, 5, 36}) {
    Batch<double> alone(c.model, 1);
    alone.setQ(0, q0[w]);
    alone.setU(0, u0[w]);
    alone.step(1e-3, 50, Integrator::RK4);
    EXPECT_EQ(alone.q(0), batch.q(w));
    EXPECT_EQ(alone.u(0), batch.u(w));
    EXPECT_EQ(alone.z(0), batch.z(w));
  }
  // And the thread count does not matter.
  Batch<double> serial(c.model, n, Backend::Cpu, CpuOptions{1});
  for (int w = 0; w < n; ++w) {
    serial.setQ(w, q0[w]);
    serial.setU(w, u0[w]);
  }
  serial.step(1e-3, 50, Integrator::RK4);
  for (int w = 0; w < n; ++w) EXPECT_EQ(serial.q(w), batch.q(w));
}

// The observations the two wrote after their last step agree as well.
template <class T>
void expectSameObservations(const Batch<T>& a, const Batch<T>& b, std::int64_t w, int nb, double tol) {
  for (int k = 0; k < nb; ++k) {
    const Transformd Xa = a.bodyPose(w, k), Xb = b.bodyPose(w, k);
    const SpatialVecd Va = a.bodyVelocity(w, k), Vb = b.bodyVelocity(w, k);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(Xa.p[i], Xb.p[i], tol);
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(Xa.R.R.m[i][j], Xb.R.R.m[i][j], tol);
    }
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(Va[i], Vb[i], 10 * tol * std::max(1.0, std::abs(Vb[i])));
  }
}

// Batch::evaluate on packs and one world at a time (`single` runs with kOneWorldAtATime): udot,
// energies, multipliers, status.
template <class T>
void expectSameEvaluation(Batch<T>& packs, Batch<T>& single, std::int64_t n, double tol) {
  packs.evaluate();
  single.evaluate();
  auto expectClose = [tol](double a, double b, std::int64_t w) {
    if (std::isfinite(b))
      EXPECT_NEAR(a, b, tol * std::max(1.0, std::abs(b))) << "world " << w;
    else  // a world whose state overflowed: infinities meet in a different order, inf or NaN
      EXPECT_FALSE(std::isfinite(a)) << "world " << w << ": " << a << " vs " << b;
  };
  for (std::int64_t w = 0; w < n; ++w) {
    EXPECT_EQ(packs.status(w), single.status(w)) << "world " << w;
    const std::vector<double> a = packs.udot(w), b = single.udot(w);
    for (std::size_t i = 0; i < a.size(); ++i) expectClose(a[i], b[i], w);
    expectClose(packs.kineticEnergy(w), single.kineticEnergy(w), w);
    expectClose(packs.potentialEnergy(w), single.potentialEnergy(w), w);
  }
}

// World by world after the same steps on packs and one at a time: the same status and time, the
// failed world exactly at its state before its failed step, the others' q and u and observations
// to the tolerances given (float / double).
template <class T>
void expectSameWorlds(const Batch<T>& packs, const Batch<T>& single, int n, int failedWorld, int nb, double tolQ) {
  for (int w = 0; w < n; ++w) {
    SCOPED_TRACE("world " + std::to_string(w));
    EXPECT_EQ(packs.status(w), single.status(w));
    EXPECT_EQ(packs.time(w), single.time(w));
    const std::vector<double> qp = packs.q(w), qs = single.q(w), up = packs.u(w), us = single.u(w);
    if (w == failedWorld) {
      EXPECT_EQ(qp, qs);
      EXPECT_EQ(up, us);
      continue;
    }
    for (std::size_t i = 0; i < qp.size(); ++i) EXPECT_NEAR(qp[i], qs[i], tolQ);
    for (std::size_t i = 0; i < up.size(); ++i) EXPECT_NEAR(up[i], us[i], 10 * tolQ);
    expectSameObservations(packs, single, w, nb, tolQ);
  }
  EXPECT_NE(packs.status(failedWorld), kStatusOk);
}

// The CPU backend advances models without contacts a SIMD pack of worlds at a time; it must give
// what the same code gives one world at a time (the code the CUDA kernel runs), in either
// precision, for every mobilizer, force element and per-world parameter, on world counts that
// leave a partial last pack, and with a failing world in the middle of a pack. (Not bit for bit:
// the compiler fuses multiply-adds differently in the two; within a pack, a world's result does not
// depend on its neighbours, see WorldOfABatchEqualsTheSameWorldAloneBitForBit.)
template <class T>
void expectPacksMatchOneWorldAtATime(Integrator integrator) {
  Random rnd(sizeof(T) == 4 ? 611 : 612);
  for (int trial = 0; trial < 6; ++trial) {
    const RandomCase c = randomTreeWithElements(rnd, 3 + trial, 1 + trial % 2, 1 + trial % 3);
    const int n = 7 + 3 * trial;  // 7 .. 22: never a whole number of packs
    auto setUp = [&](Batch<T>& b) {
      for (int w = 0; w < n; ++w) {
        std::vector<double> u = c.u;
        for (double& x : u) x += 0.05 * w;
        b.setQ(w, c.q);
        b.setU(w, u);
        b.setTau(w, c.tau);
      }
      // Some worlds' parameters differ (gathered per pack; the shared ones are broadcast).
      b.setBushingStiffness(n / 2, 0, {1, 2, 3, 4, 5, 6});
      b.setGravity(1, Vec3d{{0.5, -3.0, 1.0}});
      MassProperties mp = b.massProperties(4, 0);
      mp.mass *= 1.7;
      b.setMassProperties(4, 0, mp);
      b.setDamping(6, std::vector<double>(c.u.size(), 0.3));
      b.setSpringParameters(n - 1, 0, 0.4, 12.0, 0.7);
      b.setU(3, std::vector<double>(c.u.size(), 1e200));     // world 3 fails in its first step
    };
    Batch<T> packs(c.model, n), single(c.model, n, Backend::Cpu, kOneWorldAtATime);
    setUp(packs);
    setUp(single);
    // Two calls: in the second, world 3 is already flagged and its lane stands in for another.
    for (int steps : {13, 12}) {
      packs.step(T(2e-3), steps, integrator);
      single.step(T(2e-3), steps, integrator);
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    expectSameWorlds(packs, single, n, 3, static_cast<int>(c.model->bodies().size()), sizeof(T) == 4 ? 1e-5 : 1e-12);
    expectSameEvaluation(packs, single, n, sizeof(T) == 4 ? 1e-3 : 1e-10);
  }
}

TEST(Lanes, PacksOfWorldsMatchOneWorldAtATimeDouble) {
  expectPacksMatchOneWorldAtATime<double>(Integrator::RK4);
  expectPacksMatchOneWorldAtATime<double>(Integrator::SemiImplicitEuler);
}
TEST(Lanes, PacksOfWorldsMatchOneWorldAtATimeFloat) {
  expectPacksMatchOneWorldAtATime<float>(Integrator::RK4);
  expectPacksMatchOneWorldAtATime<float>(Integrator::SemiImplicitEuler);
}

// The same with sphere contacts: assembly, the constraint solve, its Jacobi iterations (rolling:
// three equations) and the projection's Gauss-Newton iterations and line search, lane by lane.
template <class T>
void expectConstrainedPacksMatchOneWorldAtATime() {
  const int n = 11;
  for (int scene = 0; scene < 2; ++scene) {
    const auto model = scene == 0 ? makeChain7Seed() : rollingBallModel(0.2, 0.5);
    auto setUp = [&](Batch<T>& b) {
      for (int w = 0; w < n; ++w) {
        if (scene == 0) {
          std::vector<double> u(7);
          for (int i = 0; i < 7; ++i) u[i] = 0.2 * std::sin(1.0 + i + 0.3 * w);
          b.setQ(w, chainInitialQ(7));
          b.setU(w, u);
        } else {
          const double a = 0.1 + 0.02 * w;
          const Vec3d nrm{{std::sin(a), 0, std::cos(a)}}, om{{0.1 * w, 1.5, 0.3}};
          const Vec3d v = cross(om, 0.2 * nrm);
          b.setQ(w, {1, 0, 0, 0, 0.7 * nrm[0], 0, 0.7 * nrm[2]});
          b.setU(w, {om[0], om[1], om[2], v[0], v[1], v[2]});
        }
      }
      b.setContactEnabled(2, 0, false);
      b.assemble();
    };
    // Assembly on packs and a world at a time: both on the manifold, at points that differ by
    // what the tolerance leaves free (the iterations' paths differ in rounding).
    Batch<T> packs(model, n), single(model, n), assembledAlone(model, n);
    setUp(packs);
    setUp(single);
    assembledAlone.setCpuOptions(kOneWorldAtATime);
    setUp(assembledAlone);
    for (int w = 0; w < n; ++w) {
      EXPECT_EQ(packs.status(w), assembledAlone.status(w));
      EXPECT_LT(std::abs(packs.constraintError(w)), sizeof(T) == 4 ? 1e-5 : 1e-10);
      const std::vector<double> qp = packs.q(w), qs = assembledAlone.q(w);
      for (std::size_t i = 0; i < qp.size(); ++i) EXPECT_NEAR(qp[i], qs[i], sizeof(T) == 4 ? 1e-3 : 1e-9);
    }
    // Then the same steps from the same assembled state.
    for (Batch<T>* b : {&packs, &single}) b->setU(5, std::vector<double>(model->nu(), 1e200));  // fails at once
    single.setCpuOptions(kOneWorldAtATime);
    single.step(T(1e-3), 60, Integrator::RK4);
    single.step(T(1e-3), 40, Integrator::RK4);
    packs.step(T(1e-3), 60, Integrator::RK4);
    packs.step(T(1e-3), 40, Integrator::RK4);
    SCOPED_TRACE("scene " + std::to_string(scene));
    expectSameWorlds(packs, single, n, 5, static_cast<int>(model->bodies().size()), sizeof(T) == 4 ? 1e-4 : 1e-11);
    for (int w = 0; w < n; ++w) {
      if (w == 5) continue;
      EXPECT_LT(std::abs(packs.constraintError(w)), sizeof(T) == 4 ? 1e-5 : 1e-10) << w;
    }
    expectSameEvaluation(packs, single, n, sizeof(T) == 4 ? 1e-3 : 1e-9);
    for (int w = 0; w < n; ++w) {
      if (w == 5) continue;
      const auto ca = packs.contact(w, 0), cb = single.contact(w, 0);
      for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(ca.multipliers[i], cb.multipliers[i],
                    (sizeof(T) == 4 ? 1e-3 : 1e-9) * std::max(1.0, std::abs(cb.multipliers[i])));
    }
  }
}

TEST(Lanes, ConstrainedPacksMatchOneWorldAtATimeDouble) { expectConstrainedPacksMatchOneWorldAtATime<double>(); }
TEST(Lanes, ConstrainedPacksMatchOneWorldAtATimeFloat) { expectConstrainedPacksMatchOneWorldAtATime<float>(); }

TEST(Batch, NonFiniteWorldIsFlaggedAndTheOthersGoOn) {
  const auto model = makeChain(4);
  const int n = 8;
  Batch<double> batch(model, n), clean(model, n);
  for (int w = 0; w < n; ++w) {
    batch.setQ(w, chainInitialQ(4));
    clean.setQ(w, chainInitialQ(4));
  }
  batch.setU(3, {1e200, 0, 0, 0});  // overflows to infinity inside the first step
  const std::vector<double> q3 = batch.q(3);
  batch.step(1e-3, 20);
  clean.step(1e-3, 20);
  EXPECT_EQ(batch.status(3), kStatusNonFinite) << describeStatus(batch.status(3));
  EXPECT_EQ(batch.q(3), q3);  // kept at its last finite state
  EXPECT_EQ(batch.time(3), 0.0);
  for (int w = 0; w < n; ++w) {
    if (w == 3) continue;
    EXPECT_EQ(batch.status(w), kStatusOk);
    EXPECT_EQ(batch.q(w), clean.q(w));
  }
  // A reset brings it back.
  batch.resetWorld(3);
  batch.step(1e-3, 1);
  EXPECT_EQ(batch.status(3), kStatusOk);
}

TEST(Batch, SingularJointInertiaIsFlagged) {
  ModelBuilder mb;
  BodyDesc b;
  b.name = "massless";
  b.mobilizer = MobilizerType::Slider;
  mb.addBody(b);  // zero mass on a slider: D = 0
  Batch<double> batch(mb.build(), 2);
  batch.step(1e-3, 1);
  EXPECT_EQ(batch.status(0), kStatusSingularMassMatrix);
  EXPECT_NE(describeStatus(batch.status(0)).find("singular"), std::string::npos);
}

TEST(Batch, PerWorldMassPropertiesAndGravityMatchARebuiltModel) {
  Random rnd(203);
  const RandomCase c = randomTree(rnd, 5);
  Batch<double> batch(c.model, 3);
  for (int w = 0; w < 3; ++w) load(batch, w, c);
  MassProperties mp;
  mp.mass = 2.5;
  mp.com = {{0.1, -0.2, 0.05}};
  mp.inertia = rnd.centralInertia(2.5);
  const Vec3d g{{1.0, -3.0, 0.5}};
  batch.setMassProperties(1, 2, mp);
  batch.setGravity(1, g);
  EXPECT_TRUE(batch.isPerWorld("massProps"));
  batch.evaluate();

  ModelBuilder source = ModelBuilder::fromModel(*c.model);
  ModelBuilder mb;
  mb.setGravity(g);
  for (BodyDesc d : source.bodies()) {
    if (d.name == c.model->body(2).name) d.mass = mp;
    mb.addBody(d);
  }
  const auto rebuilt = mb.build();
  const DenseDynamics ref = denseForwardDynamics(*rebuilt, c.q, c.u, c.tau);
  EXPECT_TRUE(near(toEigenVec(batch.udot(1)), ref.udot, 1e-10));
  const DenseDynamics ref0 = denseForwardDynamics(*c.model, c.q, c.u, c.tau);
  EXPECT_TRUE(near(toEigenVec(batch.udot(0)), ref0.udot, 1e-10));
  EXPECT_TRUE(near(toEigenVec(batch.udot(2)), ref0.udot, 1e-10));
}

TEST(Batch, FloatAgreesWithDouble) {
  const auto model = makeChain(7);
  Batch<float> f(model, 1);
  Batch<double> d(model, 1);
  f.setQ(0, chainInitialQ(7));
  d.setQ(0, chainInitialQ(7));
  f.evaluate();
  d.evaluate();
  // float epsilon 6e-8 amplified by the conditioning of the chain's mass matrix (~1e2).
  EXPECT_TRUE(near(toEigenVec(f.udot(0)), toEigenVec(d.udot(0)), 2e-5));
  f.step(1e-3, 100);
  d.step(1e-3, 100);
  EXPECT_TRUE(near(toEigenVec(f.q(0)), toEigenVec(d.q(0)), 1e-4));
}

TEST(Batch, EffortLimitsClampActions) {
  ModelBuilder mb;
  BodyDesc b;
  b.name = "wheel";
  b.mass.mass = 1;
  b.mass.inertia = SymMat33d::diagonal(1, 1, 2);
  b.effortLimit = {0.5};
  mb.addBody(b);
  Batch<double> batch(mb.build(), 1);
  batch.setTau(0, {10.0});
  batch.evaluate();
  EXPECT_NEAR(batch.udot(0)[0], 0.5 / 2.0, 1e-15);  // clamped to 0.5 N m about z, Izz = 2
}

TEST(Batch, RejectsBadInput) {
  const auto model = makeChain(2);
  Batch<double> batch(model, 2);
  EXPECT_THROW(batch.setQ(0, {1.0}), std::invalid_argument);
  EXPECT_THROW(batch.setQ(0, {1.0, NAN}), std::invalid_argument);
  EXPECT_THROW(batch.setQ(5, {1.0, 2.0}), std::out_of_range);
  EXPECT_THROW(batch.step(-1.0), std::invalid_argument);
  MassProperties bad;
  bad.mass = -1;
  EXPECT_THROW(batch.setMassProperties(0, 0, bad), ModelError);
  EXPECT_THROW(batch.setDamping(0, {-1.0, 0.0}), ModelError);
  EXPECT_THROW(Batch<double>(model, 0), std::invalid_argument);
}

// ---- model validation ---------------------------------------------------------------------------

std::string buildError(const std::vector<BodyDesc>& bodies) {
  ModelBuilder mb;
  for (const BodyDesc& b : bodies) mb.addBody(b);
  try {
    mb.build();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelValidation, ClearErrors) {
  BodyDesc neg = simpleBody("a");
  neg.mass.mass = -2;
  EXPECT_NE(buildError({neg}).find("body 'a': mass: must be >= 0"), std::string::npos) << buildError({neg});

  BodyDesc indefinite = simpleBody("a");
  indefinite.mass.inertia = SymMat33d::diagonal(1, -1, 1);
  EXPECT_NE(buildError({indefinite}).find("not positive semidefinite"), std::string::npos);

  BodyDesc triangle = simpleBody("a");
  triangle.mass.inertia = SymMat33d::diagonal(1, 1, 3);
  EXPECT_NE(buildError({triangle}).find("triangle inequality"), std::string::npos);

  EXPECT_NE(buildError({simpleBody("a", "nowhere")}).find("body 'a': parent: no body named 'nowhere'"),
            std::string::npos);
  EXPECT_NE(buildError({simpleBody("a", "b"), simpleBody("b", "a")}).find("cycle"), std::string::npos);
  EXPECT_NE(buildError({simpleBody("a"), simpleBody("a")}).find("defined twice"), std::string::npos);

  BodyDesc skewed = simpleBody("a");
  skewed.X_PF.R.R.m[0][1] = 0.5;
  EXPECT_NE(buildError({skewed}).find("X_PF: not a rigid transform"), std::string::npos);

  BodyDesc nan = simpleBody("a");
  nan.X_BM.p[1] = NAN;
  EXPECT_NE(buildError({nan}).find("X_BM translation: must be a finite number"), std::string::npos);

  BodyDesc damp = simpleBody("a");
  damp.damping = {1, 2};
  EXPECT_NE(buildError({damp}).find("damping: expected 1 values"), std::string::npos);

  EXPECT_THROW(parseMobilizerType("hinge"), ModelError);
  EXPECT_EQ(parseMobilizerType("Free"), MobilizerType::Free);
}

TEST(ModelValidation, BodiesInAnyOrderAreSortedParentsFirst) {
  ModelBuilder mb;
  mb.addBody(simpleBody("c", "b")).addBody(simpleBody("b", "a")).addBody(simpleBody("a"));
  const auto m = mb.build();
  EXPECT_EQ(m->body(0).name, "a");
  EXPECT_EQ(m->body(1).name, "b");
  EXPECT_EQ(m->body(2).name, "c");
  EXPECT_EQ(m->body(2).parent, 1);
  EXPECT_EQ(m->bodyIndex("c"), 2);
  EXPECT_THROW(m->bodyIndex("d"), ModelError);
}

TEST(Model, CoordinateNamesFollowJointsAndAxes) {
  ModelBuilder mb;
  BodyDesc f = simpleBody("base");
  f.mobilizer = MobilizerType::Free;
  f.jointName = "root";
  BodyDesc p = simpleBody("arm", "base");
  p.jointName = "shoulder";
  mb.addBody(f).addBody(p);
  const auto m = mb.build();
  const std::vector<std::string> q = {"root.qw", "root.qx", "root.qy", "root.qz", "root.x", "root.y", "root.z", "shoulder"};
  const std::vector<std::string> u = {"root.wx", "root.wy", "root.wz", "root.vx", "root.vy", "root.vz", "shoulder"};
  EXPECT_EQ(m->qNames(), q);
  EXPECT_EQ(m->uNames(), u);
  EXPECT_EQ(m->defaultQ()[0], 1.0);
  EXPECT_DOUBLE_EQ(m->totalMass(), 2.0);
}

}  // namespace
}  // namespace lockstep::test
