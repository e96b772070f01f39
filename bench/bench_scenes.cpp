#include "bench_scenes.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/io/scene.h"

namespace lockstep::bench {

namespace {

std::string scenesDirectory() {
  const char* dir = std::getenv("LOCKSTEP_SCENES_DIR");
  return dir ? dir : LOCKSTEP_SOURCE_SCENES_DIR;
}

}  // namespace

const std::vector<BenchScene>& benchScenes() {
  static const std::vector<BenchScene> scenes = [] {
    std::vector<BenchScene> s;
    for (int n : {7, 32}) s.push_back({"chain-" + std::to_string(n), makeChain(n), chainInitialQ(n), {}, false});
    s.push_back({"chain-7-seed", makeChain7Seed(), chainInitialQ(7), {}, true});
    for (int n : {4, 16})
      s.push_back(
          {"free-bushing-grid-" + std::to_string(n), makeFreeBushingGrid(n), freeBushingGridInitialQ(n), {}, false});
    for (BenchScene& scene : s) scene.u0.assign(scene.model->nu(), 0.0);
    for (const char* robot : {"panda", "ur5", "solo12"}) {
      const std::string path = scenesDirectory() + "/" + robot + ".json";
      try {
        const Scene scene = loadSceneFile(path);
        s.push_back({robot, scene.model, scene.q0, scene.u0, !scene.model->contacts().empty()});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lockstep bench: %s left out: %s\n", robot, e.what());
      }
    }
    return s;
  }();
  return scenes;
}

const BenchScene& benchScene(const std::string& name) {
  for (const BenchScene& s : benchScenes())
    if (s.name == name) return s;
  throw std::invalid_argument("no benchmark scene named '" + name + "'");
}

ThroughputConfig throughputConfig(const BenchScene& scene, Backend backend, Precision precision, std::int64_t worlds) {
  ThroughputConfig c;
  c.scene = scene.name;
  c.model = scene.model;
  c.q0 = scene.q0;
  c.u0 = scene.u0;
  c.assemble = scene.assemble;
  c.backend = backend;
  c.precision = precision;
  c.worlds = worlds;
  c.dt = 1e-3;
  c.integrator = Integrator::RK4;
  return c;
}

}  // namespace lockstep::bench
