// The reference scenes (scenes.md) built in code: the default of the command line, the subjects
// of the tests and the benchmarks. The same scenes ship as JSON files under scenes/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lockstep/model.h"

namespace lockstep {

// chain-N: N links on Pins about z, gravity (0, -9.81, 0), each link 1 kg with center of mass
// (0, -0.25, 0) and central inertia diag(0.02, 0.005, 0.02); link i > 1 hangs 0.5 m below i-1.
std::shared_ptr<const Model> makeChain(int links);
// The initial state of chain-N: every q = 0.3 rad, every u = 0.
std::vector<double> chainInitialQ(int links);

}  // namespace lockstep
