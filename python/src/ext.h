// What the files of lockstep._ext share: the Python model (a scene and its model) and the binders
// of each file. Private to python/src/.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "lockstep/io/scene.h"

namespace lockstep::python {

struct PyModel {
  std::shared_ptr<const Scene> scene;
};

// The Model class, scene loading and description, MJCF layouts and the off-screen renderer (models.cpp).
void bindModels(nanobind::module_& m);

}  // namespace lockstep::python
