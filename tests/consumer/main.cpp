// A small program against the installed Lockstep: builds a pendulum with the public API, steps a
// Batch<double> on the CPU backend and checks it against closed forms; then loads two of the
// installed scene files (one of them a URDF robot). Exits 1, saying why, on the first failure.
//
//   lockstep_consumer SCENES_DIR     (SCENES_DIR: share/lockstep/scenes of the install prefix)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"

using namespace lockstep;

namespace {

int failures = 0;

std::string num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// A rigid pendulum on a Pin about z: mass m, center of mass at distance a below the pivot, central
// inertia Izz about z; gravity (0, -g, 0). With q the angle from hanging straight down:
//   udot = -m g a sin(q) / (Izz + m a^2),   KE + PE = (Izz + m a^2) u^2 / 2 - m g a cos(q).
void pendulum() {
  const double m = 1.5, a = 0.4, Izz = 0.03, g = 9.81;
  ModelBuilder mb;
  mb.setGravity({{0, -g, 0}});
  BodyDesc link;
  link.name = "link";
  link.mobilizer = MobilizerType::Pin;
  link.mass.mass = m;
  link.mass.com = {{0, -a, 0}};
  link.mass.inertia = SymMat33d::diagonal(0.01, 0.02, Izz);
  mb.addBody(link);
  const std::shared_ptr<const Model> model = mb.build();

  const std::vector<double> q0 = {0.2, 0.7, 1.5, 2.8};
  Batch<double> batch(model, static_cast<std::int64_t>(q0.size()), Backend::Cpu);
  for (std::size_t w = 0; w < q0.size(); ++w) {
    batch.setQ(w, {q0[w]});
    batch.setU(w, {0.0});
  }
  batch.evaluate();
  const double J = Izz + m * a * a;
  std::vector<double> e0(q0.size());
  for (std::size_t w = 0; w < q0.size(); ++w) {
    const double want = -m * g * a * std::sin(q0[w]) / J;
    const double got = batch.udot(w)[0];
    check(std::abs(got - want) <= 1e-12 * std::abs(want),
          "pendulum udot at q = " + num(q0[w]) + ": " + num(got) + " (closed form " +
              num(want) + ")");
    e0[w] = batch.kineticEnergy(w) + batch.potentialEnergy(w);
    const double eWant = -m * g * a * std::cos(q0[w]);
    check(std::abs(e0[w] - eWant) <= 1e-12 * std::abs(eWant), "pendulum energy at rest equals -m g a cos(q)");
  }

  batch.step(1e-3, 2000, Integrator::RK4);  // 2 s, about two periods
  batch.evaluate();
  for (std::size_t w = 0; w < q0.size(); ++w) {
    check(batch.status(w) == 0, "pendulum world " + std::to_string(w) + " healthy: " + describeStatus(batch.status(w)));
    check(std::abs(batch.time(w) - 2.0) < 1e-12, "pendulum world " + std::to_string(w) + " reached t = 2 s");
    const double q = batch.q(w)[0], u = batch.u(w)[0];
    const double e1 = batch.kineticEnergy(w) + batch.potentialEnergy(w);
    const double eClosed = 0.5 * J * u * u - m * g * a * std::cos(q);
    check(std::abs(e1 - eClosed) <= 1e-12 * std::abs(e0[w]), "pendulum energy of the stepped state is the closed form");
    // RK4 at dt = 1e-3 keeps the energy of these swings to 1e-11 relative or better; 1e-9 leaves room
    // for the largest amplitude and still catches a wrong integrator or force.
    check(std::abs(e1 - e0[w]) <= 1e-9 * std::abs(e0[w]),
          "pendulum from q = " + num(q0[w]) + " conserves energy over 2 s (drift " +
              num((e1 - e0[w]) / std::abs(e0[w])) + " relative)");
    check(std::abs(q) <= q0[w] + 1e-9, "pendulum never swings higher than it started");
  }
}

// The installed chain-7 scene file is the chain-7 the library builds in code; the panda scene
// loads its URDF from the installed models folder.
void scenes(const std::string& dir) {
  const Scene chain = loadSceneFile(dir + "/chain-7.json");
  Batch<double> fromFile(chain.model, 1, Backend::Cpu);
  applyScene(chain, fromFile);
  fromFile.evaluate();
  Batch<double> inCode(makeChain(7), 1, Backend::Cpu);
  inCode.setQ(0, chainInitialQ(7));
  inCode.evaluate();
  const std::vector<double> a = fromFile.udot(0), b = inCode.udot(0);
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  check(a.size() == 7 && diff <= 1e-12, "installed chain-7.json gives makeChain(7)'s udot");

  const Scene panda = loadSceneFile(dir + "/panda.json");
  Batch<double> robot(panda.model, 2, Backend::Cpu);
  applyScene(panda, robot);
  robot.step(1e-3, 10, Integrator::RK4);
  bool finite = true;
  for (double x : robot.q(1)) finite = finite && std::isfinite(x);
  check(panda.model->nu() == 9 && robot.status(1) == 0 && finite, "installed panda.json loads its URDF and steps");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENES_DIR\n", argv[0]);
    return 2;
  }
  try {
    pendulum();
    scenes(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
