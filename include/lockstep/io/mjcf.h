// MJCF import: a MuJoCo model compiled by MuJoCo's own compiler (mj_loadXML), then converted into
// Lockstep bodies, mobilizers and force elements. docs/mjcf.md gives the whole mapping; in short:
// - every MuJoCo body with joints becomes one Lockstep body per joint: the last joint's body carries
//   the mass and keeps the MuJoCo body's name, the ones before it are massless frames named
//   "<body>.<joint>" (Hopper's rootx, rootz, rooty); a body without joints is welded into its
//   parent (masses combined); each mobilizer is named after its joint;
// - hinge -> Pin, slide -> Slider (F and M carry the joint's anchor and the rotation taking z, or x,
//   onto its axis; F is turned back by qpos0, so that Lockstep's q is MuJoCo's qpos), ball -> Ball
//   (u is the angular velocity in F: R(q) times MuJoCo's qvel, which is in the child frame),
//   free -> Free (q = quaternion then position, u = [R w_body; v]: MuJoCo's qpos is position then
//   quaternion, its qvel linear in world then angular in body); qFromMujoco and friends convert;
// - armature, damping, stiffness about springref per degree of freedom; range of a limited hinge or
//   slide -> a joint stop of MjcfOptions' stiffness and dissipation;
// - motor, position and velocity actuators on hinges and slides -> Lockstep actuators (a motor: the
//   action is its control, clamped to ctrlrange, times the gear; position and velocity: PD gains
//   kp gear^2 and kv gear^2 about the `target` field, which holds ctrl / gear); forcerange -> the
//   effort limit (symmetric ranges only);
// - a plane on Ground (the world body or a body welded to it) -> a half-space; spheres, capsules
//   (their two end spheres), boxes (eight corner spheres) and cylinders (eight spheres on each rim)
//   of moving bodies that MuJoCo's contype/conaffinity let touch a plane -> Simbody's
//   SmoothSphereHalfSpaceForce with friction[0] (the larger of the geom's and the plane's) and
//   MjcfOptions' material; contacts between moving bodies are MuJoCo's pair contacts under MuJoCo's
//   law, and under the compliant law its pair contacts between spheres and capsules, in its
//   implicit step only (MjcfImport::compliantPairs);
// - sites are kept by name (Model::sites); sensors are resolved into what Lockstep computes
//   (Model::sensors, physics/sensors.h; the others named in a warning); the geoms of
//   MuJoCo's visible groups (0 to 2, not transparent) are kept for viewers (MjcfImport::visuals,
//   meshes with their triangles);
// - opt.timestep and opt.gravity are read, and <flag/>s that change the model are honoured (gravity,
//   contact, limit, equality, frictionloss, constraint, passive, actuation, clampctrl; docs/mjcf.md);
//   MuJoCo's integrator, solver and contact parameters are not;
// - a sensor's cutoff clamps its values as MuJoCo's (SensorDesc::cutoff);
// - the file is checked before MuJoCo's compiler reads it (mjcf_compile.h: regular files within the
//   input limit, counts within Lockstep's limits) and after (names UTF-8, quaternions nonzero, values
//   finite).
// Features without a Lockstep counterpart are refused naming the element (equality constraints,
// tendons with stiffness, damping or actuators, other actuators, free joints below the top level,
// fluid forces), or loaded with one warning listing what is ignored (frictionloss, tendon limits,
// geoms that cannot touch the ground by this model: ellipsoids, meshes, height fields, static geoms
// other than planes).
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/engine/model.h"
#include "lockstep/physics/integrator.h"
#include "lockstep/io/input_error.h"
#include "lockstep/io/visual_shape.h"

namespace lockstep {

// What MJCF does not say in Lockstep's terms: the contact material, the joint stops, and the corner
// spheres of boxes and cylinders. Overridable in scene files (docs/scene-format.md, "mjcf").
struct MjcfOptions {
  // How contacts and joint limits are modelled: Mujoco (the default: MuJoCo's soft-constraint law,
  // its contact points, friction pyramids, solref and solimp, solved per world at the XML's timestep
  // with its integrator; physics/soft_constraints.h), or Compliant (Hunt-Crossley spheres against
  // half-spaces and Simbody's stops, with the material and stops below, in small RK4 steps).
  enum class ContactLaw { Compliant, Mujoco };
  ContactLaw law = ContactLaw::Mujoco;
  // Hunt-Crossley ground contact material; friction comes from the geoms (friction[0]).
  double contactStiffness = 1e6;         // E (N/m^2)
  double contactDissipation = 2;         // c (s/m)
  double transitionVelocity = 0.1;       // vt (m/s)
  // Joint stops on the range of limited hinges (N m/rad) and slides (N/m).
  double stopStiffness = 1e4;
  double stopDissipation = 1;            // s/rad or s/m
  // The radius of the spheres at a box's corners and on a cylinder's rims, as a fraction of the
  // smallest half-size (the spheres sit inside the shape, touching its faces).
  double cornerRadiusFraction = 0.1;
  // Per geom (by name): its material instead of the above (friction[0] still from the geoms unless
  // staticFriction >= 0).
  struct GeomMaterial {
    double stiffness = -1, dissipation = -1, friction = -1;  // < 0: the default
  };
  std::map<std::string, GeomMaterial> geoms;
};

struct MjcfActuator {
  std::string name;
  std::string kind;    // "motor", "position" or "velocity"
  std::string joint;
  int u;               // the speed it drives
  double gear;
  bool drivesTarget;   // position and velocity: ctrl / gear goes into `target`, not the action
  double controlLower = -std::numeric_limits<double>::infinity();  // ctrlrange (unbounded unless ctrllimited)
  double controlUpper = std::numeric_limits<double>::infinity();
};

struct MjcfImport {
  std::string modelName;
  double timestep = 0.002;
  Integrator integrator = Integrator::RK4;  // MuJoCo's RK4, or its Euler (and implicit) as semi-implicit Euler
  MjcfOptions::ContactLaw law = MjcfOptions::ContactLaw::Mujoco;  // the law it was converted with
  std::shared_ptr<const Model> model;
  ModelBuilder builder;                 // what built `model`, to extend (scene files)
  std::vector<MjcfActuator> actuators;  // in MuJoCo's order (ctrl index)
  // MuJoCo's joints and bodies are elements of the model (model->mujocoJoints(), mujocoBodies(): MuJoCo's
  // order, body 0 the world).
  int mujocoNq = 0, mujocoNv = 0;
  std::vector<double> q0;               // MuJoCo's qpos0 in Lockstep's coordinates
  std::vector<VisualShape> visuals;     // the visible geoms, placed on their Lockstep bodies
  std::vector<std::string> warnings;    // one line per kind of ignored feature
  // Under the compliant law: the pairs of spheres and capsules on different moving bodies that
  // MuJoCo's collision rules let touch, as the compliant law's pair contacts, for its implicit step
  // only (the scene reader adds them with the step's dt; the explicit step has no contacts between
  // bodies). Their material: MjcfOptions' (per geom), E and c combined as pairMaterial combines them;
  // friction MuJoCo's (the larger friction[0], an explicit pair's own).
  std::vector<PairContactDesc> compliantPairs;
};

// Compiles the file with MuJoCo's compiler and converts it. Throws InputError("<file>: <element>:
// <reason>") for what MuJoCo refuses and for features Lockstep cannot model.
MjcfImport importMjcfFile(const std::string& path, const MjcfOptions& options = {});

// Whether a path names an MJCF file (ends in .xml; MJCF is MuJoCo's XML).
bool isMjcfPath(const std::string& path);
// "mujoco" or "compliant" (a scene's "contact_law", the command line's --contact-law); throws
// InputError naming the accepted values otherwise.
MjcfOptions::ContactLaw parseMjcfContactLaw(const std::string& name);

// MuJoCo's state in Lockstep's coordinates and back (the joint map above): q [nq] and u [nu] from
// qpos [nq_mj] and qvel [nv_mj]; and Lockstep's q, u back to qpos, qvel. Accelerations map as
// velocities do (uFromMujoco(qpos, qacc) is udot: the rotation's rate drops out, w x w = 0).
// The model's MuJoCo joints (Model::mujocoJoints) give the map; qFromMujoco normalizes quaternions.
std::vector<double> qFromMujoco(const Model& model, const double* qpos);
std::vector<double> uFromMujoco(const Model& model, const double* qpos, const double* qvel);
std::vector<double> qToMujoco(const Model& model, const std::vector<double>& q);
std::vector<double> uToMujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& u);
std::vector<double> qFromMujoco(const MjcfImport& m, const double* qpos);
std::vector<double> uFromMujoco(const MjcfImport& m, const double* qpos, const double* qvel);
std::vector<double> qToMujoco(const MjcfImport& m, const std::vector<double>& q);
std::vector<double> uToMujoco(const MjcfImport& m, const std::vector<double>& q, const std::vector<double>& u);

}  // namespace lockstep
