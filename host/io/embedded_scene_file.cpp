// The default scene of the command line, compiled in from scenes/chain-7-seed.json (the build
// generates lockstep/builtin_scene_json.h from that file; see cmake/LockstepFrontend.cmake).
#include "lockstep/builtin_scene_json.h"
#include "lockstep/io/scene.h"

namespace lockstep {

const char* builtinSceneName() { return "chain-7-seed"; }

const std::string& builtinSceneJson() {
  static const std::string json = kBuiltinSceneJson;
  return json;
}

Scene loadBuiltinScene() {
  return parseScene(builtinSceneJson(), std::string("<built-in ") + builtinSceneName() + ">", ".");
}

}  // namespace lockstep
