// The scene reader (scene.h, docs/scene-format.md), in three files by the part of the scene file
// they read: scene.cpp the model (names, URDF, bodies, force elements, ground contact),
// scene_collisions.cpp the contacts between bodies, scene_joints.cpp the joint stops and actuators, scene_worlds.cpp the initial state, the
// simulation settings and the per-world values. Every value is checked where it is read, so that
// the first problem is reported with its JSON path.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json_node.h"
#include "message_text.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/urdf.h"

namespace lockstep::io {

// Where a name a scene may refer to is: the body carrying it and the name's frame on that body.
// Scene bodies are their own frames; URDF links welded into a body by fixed joints are not.
struct Frame {
  std::string body;  // "ground" for Ground
  Transformd X_BL = Transformd::identity();
  bool isBody = true;
};

class SceneReader {
 public:
  SceneReader(std::string source, std::string baseDirectory, const SceneOptions& options)
      : source_(std::move(source)), baseDirectory_(std::move(baseDirectory)), options_(options) {}

  // A URDF file on its own: the robot welded to Ground (or free, as the options say), default state
  // and simulation settings.
  Scene readUrdfFile(const std::string& path);

  // An MJCF file on its own: its robot, ground contacts, stops and actuators with MjcfOptions'
  // defaults, MuJoCo's qpos0 as the initial state and opt.timestep as the time step.
  Scene readMjcfFile(const std::string& path);

  // A scene file: the model, its stops and actuators, then the state, settings and per-world values.
  Scene read(const std::string& text);

 private:
  // ---- the model (scene.cpp) ----

  // Registers a new name, failing when it is taken.
  void defineName(const std::string& name, const Frame& frame, const JsonNode& node);

  std::vector<std::string> knownNames() const;

  // The frame a body reference names ("ground", a body, or a URDF link).
  const Frame& resolve(const JsonNode& node) const;

  // A joint of the built model, by name.
  const Body& joint(const std::string& name, const JsonNode& node) const;

  // A model check that reports through the scene file.
  template <class F>
  void check(F&& f) const {
    try {
      f();
    } catch (const ModelError& e) {
      throw InputError(source_ + ": " + e.what());
    }
  }

  void readUrdf(const JsonNode& node);

  // "mjcf": {"path", "contact": {"stiffness", "dissipation", "transition_velocity"}, "stops":
  // {"stiffness", "dissipation"}, "corner_radius_fraction", "geoms": {name: {"stiffness",
  // "dissipation", "friction"}}}: the robot with its elements, its names as frames.
  void readMjcf(const JsonNode& node);
  void addMjcf(const MjcfImport& mjcf, const JsonNode* node);
  // The warning of an MJCF robot under the compliant law stepped explicitly, whose pairs of spheres
  // and capsules (MjcfImport::compliantPairs) touch only in the implicit step.
  static std::string compliantPairsWarning(std::size_t pairs);

  // Adds an imported robot's bodies and link names; `node` is where a name clash is reported.
  void addRobot(const UrdfImport& urdf, const JsonNode& node);

  // Scalar or per-u array, each value checked by `value`.
  template <class F>
  std::vector<double> perSpeed(const JsonNode& node, int nu, F value) const {
    if (node.isNumber()) return std::vector<double>(nu, value(node));
    std::vector<double> out;
    if (!node.isArray()) node.fail("must be a number or an array of " + std::to_string(nu) + " numbers");
    for (const JsonNode& e : node.elements(nu)) out.push_back(value(e));
    return out;
  }

  void readBodies(const JsonNode& list);

  // Two ends of a force element or constraint on different bodies.
  void expectDifferentBodies(const Frame& a, const Frame& b, const JsonNode& node, const char* otherKey) const;

  std::array<double, 6> sixNonNegative(const JsonNode& node) const;

  LinearBushingDesc readBushing(const JsonNode& n);

  SpringDamperDesc readSpring(const JsonNode& n);

  ConstantForceDesc readConstantForce(const JsonNode& n);
  SphereContactDesc readContact(const JsonNode& n);

  // The half-space and material of "ground" (defaults for its spheres) or of one sphere (overrides).
  void readGroundParameters(const JsonNode& n, GroundContactDesc& d) const;

  // "ground": a half-space on Ground and the spheres on bodies that touch it (SmoothSphereHalfSpaceForce).
  void readGround(const JsonNode& n);

  // ---- collision geoms (scene_collisions.cpp) ----

  // "collision_geoms": {material defaults, "geoms": [{"name", "body", "shape": "sphere" ("center",
  // "radius"), "capsule" ("from", "to", "radius") or "plane" (on ground: "normal", "point"), material
  // overrides}], "exclude": [[body, body], ..]}: a compliant-law contact for every two geoms that may
  // touch (on different bodies, not both on Ground, not parent and child, not excluded), for steps of
  // `timestep` (the scene's implicit step).
  void readCollisionGeoms(const JsonNode& n, double timestep);

  // ---- joint stops and actuators (scene_joints.cpp) ----

  // A coordinate name of the model being built: "joint" for one-coordinate joints, else "joint.axis"
  // (checked when the model is built; here only that it is a string).
  std::string coordinateName(const JsonNode& n) const;

  // "limits": {"from_urdf": bool, "stiffness": k, "dissipation": d, "stops": [{"coordinate", "lower",
  // "upper", "stiffness", "dissipation"}]}: the URDF's <limit lower upper> with the default k and d,
  // then the listed stops (which replace a URDF stop on the same coordinate).
  void readLimits(const JsonNode& n);

  // "actuators": [{"coordinates": name or [names], "mode", "kp", "kd", "target", "target_velocity",
  // "seed"}]; "target" is a number, {"uniform": [low, high]} or {"uniform": "limits", "margin": m}.
  void readActuators(const JsonNode& list);

  // Refuses a gain that the actuator's mode ignores (kp but for position, kd for torque), which
  // `lockstep info` would otherwise print as if it acted.
  static void expectGainsUsed(const JsonNode& e, ActuatorMode mode);

  // The actuators' targets, once the model (and its stops) is built.
  void resolveTargets();

  // The stiffness or dissipation of a stop that a per-world entry adds on a coordinate without one:
  // the default of "limits", as for the scene's listed stops, else an error.
  static double newStopValue(const std::optional<double>& fallback, const JsonNode& e, const std::string& coordinate,
                             const char* key);

  // The speed of a coordinate named in a per-world entry; it must be one whose qdot is u.
  int speedOfCoordinate(const std::string& name, const JsonNode& node) const;

  // ---- state, simulation, per-world values (scene_worlds.cpp) ----

  // Normalizes (or rejects) the quaternions of the joints in [first, first + count) of q.
  void normalizeQuaternions(std::vector<double>& q, int first, int count, const JsonNode& node) const;

  // {"q": [nq], "u": [nu], "joints": {name: {"q": ..., "u": ...}}}: full vectors first, then joints.
  // Returns which of q and u it set.
  std::pair<bool, bool> readState(const JsonNode& n, std::vector<double>& q, std::vector<double>& u) const;

  // A number (one-coordinate joints) or an array of n numbers.
  std::vector<double> perCoordinate(const JsonNode& node, int n, const char* what) const;

  void readSimulation(const JsonNode& n);

  WorldOverride readOverride(const JsonNode& n);

  // The index of the element called `name` in a list of the model's elements.
  template <class Elements>
  static int element(const Elements& elements, const std::string& name, const JsonNode& node, const char* kind) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (elements[i].desc.name == name) return static_cast<int>(i);
      names.push_back(elements[i].desc.name);
    }
    node.fail(std::string("no ") + kind + " named " + inQuotes(name) + io::didYouMean(name, names));
  }

  // An actuator's target as the file gives it, resolved once the model is built.
  struct PendingTarget {
    std::string coordinate, path;
    ActuatorMode mode = ActuatorMode::Position;
    double position = 0, velocity = 0, margin = 0;
    std::optional<std::pair<double, double>> uniform;
    bool fromLimits = false;
    std::uint64_t seed = 0;
  };
  std::vector<JointStopDesc> urdfLimits_;
  std::optional<double> stopStiffness_, stopDissipation_;  // the defaults of "limits"
  std::vector<PendingTarget> pendingTargets_;

  std::string source_, baseDirectory_;
  SceneOptions options_;
  Scene scene_;
  ModelBuilder builder_;
  std::map<std::string, Frame> frames_;
  std::map<std::string, const Body*> joints_;
  // X_BL of the frames each element's two ends were given on (identity unless a URDF link that was
  // welded into a body), in the order of Model::bushings(), springs() and contacts().
  std::vector<std::pair<Transformd, Transformd>> bushingEnds_, springEnds_, contactEnds_;
  std::vector<UrdfCollisionSphere> urdfCollisionSpheres_;
  std::optional<MjcfImport> mjcf_;  // the MJCF robot, when the scene has one
  // Hands the MJCF import to the scene (Scene::mjcf), once the scene no longer needs it.
  static std::vector<double> mjcfInitialQ(const Model& model, const MjcfImport& mjcf);
  void keepMjcf();
  bool rootHasUrdf_ = false;
};

}  // namespace lockstep::io
