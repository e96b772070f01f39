// MJCF imports under the compliant law (Hunt-Crossley spheres and joint stops), for the tests of
// that conversion: an import takes MuJoCo's law unless told otherwise (io/mjcf.h, MjcfOptions).
#pragma once

#include <string>

#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"

namespace lockstep::test {

inline MjcfOptions compliantLaw() {
  MjcfOptions o;
  o.law = MjcfOptions::ContactLaw::Compliant;
  return o;
}

inline MjcfImport importCompliant(const std::string& path) { return importMjcfFile(path, compliantLaw()); }

// loadSceneFile's options for an MJCF file read on its own under the compliant law.
inline SceneOptions compliantScene() {
  SceneOptions o;
  o.mjcfLaw = MjcfOptions::ContactLaw::Compliant;
  return o;
}

}  // namespace lockstep::test
