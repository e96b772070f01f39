// Scene files: a JSON description of one mechanism (bodies, force elements, constraints, or a URDF
// robot), its initial state, simulation defaults and per-world parameter overrides.
// The format is specified in docs/scene-format.md; scenes/ holds the reference scenes of docs/scenes.md.
//
// Reading a scene resolves everything up front: the Model is built and validated, the initial
// state and every per-world override are complete vectors, so that applying a scene to a Batch
// (scene_apply.h) cannot fail on content, only on a world index outside the batch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/io/input_error.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/engine/model.h"
#include "lockstep/physics/integrator.h"
#include "lockstep/io/urdf.h"
#include "lockstep/io/visual_shape.h"

namespace lockstep {

struct SceneOptions {
  // Repair invalid URDF inertias (urdf.h) even when the scene does not ask for it.
  bool repairInertia = false;
  // How the root link of a URDF file read on its own as a scene (loadSceneFile of a .urdf) joins
  // Ground: welded when not given. Scene files say it in their "urdf" entry ("root_joint"):
  // giving it for one is an error.
  std::optional<UrdfRootJoint> urdfRoot;
  // How an MJCF file read on its own as a scene (loadSceneFile of a .xml) models contacts and joint
  // limits: MuJoCo's law when not given (MjcfOptions). Scene files say it in their "mjcf" entry
  // ("contact_law"): giving it for one is an error.
  std::optional<MjcfOptions::ContactLaw> mjcfLaw;
};

// The scene's "simulation" defaults; command-line options override them.
struct SimulationSettings {
  double dt = 1e-3;
  int steps = 1000;
  Integrator integrator = Integrator::RK4;
  std::int64_t worlds = 1;
  std::vector<std::string> record;  // quantities `simulate --out` records (quantities.h); empty: the default
};

// Per-world values of one force element or constraint, by groups that the Batch sets together;
// groups left empty keep the model's values. Frames and points are on the element's bodies.
struct BushingOverride {
  int index;  // into Model::bushings()
  std::optional<std::array<double, 6>> stiffness, damping;
  std::optional<std::pair<Transformd, Transformd>> frames;  // X_B1F, X_B2M
};
struct SpringOverride {
  int index;  // into Model::springs()
  std::optional<std::array<double, 3>> parameters;  // free length, stiffness, damping
  std::optional<std::pair<Vec3d, Vec3d>> points;    // p_AP, p_BQ
};
struct ContactOverride {
  int index;  // into Model::contacts()
  std::optional<std::pair<Vec3d, Vec3d>> centers;   // on F, on B
  std::optional<std::pair<double, double>> radii;   // on F, on B
  std::optional<bool> enabled;
};

// Per-world values of a joint stop and of an actuator, by generalized speed (complete blocks: the
// scene's values where the entry leaves a key out), and of an actuator's targets.
struct StopOverride {
  int u;
  std::array<double, 4> values;  // lower, upper, stiffness, dissipation
};
struct ActuatorOverride {
  int u;
  std::optional<std::array<double, 3>> gains;  // mode, kp, kd
  std::optional<double> targetPosition, targetVelocity;
};

// One entry of "per_world": values that replace the scene's defaults in some worlds. Fields left
// empty keep the defaults. All vectors are complete ([nq], [nu]).
struct WorldOverride {
  std::string path;                  // "per_world[2]", for messages
  std::vector<std::int64_t> worlds;  // the worlds it applies to
  std::optional<Vec3d> gravity;
  std::vector<std::pair<int, MassProperties>> massProperties;  // (body index, complete values)
  std::optional<std::vector<double>> damping;                  // [nu]
  std::optional<std::vector<double>> q, u;                     // [nq], [nu]
  std::vector<BushingOverride> bushings;
  std::vector<SpringOverride> springs;
  std::vector<ContactOverride> contacts;
  std::vector<StopOverride> stops;
  std::vector<ActuatorOverride> actuators;
};

// The PD actuators' targets of one generalized speed in every world: a position (or one drawn
// uniformly from [low, high] per world, counter-based on (seed, speed, world)) and a velocity.
struct TargetSpec {
  int u;  // the speed (and its coordinate)
  double position = 0, velocity = 0;
  std::optional<std::pair<double, double>> uniform;  // [low, high] of the drawn position
  std::uint64_t seed = 0;
};

struct Scene {
  std::string source;  // the file it was read from, or "<built-in chain-7-seed>"
  std::string name;    // the scene's "name", else the file name without extension
  std::string description;
  std::shared_ptr<const Model> model;
  std::vector<double> q0, u0;  // the initial state of every world, before per-world overrides
  SimulationSettings simulation;
  std::vector<TargetSpec> targets;      // of the actuators ("actuators"); set in every world
  std::vector<WorldOverride> perWorld;  // applied in order: a later entry wins
  std::vector<std::string> warnings;    // e.g. repaired URDF inertias
  std::vector<VisualShape> visuals;     // of the URDF or MJCF robot (meshes not yet read); none for "bodies"
  // The MJCF import the scene was made from (its model is `model` unless the scene added to it), or
  // null: what learning code needs of MuJoCo's view (actuators' controls, qpos0, timestep) without
  // compiling the file again.
  std::shared_ptr<const MjcfImport> mjcf;
};

// Reads a scene file. Relative paths inside it (the URDF include) are relative to the file.
// A file ending in .urdf is read as the scene of that robot alone, welded to Ground or free
// (options.urdfRoot; an error for other files).
// Throws InputError("<file>: <JSON path>: <reason>") on the first problem.
Scene loadSceneFile(const std::string& path, const SceneOptions& options = {});
// Parses scene text; `source` names it in messages, `baseDirectory` resolves relative paths.
Scene parseScene(const std::string& json, const std::string& source, const std::string& baseDirectory,
                 const SceneOptions& options = {});

// The default scene of the command line, chain-7-seed (docs/scenes.md), compiled into the library
// from scenes/chain-7-seed.json so that it needs no file at run time.
Scene loadBuiltinScene();
const char* builtinSceneName();
const std::string& builtinSceneJson();

}  // namespace lockstep
