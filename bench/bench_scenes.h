// The reference scenes of docs/scenes.md as the benchmarks run them: model, initial state and
// whether the initial state must be assembled onto the constraints first.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lockstep/study/throughput.h"

namespace lockstep::bench {

struct BenchScene {
  std::string name;  // "chain-7", "free-bushing-grid-16", ...
  std::shared_ptr<const Model> model;
  std::vector<double> q0, u0;
  bool assemble = false;
};

// chain-7, chain-32, chain-7-seed, free-bushing-grid-4, free-bushing-grid-16 (built in code), then
// the robots panda, ur5 and solo12 read from scenes/*.json (their URDFs in models/). The scene
// files are looked up in $LOCKSTEP_SCENES_DIR, else in the source tree this was built from; a robot
// whose file cannot be read is left out, with a note on stderr. Built on first use and kept.
const std::vector<BenchScene>& benchScenes();
const BenchScene& benchScene(const std::string& name);

// A ThroughputConfig for a scene (dt 1e-3, RK4, as docs/scenes.md says).
ThroughputConfig throughputConfig(const BenchScene& scene, Backend backend, Precision precision, std::int64_t worlds);

}  // namespace lockstep::bench
