// libFuzzer target: the MJCF import (io/mjcf.h) on arbitrary bytes, written to a file and read as
// an MJCF file is by `lockstep` (loadSceneFile: the checks of the file and its counts, MuJoCo's
// compiler, the conversion), then one world of the scene evaluated. The import must either return
// a scene or throw InputError; a scene that loads is complete (its state matches its model) and
// its world evaluates. Anything else (another exception, a crash, a sanitizer report, a trap) is a
// bug. Built by fuzz/build.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "lockstep/engine/batch.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/mjcf_fuzzer_" + std::to_string(getpid()) + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const lockstep::Scene scene = lockstep::loadSceneFile(path);
    const lockstep::Model& model = *scene.model;
    if (static_cast<int>(scene.q0.size()) != model.nq() || static_cast<int>(scene.u0.size()) != model.nu())
      __builtin_trap();
    if (!scene.mjcf || static_cast<int>(scene.mjcf->q0.size()) != model.nq()) __builtin_trap();
    lockstep::Batch<double> batch(scene.model, 1, lockstep::Backend::Cpu);
    lockstep::applyScene(scene, batch);
    batch.evaluate();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
