// The reference scenes (docs/scenes.md) built in code: the default of the command line, the subjects
// of the tests and the benchmarks. The same scenes ship as JSON files under scenes/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lockstep/engine/model.h"

namespace lockstep {

// chain-N: N links on Pins about z, gravity (0, -9.81, 0), each link 1 kg with center of mass
// (0, -0.25, 0) and central inertia diag(0.02, 0.005, 0.02); link i > 1 hangs 0.5 m below i-1.
std::shared_ptr<const Model> makeChain(int links);
// The initial state of chain-N: every q = 0.3 rad, every u = 0.
std::vector<double> chainInitialQ(int links);

// chain-7-seed: chain-7 plus a LinearBushing (Ground frame at (0.1, -3.5, 0) to link 7 frame at
// (0, -0.5, 0), k (10,10,10,100,100,100), c (1,1,1,5,5,5)), a LinearSpringDamper (Ground point
// (0.5, 0, 0) to link 7 point (0, -0.5, 0), free length 0.8, k 200, c 2) and a non-rolling
// SphereOnSphereContact (Ground sphere at (0.3, -3.55, 0), radius 0.2; link 7 sphere at
// (0, -0.5, 0), radius 0.1). Each element can be left out, for tests that need only some.
struct SeedElements {
  bool bushing = true, spring = true, contact = true;
};
std::shared_ptr<const Model> makeChain7Seed(SeedElements elements = {});

// free-bushing-grid-n: n x n bodies on Free mobilizers from Ground, at (i, j, 0), no gravity,
// each with the mass properties of docs/reference-values.md (bushing case 1); bushings to the right and upper
// neighbours and from the corner body (0, 0) to Ground.
std::shared_ptr<const Model> makeFreeBushingGrid(int n);
// Its initial state: body k (row-major) turned 0.05 rad about a_k and moved 0.01 m along a_k,
// a_k = normalize(sin(k + 1), cos(2k + 1), 0.5); u = 0.
std::vector<double> freeBushingGridInitialQ(int n);

}  // namespace lockstep
