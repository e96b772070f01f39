// The engine's stages called directly (not through a Batch). This file is compiled for plain
// x86-64 like the library's scalar code, so the copies of the templates it instantiates are the
// library's (the CPU backend's AVX2 and AVX-512 pack code lives in namespaces of its own, lanes.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "random_tree.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

// Pass 3 alone (bodyAccelerationsFromUdot: A_b = ~Phi A_parent + c_b + H_b udot_b, what the
// inspection of a stored evaluation uses) gives the sweep's own body accelerations, to roundoff:
// the sweep calls the same per-body functions (inboardAcceleration, jointAcceleration), but the
// compiler may fuse their multiply-adds differently where they are inlined; with constraints the
// solve corrects udot and A_GB separately.
void expectPassThreeMatchesTheSweep(const std::shared_ptr<const Model>& model, const std::vector<double>& q,
                                    const std::vector<double>& u, const std::vector<double>& tau) {
  Batch<double> batch(model, 1, Backend::Cpu);
  batch.setQ(0, q);
  batch.setU(0, u);
  batch.setTau(0, tau);
  const Sizes s = batch.sizes();
  const WorkspaceLayout layout = WorkspaceLayout::of(s);
  std::vector<double> scratch(layout.total, 0.0), fromUdot(6 * s.nb, 0.0);
  const Workspace<double> ws{layout, {scratch.data(), 1}};
  const ModelView<double> mv = batch.hostModelView();
  const WorldView<double> world = batch.hostView().world(0);
  const int status = forwardDynamics<double, true>(mv, world, ws, world.udot, ws.ydot(s.nq + s.nu), world.multipliers).status;
  ASSERT_EQ(status, kStatusOk);
  bodyAccelerationsFromUdot(mv, ws, Strided<const double>(world.udot), Strided<double>{fromUdot.data(), 1});
  const Strided<double> A = ws.A_GB();
  double scale = 1.0;
  for (int i = 0; i < 6 * s.nb; ++i) scale = std::max(scale, std::abs(A[i]));
  for (int i = 0; i < 6 * s.nb; ++i) {
    EXPECT_NEAR(fromUdot[i], A[i], (s.nc == 0 ? 1e-14 : 1e-12) * scale) << "component " << i;
  }
}

TEST(Sweep, PassThreeFromUdotIsTheSweepsOwn) {
  Random rnd(1207);
  for (int trial = 0; trial < 5; ++trial) {
    const RandomCase c = randomTree(rnd, 4 + trial);
    expectPassThreeMatchesTheSweep(c.model, c.q, c.u, c.tau);
  }
  const std::vector<double> u7 = {0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.6};
  expectPassThreeMatchesTheSweep(makeChain(7), chainInitialQ(7), u7, std::vector<double>(7, 0.1));
  expectPassThreeMatchesTheSweep(makeChain7Seed(), chainInitialQ(7), u7, std::vector<double>(7, 0.1));
}

// The GPU's indexing on the CPU: every world advanced and evaluated by the per-world code with its
// workspace strided across an odd number of worlds (deviceWorkspace, what the kernels use) over
// host memory, against the same code with one stride-1 workspace per world and against the CPU
// backend one world at a time. They agree to rounding, not to the bit: with a unit stride the
// compiler vectorizes and fuses multiply-adds differently (measured: the last bits differ), and
// the backend's copy of the templates is compiled in another file. A wrong index or stride would
// be far from rounding.
template <class T, bool kConstraints>
void expectDeviceLayoutMatchesTheCpuBackend(const std::shared_ptr<const Model>& model, std::int64_t n) {
  Batch<T> cpu(model, n, Backend::Cpu), strided(model, n, Backend::Cpu), unit(model, n, Backend::Cpu);
  for (Batch<T>* b : {&cpu, &strided, &unit}) {
    for (std::int64_t w = 0; w < n; ++w) {
      std::vector<double> q = model->defaultQ(), u(model->nu(), 0.0);
      for (std::size_t i = 0; i < q.size(); ++i) q[i] += 0.01 * double((w * 7 + i) % 11);
      for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.05 * double((w + 3 * i) % 5) - 0.1;
      b->setInitialState(w, q, u);
      b->setQ(w, q);
      b->setU(w, u);
    }
    b->setGravity(n / 2, {{0.0, -3.0, 0.5}});  // one world with a parameter of its own
    if (kConstraints) b->assemble();
  }
  cpu.setCpuOptions(CpuOptions{0, /*lanes=*/false});
  cpu.step(1e-3, 7, Integrator::RK4);
  cpu.evaluate();

  const Sizes s = strided.sizes();
  const WorkspaceLayout layout = WorkspaceLayout::of(s);
  const ModelView<T> mv = strided.hostModelView();
  const StepSettings<T> settings{T(1e-3), 7, Integrator::RK4, T(strided.constraintTolerance()), 20, true, false};
  std::vector<T> scratch(static_cast<std::size_t>(layout.total) * n, T(0)), one(layout.total, T(0));
  const BatchView<T> sv = strided.hostView(), uv = unit.hostView();
  for (std::int64_t w = 0; w < n; ++w) {
    advanceWorld<T, kConstraints>(mv, sv.world(w), deviceWorkspace(layout, scratch.data(), n, w), settings);
    evaluateWorld<T, kConstraints>(mv, sv.world(w), deviceWorkspace(layout, scratch.data(), n, w));
    advanceWorld<T, kConstraints>(mv, uv.world(w), Workspace<T>{layout, {one.data(), 1}}, settings);
    evaluateWorld<T, kConstraints>(mv, uv.world(w), Workspace<T>{layout, {one.data(), 1}});
  }

  const double tol = sizeof(T) == 8 ? 1e-10 : 1e-4;
  for (const char* name : {"q", "u", "z", "time", "udot", "energy", "multipliers", "bodyPose", "bodyVelocity",
                           "bushingState", "contactError", "actuator", "stopForce", "status"}) {
    const FieldView a = strided.field(name, MemorySpace::Host), b = unit.field(name, MemorySpace::Host),
                    c = cpu.field(name, MemorySpace::Host);
    const bool isInt = a.elementType == FieldView::Type::Int32;
    const std::size_t count = static_cast<std::size_t>(a.components * a.worlds);
    auto value = [&](const FieldView& f, std::size_t i) {
      return isInt ? double(static_cast<const std::int32_t*>(f.data)[i]) : double(static_cast<const T*>(f.data)[i]);
    };
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_NEAR(value(a, i), value(b, i), tol * (1 + std::abs(value(b, i)))) << name << " [" << i << "] unit stride";
      ASSERT_NEAR(value(a, i), value(c, i), tol * (1 + std::abs(value(c, i)))) << name << " [" << i << "] backend";
    }
  }
  for (std::int64_t w = 0; w < n; ++w) EXPECT_EQ(strided.status(w), kStatusOk) << w;
  EXPECT_NE(strided.q(n / 2), strided.q(n / 2 + 1));
}

TEST(DeviceLayout, PerWorldCodeWithWorkspacesStridedAcrossWorldsAgreesWithTheCpuBackend) {
  expectDeviceLayoutMatchesTheCpuBackend<double, true>(makeChain7Seed(), 37);
  expectDeviceLayoutMatchesTheCpuBackend<float, true>(makeChain7Seed(), 37);
  expectDeviceLayoutMatchesTheCpuBackend<double, false>(makeChain(7), 37);
  Random rnd(4242);
  expectDeviceLayoutMatchesTheCpuBackend<double, false>(randomTree(rnd, 6).model, 13);
  expectDeviceLayoutMatchesTheCpuBackend<float, false>(makeFreeBushingGrid(2), 37);
  // Joint stops and PD actuators (targets 0; the gains and stops of the model).
  const ActuatedCase actuated = withStopsAndActuators(rnd, randomTree(rnd, 6), true, true);
  expectDeviceLayoutMatchesTheCpuBackend<double, false>(actuated.model, 13);
}

// Under MuJoCo's law a step's solves leave the fields of the last evaluate() alone (softContact,
// softLimitForce, softSolver: views.h) on every path: the CPU's packs (which keep theirs in the
// pack), the scalar code one world at a time, and the per-world code with the GPU's workspace
// layout (advanceWorld, as the CUDA kernel runs it). Each batch is evaluated, stepped 10 times and
// compared with its own evaluation, bit for bit, then the three are evaluated again and agree to
// the solve's tolerance.
TEST(DeviceLayout, StepsUnderMuJocosLawLeaveTheSolveFieldsOfTheLastEvaluation) {
  constexpr int kSoft = kFeatureSoftConstraints;
  const std::int64_t n = 13;
  for (bool elliptic : {false, true}) {
    const auto model = softBoxOnPlane(elliptic);
    Batch<double> packs(model, n, Backend::Cpu), scalar(model, n, Backend::Cpu), strided(model, n, Backend::Cpu);
    scalar.setCpuOptions(CpuOptions{0, /*lanes=*/false});
    for (Batch<double>* b : {&packs, &scalar, &strided})
      for (std::int64_t w = 0; w < n; ++w) {
        const double h = 0.15 + 0.01 * double(w);  // half the turn about z
        b->setQ(w, {std::cos(h), 0.0, 0.0, std::sin(h), 0.1, -0.2, 0.048});
        b->setU(w, {0.1, -0.05, 0.4 + 0.05 * double(w), 0.6, -0.3, -0.02});
      }
    const WorkspaceLayout layout = WorkspaceLayout::of(strided.sizes());
    const ModelView<double> mv = strided.hostModelView();
    const BatchView<double> sv = strided.hostView();
    std::vector<double> scratch(static_cast<std::size_t>(layout.total) * n, 0.0);
    const StepSettings<double> settings{0.005, 10, Integrator::RK4, 1e-10, 20, true, false};
    auto evaluateAll = [&] {
      packs.evaluate();
      scalar.evaluate();
      for (std::int64_t w = 0; w < n; ++w)
        evaluateWorld<double, kSoft>(mv, sv.world(w), deviceWorkspace(layout, scratch.data(), n, w));
    };
    auto values = [](Batch<double>& b, const char* name) {  // every world's, component-major
      const FieldView f = b.field(name, MemorySpace::Host);
      const double* p = static_cast<const double*>(f.data);
      return std::vector<double>(p, p + f.components * f.worlds);
    };
    evaluateAll();
    std::vector<std::vector<double>> evaluated;
    for (Batch<double>* b : {&packs, &scalar, &strided})
      for (const char* name : {"softContact", "softSolver"}) evaluated.push_back(values(*b, name));
    EXPECT_GT(evaluated[0][0], 0.5) << "world 0's first point touches";
    packs.step(0.005, 10, Integrator::RK4);
    scalar.step(0.005, 10, Integrator::RK4);
    for (std::int64_t w = 0; w < n; ++w)
      advanceWorld<double, kSoft>(mv, sv.world(w), deviceWorkspace(layout, scratch.data(), n, w), settings);
    std::size_t k = 0;
    for (Batch<double>* b : {&packs, &scalar, &strided})
      for (const char* name : {"softContact", "softSolver"})
        EXPECT_EQ(values(*b, name), evaluated[k++]) << name << (elliptic ? ", cone" : ", pyramid");
    for (std::int64_t w = 0; w < n; ++w) {
      for (std::size_t i = 0; i < packs.q(w).size(); ++i) {
        EXPECT_NEAR(scalar.q(w)[i], packs.q(w)[i], 1e-9) << "world " << w;
        EXPECT_NEAR(strided.q(w)[i], packs.q(w)[i], 1e-9) << "world " << w;
      }
    }
    evaluateAll();
    for (const char* name : {"softContact", "softSolver"}) {
      const std::vector<double> a = values(packs, name), b = values(scalar, name), c = values(strided, name);
      for (std::size_t i = 0; i < a.size(); ++i) {
        // (softSolver's first n values are the Newton iterations: within one)
        const double tol = std::string(name) == "softSolver" && i < std::size_t(n) ? 1.0 : 1e-6 * (1 + std::abs(a[i]));
        EXPECT_NEAR(b[i], a[i], tol) << name << " [" << i << "] scalar";
        EXPECT_NEAR(c[i], a[i], tol) << name << " [" << i << "] strided";
      }
    }
  }
}

}  // namespace
}  // namespace lockstep::test
