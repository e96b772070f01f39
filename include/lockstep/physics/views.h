// Lockstep views: the plain structs that kernels and the CPU backend receive.
//
// ModelView<T>   the model's topology and constant frames, converted to T (shared by all worlds).
// BatchView<T>   base pointers of every per-world field and parameter of a batch.
// WorldView<T>   one world's Strided views into a BatchView (what the per-world physics sees).
// (Workspace<T>, one world's scratch, and the element accessors are in workspace.h.)
//
// Every per-world field is declared exactly once, in the field registry below (LOCKSTEP_WORLD_FIELDS
// and LOCKSTEP_PARAM_FIELDS); everything that lists fields is generated from it.
#pragma once

#include <cstdint>

#include "lockstep/physics/mobilizer.h"

namespace lockstep {

// Constraint equations one world may carry (3 per rolling contact, 1 otherwise).
constexpr int kMaxConstraintEquationsPerWorld = 64;

// THE ELEMENT KINDS. Every kind of element a Model holds besides its bodies is one line here; the
// model's storage and its builder's (engine/model.h), Sizes, Per, the ModelView's and the kernels'
// arrays, the pack and dual models, the element names of every per-world quantity and `lockstep info`
// are generated from it (docs/engine.md, "A new element kind", gives the recipe).
//   M(X, category, Kind, list, count, per, array, topology, word, placeholder)
// category  Body: an element the per-world code loops over, with per-world fields of its own
//             (Per::per) and its integers in the ModelView (the array `array` of `topology`, which
//             the kind's elementTopology fills); Speed: an element on one generalized speed, whose
//             per-world fields are per speed; Host: an element only the host reads
// Kind      the element as a built Model holds it; Kind##Desc is what a user gives (ModelBuilder::add),
//           and its kind's rules (build, topology, description) are in host/model/elements_*.cpp
// list      the Model's and the ModelBuilder's list of them: model.list(), builder.list()
// count     its Sizes member: how many the model holds (0: the per-world code skips the kind)
// word      what messages and `lockstep info` call one; placeholder: its name in name patterns and,
//           with its index, the name of an unnamed one ("bushing0")
// (per, array and topology are "-" for the kinds that have none.) The order is `lockstep info`'s.
#define LOCKSTEP_ELEMENT_TABLE(M, X)                                                                                 \
  M(X, Body, LinearBushing, bushings, nBushings, Bushing, bushing, ElementTopology, "bushing", "bushing")              \
  M(X, Body, SpringDamper, springs, nSprings, Spring, spring, ElementTopology, "spring-damper", "spring")              \
  M(X, Body, ConstantForce, constantForces, nConstantForces, ConstantForce, constantForce, ElementTopology,           \
    "constant force", "force")                                                                                         \
  M(X, Body, GroundContact, groundContacts, nGround, Ground, ground, ElementTopology, "ground contact", "ground")       \
  M(X, Body, PlaneContact, planeContacts, nPlaneContacts, PlaneContact, planeContact, PlaneContactTopology,           \
    "plane contact", "plane_contact")                                                                                 \
  M(X, Body, PairContact, pairContacts, nPairContacts, PairContact, pairContact, PairContactTopology,                \
    "pair contact", "pair_contact")                                                                                   \
  M(X, Body, SoftLimit, softLimits, nSoftLimits, SoftLimit, softLimit, SoftLimitTopology, "joint limit", "limit")     \
  M(X, Speed, JointStop, stops, nStops, -, -, -, "joint stop", "stop")                                                  \
  M(X, Speed, Actuator, actuators, nActuators, -, -, -, "actuator", "actuator")                                         \
  M(X, Body, SphereContact, contacts, nContacts, Contact, contact, ElementTopology, "sphere contact", "contact")        \
  M(X, Host, Site, sites, nSites, -, -, -, "site", "site")                                                               \
  M(X, Body, Sensor, sensors, nSensors, Sensor, sensor, SensorTopology, "sensor", "sensor")                             \
  M(X, Body, MujocoJoint, mujocoJoints, nMujocoJoints, MujocoJoint, mujocoJoint, MujocoJointMap, "MuJoCo joint",        \
    "joint")                                                                                                           \
  M(X, Body, MujocoBody, mujocoBodies, nMujocoBodies, MujocoBody, mujocoBodyTree, MujocoBodyTopology, "MuJoCo body",    \
    "mujoco_body")
// Every kind: X(Kind, list, count, per, array, topology, word, placeholder).
#define LOCKSTEP_EVERY_KIND(X, category, ...) X(__VA_ARGS__)
#define LOCKSTEP_ELEMENT_KINDS(X) LOCKSTEP_ELEMENT_TABLE(LOCKSTEP_EVERY_KIND, X)
// The Body kinds only: X(Kind, list, count, per, array, topology, word, placeholder).
#define LOCKSTEP_BODY_KIND(X, category, ...) LOCKSTEP_BODY_KIND_##category(X, __VA_ARGS__)
#define LOCKSTEP_BODY_KIND_Body(X, ...) X(__VA_ARGS__)
#define LOCKSTEP_BODY_KIND_Speed(X, ...)
#define LOCKSTEP_BODY_KIND_Host(X, ...)
#define LOCKSTEP_BODY_ELEMENTS(X) LOCKSTEP_ELEMENT_TABLE(LOCKSTEP_BODY_KIND, X)

// Counts that size every per-world array.
struct Sizes {
  std::int32_t nb = 0;  // mobilized bodies (Ground excluded)
  std::int32_t nq = 0;  // generalized coordinates
  std::int32_t nu = 0;  // generalized speeds
  std::int32_t nz = 0;  // auxiliary states (dissipated energies)
  std::int32_t nd = 0;  // entries of the per-body inverse joint inertias D^-1 (sum of nu_b^2)
  // Elements of each kind the model declares (none: the per-world code of the kind is skipped).
#define LOCKSTEP_X(Kind, list, count, ...) std::int32_t count = 0;
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::int32_t nc = 0;  // constraint equations of all contacts (3 rolling, 1 otherwise)
  std::int32_t nArmatures = 0, nJointSprings = 0;  // speeds with armature, with a joint spring (none:
                                                   // their code is skipped)
  std::int32_t nSensorData = 0;  // values of the model's sensors
  std::int32_t nMujocoQpos = 0, nMujocoDof = 0;  // MuJoCo's nq and nv of an MJCF model (0 otherwise)
  // The soft constraints of MuJoCo's law (soft_constraints.h): the most contact points of all plane
  // and pair contacts together, and the most constraint rows (contact points' pyramid edges, limits'
  // sides).
  std::int32_t nSoftPoints = 0, nSoftRows = 0;
  // 1: some plane contact or limit is under the compliant law (its blocks' parameters: the
  // workspace's softCompliance).
  std::int32_t softCompliant = 0;
  // 1: the model steps as MuJoCo's RK4 (integrator.h; Model::mujocoStepping, or soft rows).
  std::int32_t mujocoStepping = 0;
};
// Whether the model has contacts under MuJoCo's law (plane or pair contacts): the solve puts their
// forces in the field bodyContact.
LOCKSTEP_HD_INLINE bool hasSoftContacts(const Sizes& s) { return s.nPlaneContacts > 0 || s.nPairContacts > 0; }

// What the components of a per-world field are counted per: component c of a field is element
// c / width, part c % width, where width is the number of its component names (1 when none).
enum class Per : std::int8_t {
  World,
  Coordinate,
  Speed,
  Aux,
  Body,
#define LOCKSTEP_X(Kind, list, count, per, ...) per,
  LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
  Equation,
  SoftPoint,
  SensorValue,
  MujocoQpos,
  MujocoDof,
};
LOCKSTEP_HD_INLINE constexpr std::int64_t perCount(Per per, const Sizes& s) {
  switch (per) {
    case Per::World: return 1;
    case Per::Coordinate: return s.nq;
    case Per::Speed: return s.nu;
    case Per::Aux: return s.nz;
    case Per::Body: return s.nb;
#define LOCKSTEP_X(Kind, list, count, per, ...) \
  case Per::per: return s.count;
      LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
    case Per::Equation: return s.nc;
    case Per::SoftPoint: return s.nSoftPoints;
    case Per::SensorValue: return s.nSensorData;
    case Per::MujocoQpos: return s.nMujocoQpos;
    case Per::MujocoDof: return s.nMujocoDof;
  }
  return 0;
}
// Words of a space-separated list of component names (1 for an empty list).
constexpr int componentWidth(const char* names) {
  int n = 0;
  for (bool inWord = false; *names; ++names) {
    const bool space = *names == ' ';
    if (!space && !inWord) ++n;
    inWord = !space;
  }
  return n > 0 ? n : 1;
}
LOCKSTEP_HD_INLINE constexpr std::int64_t fieldCount(const Sizes& s, Per per, const char* components) {
  return perCount(per, s) * componentWidth(components);
}

// What a field is to a step: which of them a SIMD pack gathers, writes back, and when.
enum class Role : std::int8_t {
  State,        // advanced by the integrator: gathered and written back
  Input,        // written by the user, read by a step: gathered
  Evaluation,   // written by evaluate(): written back
  Observation,  // written after every step, reset and evaluate(): written back
  Reset,        // the state a reset returns to
  Health,       // status bits and automatic-reset bookkeeping
  Parameter,    // per-world parameters (shared until a world overrides them)
};

// THE FIELD REGISTRY. Every per-world quantity stored in a Batch is one line here; storage (host
// and device), views, upload and download, the SIMD packs' gather and write-back, the per-world
// parameter accessors and their public names, the study parameter and outcome names and the
// recordable outputs are generated from these two lists (host/batch/fields.cpp lists them at run time).
//   X(type, name, per, role, public prefix, component names, description)
// A component's public name is  prefix[.element name][.component name]  (element names for
// Per::World none; coordinates, speeds and auxiliary states by their model names; bodies and
// elements by theirs). Adding a quantity is adding a line.
#define LOCKSTEP_WORLD_FIELDS(X)                                                                                 \
  X(T, q, Per::Coordinate, Role::State, "q", "", "generalized coordinates; written by the integrator")                  \
  X(T, u, Per::Speed, Role::State, "u", "", "generalized speeds; written by the integrator")                           \
  X(T, z, Per::Aux, Role::State, "z", "", "auxiliary states: dissipated energies; written by the integrator")          \
  X(T, time, Per::World, Role::State, "time", "", "simulated time; written by the integrator")                        \
  X(T, tau, Per::Speed, Role::Input, "tau", "", "applied mobility forces, the actions; written by the user")           \
  X(T, bodyForce, Per::Body, Role::Input, "body_force", "mx my mz fx fy fz",                                          \
    "applied spatial force at each body origin, in G; written by the user")                                            \
  X(T, target, Per::Speed, Role::Input, "target", "position velocity",                                             \
    "PD actuator setpoints: the coordinate's position target and the speed's velocity target; written by the user")    \
  X(T, udot, Per::Speed, Role::Evaluation, "udot", "", "generalized accelerations; written by evaluate()")             \
  X(T, energy, Per::World, Role::Evaluation, "energy", "kinetic potential",                                           \
    "kinetic and potential energy (force elements included); written by evaluate()")                                   \
  X(T, multipliers, Per::Equation, Role::Evaluation, "multiplier", "", "constraint multipliers; written by evaluate()") \
  X(T, bodyPose, Per::Body, Role::Observation, "body", "x y z qw qx qy qz",                                           \
    "observation: p_GB, then R_GB as a quaternion (w, x, y, z)")                                                       \
  X(T, bodyVelocity, Per::Body, Role::Observation, "body", "wx wy wz vx vy vz", "observation: V_GB at Bo, in G")       \
  X(T, bushingState, Per::Bushing, Role::Observation, "bushing", "q.0 q.1 q.2 q.3 q.4 q.5 f.0 f.1 f.2 f.3 f.4 f.5", \
    "observation: the bushing's coordinates q, then its generalized forces f")                                         \
  X(T, contactError, Per::Contact, Role::Observation, "contact", "error", "observation: signed separation")             \
  X(T, groundState, Per::Ground, Role::Observation, "ground", "penetration slip_speed normal_force friction_force power", \
    "observation: ground contact penetration, slip speed |v_t|, normal and friction force magnitudes on the sphere, "  \
    "power the contact delivers to the body")                                                                          \
  X(T, bodyContact, Per::Body, Role::Observation, "body_contact", "mx my mz fx fy fz",                                  \
    "observation: the contacts' (ground, plane and pair contacts') total spatial force on each body, about Bo, in G " \
    "(zero without contact; under MuJoCo's law the last solve's, zero at a state no solve has seen)")               \
  X(T, actuator, Per::Speed, Role::Observation, "actuator", "effort power",                                        \
    "observation: the applied mobility force (action plus PD, within the effort limit) and its power effort * u")     \
  X(T, stopForce, Per::Speed, Role::Observation, "stop", "force", "observation: the joint stop's generalized force")    \
  X(T, softContact, Per::SoftPoint, Role::Evaluation, "soft_contact",                                               \
    "active dist pos.x pos.y pos.z normal.x normal.y normal.z force.normal force.t1 force.t2 force.x force.y force.z " \
    "torque.normal torque.t1 torque.t2 torque.x torque.y torque.z",                                                   \
    "each contact point of the plane and pair contacts, as the last evaluate() left it (a step does not write it; " \
    "recording evaluates first): 1 where "                                                                             \
    "it is in contact, MuJoCo's dist, point and normal in Ground (a pair's from its first geom to its second), and the " \
    "force on the (second geom's) body in the contact frame (normal, two tangents) and in Ground, then its torque "  \
    "in the contact frame (torsional about the normal, rolling about the tangents: condim 4 and 6) and in Ground")   \
  X(T, softLimitForce, Per::SoftLimit, Role::Evaluation, "limit", "force",                                            \
    "each soft joint limit's generalized force on its speed, as the last evaluate() left it")                                  \
  X(T, softSolver, Per::World, Role::Evaluation, "soft_solver", "iterations gradient",                                \
    "the soft-constraint solve of the last evaluate(): Newton iterations and the final gradient's largest entry")     \
  X(T, sensors, Per::SensorValue, Role::Observation, "sensor", "",                                                   \
    "observation: MuJoCo's sensordata of the model's sensors (the accelerations' of the last evaluate())")           \
  X(T, mujocoQpos, Per::MujocoQpos, Role::Observation, "qpos", "", "observation: MuJoCo's qpos (MJCF models)")          \
  X(T, mujocoQvel, Per::MujocoDof, Role::Observation, "qvel", "", "observation: MuJoCo's qvel (MJCF models)")           \
  X(T, mujocoBody, Per::MujocoBody, Role::Observation, "mujoco_body",                                                \
    "xpos.x xpos.y xpos.z xmat.r00 xmat.r01 xmat.r02 xmat.r10 xmat.r11 xmat.r12 xmat.r20 xmat.r21 xmat.r22 "          \
    "xipos.x xipos.y xipos.z subtree_com.x subtree_com.y subtree_com.z cinert.xx cinert.yy cinert.zz cinert.xy "      \
    "cinert.xz cinert.yz cinert.mx cinert.my cinert.mz cinert.m cvel.wx cvel.wy cvel.wz cvel.vx cvel.vy cvel.vz "     \
    "cfrc_ext.mx cfrc_ext.my cfrc_ext.mz cfrc_ext.fx cfrc_ext.fy cfrc_ext.fz",                                       \
    "observation: MuJoCo's xpos, xmat, xipos, subtree_com, cinert, cvel and cfrc_ext of each MuJoCo body (MJCF models; " \
    "under MuJoCo's law after a step, as MuJoCo's after mj_step, from the step's last evaluation; cfrc_ext zero at a " \
    "state no solve has seen)")                                                                                      \
  X(T, initialQ, Per::Coordinate, Role::Reset, "initial_q", "", "the q a reset returns to")                            \
  X(T, initialU, Per::Speed, Role::Reset, "initial_u", "", "the u a reset returns to")                                 \
  X(std::int32_t, status, Per::World, Role::Health, "status", "", "StatusFlag bits; 0 while the world is healthy")     \
  X(std::int32_t, lastFailure, Per::World, Role::Health, "last_failure", "",                                          \
    "StatusFlag bits that caused the last automatic reset")                                                            \
  X(std::int32_t, resetCount, Per::World, Role::Health, "reset_count", "", "automatic resets of the world so far")

#define LOCKSTEP_PARAM_FIELDS(X)                                                                                 \
  X(T, massProps, Per::Body, Role::Parameter, "body",                                                                  \
    "mass com.x com.y com.z inertia.xx inertia.yy inertia.zz inertia.xy inertia.xz inertia.yz",                       \
    "mass, center of mass p_BC, central inertia in B")                                                                 \
  X(T, gravity, Per::World, Role::Parameter, "gravity", "x y z", "gravity, in G")                                      \
  X(T, damping, Per::Speed, Role::Parameter, "damping", "", "viscous joint damping per generalized speed")             \
  X(T, armature, Per::Speed, Role::Parameter, "armature", "",                                                      \
    "rotor inertia added to the joint inertia of each generalized speed (MJCF armature)")                             \
  X(T, jointSpring, Per::Speed, Role::Parameter, "joint_spring", "stiffness reference",                            \
    "linear spring -stiffness (q - reference) on the coordinate of a speed whose qdot is u (MJCF stiffness, springref)") \
  X(T, effortLimit, Per::Speed, Role::Parameter, "effort_limit", "",                                                 \
    "bound on |action + PD| per generalized speed")                                                                   \
  X(T, stopParams, Per::Speed, Role::Parameter, "stop", "lower upper stiffness dissipation",                         \
    "joint stop (Simbody MobilityLinearStop) on the coordinate of a speed whose qdot is u; bounds +/-inf: none")      \
  X(T, actuatorGains, Per::Speed, Role::Parameter, "actuator", "mode kp kd",                                         \
    "actuator mode (0 torque, 1 position, 2 velocity) and PD gains per generalized speed")                            \
  X(T, actuatorControl, Per::Speed, Role::Parameter, "actuator", "gear control_lower control_upper",               \
    "the action of an actuated speed as a control: clamped to [control_lower, control_upper], times the gear")       \
  X(T, bushingFrames, Per::Bushing, Role::Parameter, "bushing",                                                        \
    "X_B1F.r00 X_B1F.r01 X_B1F.r02 X_B1F.r10 X_B1F.r11 X_B1F.r12 X_B1F.r20 X_B1F.r21 X_B1F.r22 X_B1F.x X_B1F.y X_B1F.z " \
    "X_B2M.r00 X_B2M.r01 X_B2M.r02 X_B2M.r10 X_B2M.r11 X_B2M.r12 X_B2M.r20 X_B2M.r21 X_B2M.r22 X_B2M.x X_B2M.y X_B2M.z", \
    "frame F on body 1, then frame M on body 2 (R row-major, then p)")                                                  \
  X(T, bushingStiffness, Per::Bushing, Role::Parameter, "bushing",                                                     \
    "stiffness.0 stiffness.1 stiffness.2 stiffness.3 stiffness.4 stiffness.5", "stiffness k (rotational 0-2, translational 3-5)") \
  X(T, bushingDamping, Per::Bushing, Role::Parameter, "bushing",                                                       \
    "damping.0 damping.1 damping.2 damping.3 damping.4 damping.5", "damping c (rotational 0-2, translational 3-5)")  \
  X(T, springParams, Per::Spring, Role::Parameter, "spring", "free_length stiffness damping",                         \
    "free length, stiffness and damping of each spring-damper")                                                        \
  X(T, springPoints, Per::Spring, Role::Parameter, "spring", "p_AP.x p_AP.y p_AP.z p_BQ.x p_BQ.y p_BQ.z",             \
    "the spring's end points: p_AP on body A, then p_BQ on body B")                                                    \
  X(T, constantForceParams, Per::ConstantForce, Role::Parameter, "constant_force",                                   \
    "station.x station.y station.z force.x force.y force.z",                                                         \
    "Simbody's ConstantForce: the station p_BS on its body (in B), then the force f_G (in G)")                       \
  X(T, sphereCenters, Per::Contact, Role::Parameter, "contact",                                                        \
    "center_on_F.x center_on_F.y center_on_F.z center_on_B.x center_on_B.y center_on_B.z",                            \
    "sphere centers on body F, then on body B")                                                                        \
  X(T, sphereRadii, Per::Contact, Role::Parameter, "contact", "radius_on_F radius_on_B", "sphere radii on F and on B") \
  X(T, contactEnabled, Per::Contact, Role::Parameter, "contact", "enabled", "1 where the contact is enabled, 0 where disabled") \
  X(T, groundSphere, Per::Ground, Role::Parameter, "ground", "center.x center.y center.z radius",                       \
    "ground contact sphere: center on its body (in B), radius")                                                        \
  X(T, groundPlane, Per::Ground, Role::Parameter, "ground", "normal.x normal.y normal.z point.x point.y point.z",       \
    "ground contact half-space on Ground: outward normal (any length > 0), a point of its surface")                   \
  X(T, groundMaterial, Per::Ground, Role::Parameter, "ground",                                                         \
    "stiffness dissipation static_friction dynamic_friction viscous_friction transition_velocity cf bd bv",            \
    "SmoothSphereHalfSpaceForce parameters: E, c, us, ud, uv, vt, cf, bd, bv")                                          \
  X(T, planeContactGeom, Per::PlaneContact, Role::Parameter, "plane_contact",                                            \
    "X_BG.r00 X_BG.r01 X_BG.r02 X_BG.r10 X_BG.r11 X_BG.r12 X_BG.r20 X_BG.r21 X_BG.r22 X_BG.x X_BG.y X_BG.z "             \
    "size.0 size.1 size.2 normal.x normal.y normal.z point.x point.y point.z",                                            \
    "the geom's frame G on its body (R row-major, then p) and MuJoCo size; the plane's unit normal and a point of it, in Ground") \
  X(T, planeContactLaw, Per::PlaneContact, Role::Parameter, "plane_contact",                                             \
    "friction solref.0 solref.1 solimp.0 solimp.1 solimp.2 solimp.3 solimp.4 margin gap impratio timestep invweight "    \
    "torsional rolling",                                                                                                  \
    "MuJoCo's contact parameters (sliding friction, solref, solimp, margin, gap), opt.impratio and opt.timestep, the "   \
    "body's invweight0 (translation), and the torsional and rolling friction (condim 4 and 6)")                         \
  X(T, pairContactGeom, Per::PairContact, Role::Parameter, "pair_contact",                                              \
    "X_BG1.r00 X_BG1.r01 X_BG1.r02 X_BG1.r10 X_BG1.r11 X_BG1.r12 X_BG1.r20 X_BG1.r21 X_BG1.r22 X_BG1.x X_BG1.y X_BG1.z " \
    "size1.0 size1.1 size1.2 "                                                                                           \
    "X_BG2.r00 X_BG2.r01 X_BG2.r02 X_BG2.r10 X_BG2.r11 X_BG2.r12 X_BG2.r20 X_BG2.r21 X_BG2.r22 X_BG2.x X_BG2.y X_BG2.z " \
    "size2.0 size2.1 size2.2",                                                                                           \
    "each geom's frame on its body (on Ground: in Ground; R row-major, then p) and MuJoCo size")                          \
  X(T, pairContactLaw, Per::PairContact, Role::Parameter, "pair_contact",                                               \
    "friction solref.0 solref.1 solimp.0 solimp.1 solimp.2 solimp.3 solimp.4 margin gap impratio timestep invweight "    \
    "torsional rolling",                                                                                                  \
    "MuJoCo's contact parameters of the pair (sliding friction, solref, solimp, margin, gap), opt.impratio and "         \
    "opt.timestep, the two bodies' invweight0 (translation) summed, and the torsional and rolling friction")             \
  X(T, planeContactCompliance, Per::PlaneContact, Role::Parameter, "plane_contact",                                      \
    "stiffness dissipation stiction_velocity lagged",                                                                      \
    "the compliant law's material (a contact under that law): E (Hertz), Hunt and Crossley's c, the stiction "          \
    "velocity of its regularized friction, and 1 for the lagged approximation of friction (0: the similar one)")          \
  X(T, pairContactCompliance, Per::PairContact, Role::Parameter, "pair_contact",                                        \
    "stiffness dissipation stiction_velocity lagged",                                                                      \
    "the compliant law's material of the pair (a pair under that law): E (Hertz: E^(2/3) the harmonic mean of the two "   \
    "materials' E^(2/3)), Hunt and Crossley's c, the stiction velocity, and 1 for the lagged approximation of friction")  \
  X(T, softLimitLaw, Per::SoftLimit, Role::Parameter, "limit",                                                           \
    "lower upper margin solref.0 solref.1 solimp.0 solimp.1 solimp.2 solimp.3 solimp.4 timestep invweight",              \
    "MuJoCo's joint range, margin, solreflimit and solimplimit, opt.timestep, and the dof's invweight0")                   \
  X(T, softLimitCompliance, Per::SoftLimit, Role::Parameter, "limit", "stiffness dissipation",                         \
    "the compliant law's stop (a limit under that law): stiffness k and Hunt and Crossley's dissipation d")              \
  X(T, sensorFrame, Per::Sensor, Role::Parameter, "sensor",                                                              \
    "X_BS.r00 X_BS.r01 X_BS.r02 X_BS.r10 X_BS.r11 X_BS.r12 X_BS.r20 X_BS.r21 X_BS.r22 X_BS.x X_BS.y X_BS.z "             \
    "zone.x zone.y zone.z",                                                                                                \
    "the sensor's frame S on its body (R row-major, then p), then a touch zone's MJCF size")                              \
  X(T, sensorCutoff, Per::Sensor, Role::Parameter, "sensor", "cutoff",                                                   \
    "MuJoCo's cutoff: > 0 clamps the values to [-cutoff, cutoff] (touch: to at most cutoff; framequat: none)")          \
  X(T, mujocoBodyFrame, Per::MujocoBody, Role::Parameter, "mujoco_body",                                                 \
    "X_BL.r00 X_BL.r01 X_BL.r02 X_BL.r10 X_BL.r11 X_BL.r12 X_BL.r20 X_BL.r21 X_BL.r22 X_BL.x X_BL.y X_BL.z",              \
    "the MuJoCo body's frame L on the Lockstep body carrying it (R row-major, then p)")                                  \
  X(T, mujocoBodyMass, Per::MujocoBody, Role::Parameter, "mujoco_body",                                                  \
    "mass com.x com.y com.z inertia.xx inertia.yy inertia.zz inertia.xy inertia.xz inertia.yz",                           \
    "the MuJoCo body's own mass, centre of mass in L and central inertia in L (its carrier's massProps sum them)")

// The per-world parameters, in registry order.
enum class ParamId : int {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) name,
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
};
constexpr int kParamCount = 0
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) +1
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    ;

// Why a world stopped advancing. A world with any bit set is skipped by step() until reset.
enum StatusFlag : std::int32_t {
  kStatusOk = 0,
  kStatusNonFinite = 1 << 0,             // q, u or z became NaN or infinite
  kStatusSingularMassMatrix = 1 << 1,    // a joint inertia D of the sweep is singular
  kStatusSpringLengthZero = 1 << 2,      // a spring-damper's length became nearly zero
  kStatusBushingSingular = 1 << 3,       // a bushing's middle angle reached +/-90 degrees
  kStatusConstraintFailed = 1 << 4,      // the constraint solve or projection failed
  kStatusInvalidInitialState = 1 << 5,   // an initial q or u is not finite in the batch's precision
  kStatusSoftSolveFailed = 1 << 6,       // the soft solve did not converge, or its forces were not finite
};

// Topology of one body, as kernels read it.
enum BodyFlag : std::int32_t {
  kPFTranslationOnly = 1,  // X_PF has the identity rotation
  kMBIdentity = 2,         // X_BM is the identity
  kHasChildren = 4,        // some body's parent is this one
  kFirstChildInward = 8,   // the highest-numbered child of its parent: the first of them an inward pass meets
};
struct BodyTopology {
  MobilizerType mobilizer;
  std::int32_t parent;   // -1: Ground
  std::int32_t qOffset, uOffset, nq, nu;
  std::int32_t dOffset;  // first entry of this body's D^-1 in the workspace
  std::int32_t flags;    // BodyFlag bits
  // The speeds of the body's tree (its root mobilized from Ground, and all the root's descendants)
  // lie in [treeU0, treeU1): the mass matrix's rows of the body's speeds are zero outside it (crba.h).
  std::int32_t treeU0, treeU1;
};

// The two bodies an element connects (-1: Ground), and its flags.
struct ElementTopology {
  std::int32_t bodyA, bodyB;
  std::int32_t flags;     // contacts: kContactRolling when rolling is enforced
  std::int32_t ancestor;  // contacts: the nearest common ancestor of the two bodies (-1: Ground)
};
enum ElementFlag : std::int32_t { kContactRolling = 1 };

// A primitive geom on a body against a plane fixed in Ground, under MuJoCo's soft-constraint law
// (physics/soft_constraints.h): its shape (MuJoCo's contact points: a sphere and an ellipsoid 1, a
// capsule 2, a cylinder and a box up to 4), MuJoCo's condim (1: frictionless; 3, 4 or 6: a pyramid of
// 2 (condim - 1) edges per point, or MuJoCo's elliptic cone of condim rows: normal, t1, t2, then the
// torsional and the two rolling rows), and where its points and rows start
// among the world's.
enum PlaneContactShape : std::int32_t { kShapeSphere, kShapeCapsule, kShapeEllipsoid, kShapeCylinder, kShapeBox };
// The law of a plane contact's or a limit's rows: MuJoCo's soft constraints, or Lockstep's compliant
// law (Hunt and Crossley's contact as a convex implicit constraint: soft_constraints.h).
enum SoftLawKind : std::int32_t { kLawMujoco = 0, kLawCompliant = 1 };
struct PlaneContactTopology {
  std::int32_t body;    // the geom's body
  std::int32_t shape;   // PlaneContactShape
  std::int32_t condim;  // 1, 3, 4 or 6
  std::int32_t elliptic;  // 1: MuJoCo's elliptic friction cone (cone="elliptic"), 0: the pyramid
  std::int32_t points;  // the most contact points it makes
  std::int32_t point;   // its first point among the world's (Per::SoftPoint)
  std::int32_t row;     // its first constraint row
  std::int32_t mujocoBody;  // the geom's MuJoCo body, whose cfrc_ext its force adds to (-1: none)
  std::int32_t law;         // SoftLawKind (compliant: condim 3, its rows the frame's, as a cone's)
};
// Two primitive geoms on different bodies (one of them may be Ground) under MuJoCo's soft-constraint
// law, or two spheres or capsules under the compliant law: MuJoCo's narrow phase of the pair (a
// capsule pair makes up to 2 points), in MuJoCo's order (shape1 <= shape2), the normal from the
// first geom to the second.
struct PairContactTopology {
  std::int32_t body1, body2;    // the geoms' bodies (-1: Ground)
  std::int32_t shape1, shape2;  // PlaneContactShape
  std::int32_t condim;          // 1, 3, 4 or 6
  std::int32_t elliptic;        // as PlaneContactTopology's
  std::int32_t points;          // the most contact points it makes
  std::int32_t point;           // its first point among the world's (Per::SoftPoint)
  std::int32_t row;             // its first constraint row
  std::int32_t mujocoBody1, mujocoBody2;  // the geoms' MuJoCo bodies, whose cfrc_ext their forces add to (-1: none)
  std::int32_t law;             // SoftLawKind (compliant: two spheres or capsules, condim 3, its rows the frame's)
};
// A hinge's or slide's range under MuJoCo's soft-constraint law: two rows (lower, upper).
struct SoftLimitTopology {
  std::int32_t q, u;  // the coordinate and its speed
  std::int32_t row;   // its first constraint row
  std::int32_t law;   // SoftLawKind
};

// A sensor (MJCF <sensor>) as the per-world code reads it (physics/sensors.h): what it measures
// (MuJoCo's mjtSensor, the kinds Lockstep computes) and of what.
enum SensorType : std::int32_t {
  kSensorJointPos,
  kSensorJointVel,
  kSensorFramePos,
  kSensorFrameQuat,
  kSensorFrameLinVel,
  kSensorFrameAngVel,
  kSensorVelocimeter,
  kSensorGyro,
  kSensorAccelerometer,
  kSensorTouch,
  kSensorForce,
  kSensorTorque,
  kSensorSubtreeCom,
  kSensorSubtreeLinVel,
  kSensorUnsupported,  // kept by name, with no values
};
// A touch sensor's zone: the shape of its site.
enum SensorZone : std::int32_t { kZoneSphere, kZoneCapsule, kZoneEllipsoid, kZoneCylinder, kZoneBox };
struct SensorTopology {
  std::int32_t type;        // SensorType
  std::int32_t body;        // the frame's body (-1: Ground)
  std::int32_t coordinate;  // jointpos: its index in q; else -1
  std::int32_t speed;       // jointvel: its index in u; else -1
  std::int32_t offset;      // its first value in the field `sensors`
  std::int32_t zone;        // touch: SensorZone
};

// One MuJoCo joint of an MJCF model (physics/mujoco_bodies.h): where its values are in MuJoCo's qpos
// and qvel and in Lockstep's q and u.
enum MujocoJointType : std::int32_t { kMujocoFree = 0, kMujocoBall = 1, kMujocoSlide = 2, kMujocoHinge = 3 };
struct MujocoJointMap {
  std::int32_t type;              // MujocoJointType (MuJoCo's mjtJoint)
  std::int32_t qposAdr, dofAdr;   // in MuJoCo's qpos and qvel
  std::int32_t qOffset, uOffset;  // in Lockstep's q and u
};
// One MuJoCo body of an MJCF model: its carrier, its root, its parent, and whether the carrier's
// ground contacts are its own.
struct MujocoBodyTopology {
  std::int32_t body;      // the Lockstep body carrying it (-1: Ground)
  std::int32_t root;      // MuJoCo's body_rootid (an index among the MuJoCo bodies; 0 for the world body)
  std::int32_t parent;    // its parent among the MuJoCo bodies (-1 for the world body)
  std::int32_t contacts;  // 1: the carrier's ground contacts are this MuJoCo body's (it is the carrier's own)
};

// THE MODEL ARRAYS: what a ModelView points to besides its Sizes, one line each; every body element
// kind adds its ElementTopology array from its line above:
//   X(kind, element type, name, count, description)
// kind Topology: integers, the same for every scalar type (a pack's or a dual's model points at
// the same arrays); kind Frames: scalars of the batch's precision T, converted where the scalar type
// changes (broadcast into packs, lifted to duals).
#define LOCKSTEP_ELEMENT_TOPOLOGY_ARRAY(X, category, Kind, list, count, per, array, topology, word, placeholder) \
  LOCKSTEP_BODY_KIND_##category(X, Topology, topology, array, count, "each " word "'s bodies, indices and flags")
#define LOCKSTEP_MODEL_ARRAYS(X)                                                                \
  X(Topology, BodyTopology, body, nb, "each body's mobilizer, parent, offsets and frame flags") \
  X(Frames, Transform<T>, X_PF, nb, "each mobilizer's frame F on the parent")                  \
  X(Frames, Transform<T>, X_MB, nb, "~X_BM: each body frame in its mobilizer's M")              \
  LOCKSTEP_ELEMENT_TABLE(LOCKSTEP_ELEMENT_TOPOLOGY_ARRAY, X)

template <class T>
struct ModelView {
  Sizes sizes;
#define LOCKSTEP_X(kind, type, name, count, doc) const type* name;  // [count]
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X

  // The same model over frames of another scalar type U (a pack's, a dual's): the topology
  // arrays are shared, the frames are the given arrays.
  template <class U>
  LOCKSTEP_HD_INLINE ModelView<U> withFrames(const Transform<U>* X_PF_, const Transform<U>* X_MB_) const {
    ModelView<U> m;
    m.sizes = sizes;
#define LOCKSTEP_X(kind, type, name, count, doc) LOCKSTEP_COPY_##kind(name)
#define LOCKSTEP_COPY_Topology(name) m.name = name;
#define LOCKSTEP_COPY_Frames(name) m.name = name##_;
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_COPY_Frames
#undef LOCKSTEP_COPY_Topology
#undef LOCKSTEP_X
    return m;
  }
};

// A per-world parameter array: component c of world w at data[c * compStride + w * worldStride].
template <class T>
struct ParamArray {
  const T* data;
  std::int64_t worldStride;  // 0 while all worlds share the default
  std::int64_t compStride;
  LOCKSTEP_HD_INLINE Strided<const T> world(std::int64_t w) const { return {data + w * worldStride, compStride}; }
};

template <class T>
struct WorldParams {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) Strided<const type> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
};

template <class T>
struct WorldView {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) Strided<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  WorldParams<T> params;
};

template <class T>
struct BatchView {
  std::int64_t nWorlds;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) type* name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) ParamArray<type> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X

  // World w's views: component c of a field at base[c * nWorlds + w].
  LOCKSTEP_HD_INLINE WorldView<T> world(std::int64_t w) const {
    WorldView<T> v;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.name = Strided<type>{name + w, nWorlds};
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) v.params.name = name.world(w);
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return v;
  }
};

}  // namespace lockstep
