// libFuzzer target: the study file reader (study_file.h) on arbitrary bytes. Relative scene paths
// resolve against studies/, so that seeds such as chain-7-seed-stiffness.json also read the scene
// they name (and, through it, URDF robots); a study without "scene" uses the built-in scene, and
// a scene file may carry its "study". Reading must either return a study or throw InputError;
// anything else (another exception, a crash, a sanitizer report) is a bug. Built by fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lockstep/io/study_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const lockstep::StudyFile study = lockstep::parseStudy(text, "fuzz.json", LOCKSTEP_SOURCE_DIR "/studies");
    // A study that reads is complete: a model, at least one output, sizes in range.
    if (!study.scene.model || study.spec.outputs.empty() || study.spec.worlds < 1 || study.spec.steps < 0 ||
        !(study.spec.dt > 0) || (study.precision != "float" && study.precision != "double"))
      __builtin_trap();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
