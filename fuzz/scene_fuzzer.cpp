// libFuzzer target: the scene reader (scene.h) on arbitrary bytes. Relative URDF includes resolve
// against scenes/, so that seeds such as panda.json also exercise the URDF import. The reader must
// either return a scene or throw InputError; anything else (another exception, a crash, a
// sanitizer report) is a bug. Built by fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lockstep/io/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const lockstep::Scene scene = lockstep::parseScene(text, "fuzz.json", LOCKSTEP_SOURCE_DIR "/scenes");
    // A scene that loads is complete: its vectors match its model.
    if (static_cast<int>(scene.q0.size()) != scene.model->nq() || static_cast<int>(scene.u0.size()) != scene.model->nu())
      __builtin_trap();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
