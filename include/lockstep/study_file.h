// Study files: a Monte Carlo study (study.h) described in JSON, either in a file of its own that
// names its scene, or as the "study" object of a scene file. The format is in docs/study-format.md.
#pragma once

#include <string>

#include "lockstep/scene.h"
#include "lockstep/study.h"

namespace lockstep {

struct StudyFile {
  std::string source;     // the file the study was read from
  Scene scene;            // the mechanism, its initial state and per-world values
  StudySpec spec;         // worlds, steps, dt and integrator default to the scene's simulation
  std::string precision;  // "float" or "double" (default "double")
};

// Reads a study file or a scene file with a "study" object. Throws InputError
// ("<file>: <JSON path>: <reason>") for anything malformed, including parameter and output names
// the model does not have.
StudyFile loadStudyFile(const std::string& path, const SceneOptions& options = {});
StudyFile parseStudy(const std::string& json, const std::string& source, const std::string& baseDirectory,
                     const SceneOptions& options = {});

}  // namespace lockstep
