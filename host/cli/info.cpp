// `lockstep info SCENE`: what a scene's model is made of.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_description.h"

namespace lockstep::cli {

namespace {

struct InfoOptions {
  std::string scene;
  bool repairInertia = false;
  std::string root;  // --root fixed|free, for a .urdf file
  std::string contactLaw;  // --contact-law mujoco|compliant, for an MJCF (.xml) file
};

int info(const InfoOptions& o) {
  SceneOptions sceneOptions;
  sceneOptions.repairInertia = o.repairInertia;
  if (!o.root.empty()) sceneOptions.urdfRoot = parseUrdfRootJoint(o.root);
  if (!o.contactLaw.empty()) sceneOptions.mjcfLaw = parseMjcfContactLaw(o.contactLaw);
  const Scene scene = loadSceneFile(o.scene, sceneOptions);
  for (const std::string& w : scene.warnings) std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());
  std::fputs(describeScene(scene).c_str(), stdout);
  return 0;
}

}  // namespace

Command addInfoCommand(CLI::App& parent) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* app = parent.add_subcommand("info", "Describe a scene: bodies, coordinates, force elements, constraints, parameters, recordable quantities");
  app->add_option("scene", o->scene, "Scene file (JSON, docs/scene-format.md)")->required();
  app->add_flag("--repair-inertia", o->repairInertia,
                "Replace physically invalid URDF inertias by the nearest valid ones (with a warning per link)");
  app->add_option("--root", o->root, "For a .urdf file: weld its root link to Ground (fixed, the default) or free it")
      ->check(CLI::IsMember({"fixed", "free"}));
  app->add_option("--contact-law", o->contactLaw,
                  "For an MJCF (.xml) file: MuJoCo's contacts and limits at the file's timestep (mujoco, the default) or "
                  "compliant contacts and joint stops (docs/mjcf.md, \"Contact laws\")")
      ->check(CLI::IsMember({"mujoco", "compliant"}));
  return {app, [o] { return info(*o); }};
}

}  // namespace lockstep::cli
