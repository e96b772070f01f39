// URDF import: a robot description (links, inertials, joints) turned into Lockstep bodies.
//
// Mapping (docs/scenes.md, docs/conventions.md):
// - every link whose parent joint moves becomes a body named after the link; its mobilizer is
//   named after the joint;
// - revolute and continuous joints become Pins, whose F and M frames both carry the rotation R
//   taking z onto the joint axis a: X_PF = X_PJ * R, X_BM = R;
// - prismatic joints become Sliders (R takes x onto a), planar joints Planar mobilizers (R takes z
//   onto the plane normal a), floating joints Free mobilizers;
// - fixed joints weld the child link into its parent's body: masses add, the center of mass is the
//   mass-weighted mean and the inertias add after the parallel-axis shift (exactly, no rounding
//   beyond the arithmetic itself);
// - the root link is welded to Ground, or joined to it by a Free mobilizer named "root";
// - <dynamics damping> becomes the mobilizer's viscous damping, <limit effort> its effort limit
//   (an effort of 0, which exporters write for "not given", means no limit);
// - <collision><sphere> elements are listed (UrdfImport::collisionSpheres) for scenes to turn into
//   ground contacts; <visual> elements are kept for viewers (UrdfImport::visuals: boxes,
//   cylinders, spheres and meshes with their material's colour; mesh files are read only when
//   drawn, lockstep/view/visuals.h); other collisions, transmissions, mimic tags and joint
//   position/velocity limits are ignored;
// - gravity is (0, 0, -9.81).
// Inertias must be physically valid (positive semidefinite, principal moments obeying the triangle
// inequality, up to round-off: see validateMassProperties in model.h); invalid ones are reported
// with the link's name, or, on request, replaced by the nearest valid inertia with a warning per
// link. Links that cannot move (a massless leaf, a link without <inertial>, on a moving joint)
// are refused when the model is built (buildModel, and the scene reader: validateJointInertias in
// model.h), naming the link.
// The file must be a tree: a link that is the child of two joints is refused naming both joints;
// chains may be as long as the file (nothing recurses per link), and XML elements may be nested
// at most kMaxUrdfNestingDepth deep (urdfdom's XML parser recurses per element).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/io/input_error.h"
#include "lockstep/engine/model.h"
#include "lockstep/io/visual_shape.h"

namespace lockstep {

enum class UrdfRootJoint { Fixed, Free };

// "fixed" or "free" (the spelling of scene files and of --root); throws InputError naming both
// otherwise.
UrdfRootJoint parseUrdfRootJoint(const std::string& name);

// The deepest nesting of XML elements in a URDF file (docs/scene-format.md, "Limits").
constexpr int kMaxUrdfNestingDepth = 100;

struct UrdfOptions {
  UrdfRootJoint rootJoint = UrdfRootJoint::Fixed;
  // Replace invalid link inertias by the nearest valid inertia (nearestValidInertia) and warn,
  // instead of failing.
  bool repairInertia = false;
};

// Where a URDF link ended up: the body that carries it (itself, or the body it was welded into by
// fixed joints) and the pose X_BL of the link frame L on that body.
struct UrdfLinkPlacement {
  std::string body;
  Transformd X_BL = Transformd::identity();
};

// A <collision> sphere of a link, placed on the body that carries the link.
struct UrdfCollisionSphere {
  std::string link;
  std::string body;
  Vec3d center = Vec3d::zero();  // in the body's frame
  double radius = 0;
};

struct UrdfImport {
  std::string robotName;
  Vec3d gravity = {{0, 0, -9.81}};
  std::vector<BodyDesc> bodies;                       // the root first, parents before children
  std::map<std::string, UrdfLinkPlacement> links;     // every link of the file, by name
  std::vector<std::string> warnings;                  // one line per repaired inertia or ignored tag
  std::vector<UrdfCollisionSphere> collisionSpheres;  // link by link (by name), in file order within one
  std::vector<VisualShape> visuals;                   // <visual> elements, link by link, placed on their bodies
  // <limit lower upper> of revolute and prismatic joints, as joint stops of stiffness and
  // dissipation 0 (a scene's "limits" gives them; docs/scene-format.md). Not added by buildModel().
  std::vector<JointStopDesc> limits;

  // Builds the model of the robot alone (gravity and bodies); throws ModelError for a link that
  // cannot move (validateJointInertias).
  std::shared_ptr<const Model> buildModel() const;
};

// Parses URDF text. `source` names the input in messages (usually the file path). Throws
// InputError("<source>: <element>: <reason>") on the first problem.
UrdfImport importUrdf(const std::string& xml, const std::string& source, const UrdfOptions& options = {});
// Reads and parses a URDF file.
UrdfImport importUrdfFile(const std::string& path, const UrdfOptions& options = {});

// ---- helpers used by the import (exposed for tests and for other importers) ----

// The rotation R with R * from = to, for unit vectors: the shortest rotation, or, when to = -from,
// the half turn about coordinate axis `halfTurnAxis` (0, 1, 2 for x, y, z; perpendicular to
// `from`), so that the frames an importer makes do not depend on round-off. The URDF import takes
// a Pin's and a Planar mobilizer's z onto the joint axis (half turn about x: a Planar mobilizer's
// x stays x) and a Slider's x (half turn about z).
Rotationd rotationTaking(const Vec3d& from, const Vec3d& to, int halfTurnAxis);


// The mass properties of a body C expressed in body B's frame, given X_BC.
MassProperties reexpressMassProperties(const Transformd& X_BC, const MassProperties& inC);
// The mass properties of two bodies rigidly joined, both given in the same frame: masses add, the
// center of mass is the mass-weighted mean, central inertias add after the parallel-axis shift to
// the common center of mass. Two massless parts give a massless result with the inertias summed.
MassProperties combineMassProperties(const MassProperties& a, const MassProperties& b);
// The valid inertia nearest to I in the Frobenius norm: same principal axes, principal moments
// projected onto {p_i >= 0, p_i + p_j >= p_k}. Returns I unchanged when it is already valid.
SymMat33d nearestValidInertia(const SymMat33d& I);

}  // namespace lockstep
