// A scene described for people: what `lockstep info SCENE` prints and Python's Model.info returns.
#pragma once

#include <string>

#include "lockstep/io/scene.h"

namespace lockstep {

// The scene's name and source, gravity and mass, its bodies, coordinates and speeds, force
// elements, ground contacts, joint stops, actuators, constraints, parameters and per-world
// overrides, then every recordable quantity and per-world parameter by its public name. Lines end
// in '\n'. The scene's warnings are not part of it (Scene::warnings).
std::string describeScene(const Scene& scene);

}  // namespace lockstep
