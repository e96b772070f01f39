// Lockstep Model: the immutable description of one mechanism, shared by every world of a batch.
//
// A Model holds the topology (bodies, mobilizers, force elements, constraints) and the default
// value of every parameter. Per-world values that override the defaults (Monte Carlo studies,
// domain randomization) live in the batch's data, never here. Models are made by ModelBuilder,
// which validates everything and reports the first problem with the element, field and reason.
#pragma once

#include <array>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/physics/views.h"

namespace lockstep {

using Vec3d = Vec3<double>;
using Transformd = Transform<double>;
using Rotationd = Rotation<double>;
using SymMat33d = SymMat33<double>;
using SpatialVecd = SpatialVec<double>;

// Thrown for invalid model input: the message names the element, the field and the reason.
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Mass properties of a rigid body in its own frame B: mass, center of mass p_BC, and the inertia
// about the center of mass in B's axes (xx, yy, zz, xy, xz, yz).
struct MassProperties {
  double mass = 0;
  Vec3d com = Vec3d::zero();
  SymMat33d inertia = SymMat33d::zero();
};

// What a user gives to add one body.
struct BodyDesc {
  std::string name;
  std::string parent = "ground";  // "ground" or the name of another body
  MobilizerType mobilizer = MobilizerType::Pin;
  std::string jointName;          // defaults to the body's name
  Transformd X_PF = Transformd::identity();  // F on the parent
  Transformd X_BM = Transformd::identity();  // M on this body
  MassProperties mass;
  std::vector<double> damping;    // viscous damping per generalized speed (empty: none); >= 0
  std::vector<double> effortLimit;  // |tau| bound per generalized speed (empty: unbounded); > 0
  std::vector<double> armature;   // rotor inertia added to the joint inertia per speed (empty: none); >= 0
  // A linear spring -stiffness (q - springReference) per coordinate whose qdot is its speed (empty:
  // none; Ball and Free take none); stiffness >= 0.
  std::vector<double> stiffness, springReference;
};

// A body as stored in a built Model, in topological order (parents before children).
struct Body {
  std::string name;
  std::string jointName;
  MobilizerType mobilizer;
  int parent;  // index of the parent body, -1 for Ground
  Transformd X_PF, X_BM;
  MassProperties mass;
  int qOffset, uOffset;  // first coordinate and first speed of this body's mobilizer
  int nq, nu;
};

// LinearBushing (simbody-LinearBushing.txt): frame F on body1 to frame M on body2, six
// stiffnesses and six dampings, rotational (about the body-fixed XYZ angle axes) first.
struct LinearBushingDesc {
  std::string name;
  std::string body1 = "ground", body2 = "ground";  // either may be Ground, not both the same body
  Transformd X_B1F = Transformd::identity();
  Transformd X_B2M = Transformd::identity();
  std::array<double, 6> stiffness{};  // >= 0
  std::array<double, 6> damping{};    // >= 0
};

// LinearSpringDamper (drake-LinearSpringDamper.txt): point P on body A to point Q on body B.
struct SpringDamperDesc {
  std::string name;
  std::string bodyA = "ground", bodyB = "ground";
  Vec3d p_AP = Vec3d::zero(), p_BQ = Vec3d::zero();
  double freeLength = 1;  // > 0
  double stiffness = 0;   // >= 0
  double damping = 0;     // >= 0
};

// Simbody's Force::ConstantForce: a force f_G fixed in Ground, applied at the station p_BS of a body.
// Lockstep counts its potential energy -f_G . p_GS, a uniform field's (Simbody counts none).
struct ConstantForceDesc {
  std::string name;
  std::string body;                 // not Ground
  Vec3d station = Vec3d::zero();    // p_BS, in B
  Vec3d force = Vec3d::zero();      // f_G, in G
};

// MuJoCo's soft-constraint law (physics/soft_constraints.h; docs/mjcf.md, "Contact laws"): a
// primitive geom on a body against a plane fixed in Ground, with MuJoCo's contact points and
// parameters, and a hinge's or slide's range. The MJCF importer makes them (the "mujoco" law); a
// scene file may too.
struct PlaneContactDesc {
  std::string name;
  std::string body;                          // the geom's body (not Ground)
  PlaneContactShape shape = kShapeSphere;    // sphere, capsule, ellipsoid, cylinder or box
  Transformd X_BG = Transformd::identity();  // the geom's frame on the body (a capsule's and a cylinder's axis: z)
  Vec3d size = {{0.05, 0, 0}};               // MuJoCo's: radius; radius, half-length; radii; half-sizes
  Vec3d planeNormal = {{0, 0, 1}};           // in Ground, out of the plane into free space; |n| > 0
  Vec3d planePoint = Vec3d::zero();
  int condim = 3;                            // 1 (frictionless), 3 (sliding friction), 4 (and torsional), 6 (and rolling)
  bool elliptic = false;                     // MuJoCo's cone="elliptic", else its pyramid
  double friction = 1;                       // the contact's (MuJoCo's mixed) sliding friction; >= 0
  double torsional = 0.005, rolling = 0.0001;  // its torsional (condim >= 4) and rolling (condim 6) friction; >= 0
  std::array<double, 2> solref{{0.02, 1}};    // MuJoCo's: timeconst, dampratio (or -stiffness, -damping)
  std::array<double, 5> solimp{{0.9, 0.95, 0.001, 0.5, 2}};
  double margin = 0, gap = 0;                // MuJoCo's: contact within margin, its force from margin - gap
  double impratio = 1;                       // MuJoCo's opt.impratio; > 0
  double timestep = 0.002;                   // MuJoCo's opt.timestep (refsafe: timeconst >= 2 timestep); > 0
  int mujocoBody = -1;                       // the geom's MuJoCo body (MJCF: its body id), carried by body,
                                             // whose cfrc_ext the contact's force adds to (-1: none)
  double invweight = 0;                      // MuJoCo's body_invweight0 (translation) of the geom's body; >= 0
  // kLawCompliant: Lockstep's compliant law instead of MuJoCo's (soft_constraints.h, "THE COMPLIANT
  // LAW"; docs/contact-laws.md): a sphere or a capsule (Hertz's radius size[0]), condim 3, its friction
  // the Coulomb coefficient, timestep the step h the law predicts with (the batch's dt, semi-implicit
  // Euler), rows made within margin - gap or where the point could reach the plane within the step;
  // solref, solimp, impratio, torsional, rolling and invweight are not read.
  SoftLawKind law = kLawMujoco;
  double stiffness = 1e7;          // the compliant law's E (N/m^2; Hertz); >= 0
  double dissipation = 0;          // its Hunt and Crossley c (s/m); >= 0
  double stictionVelocity = 1e-4;  // its friction's regularization vs (m/s); > 0
  bool lagged = true;              // its friction's convex approximation: lagged (Drake's kLagged), else similar
};
// Two primitive geoms on different bodies under MuJoCo's law (one of them may be on Ground): MuJoCo's
// contact between them (a sphere or a capsule against any primitive, or two boxes:
// softPairModelled), with the pair's mixed parameters. The MJCF importer makes one for every pair
// MuJoCo's collision rules let touch; a scene's collision_geoms make them under the compliant law.
struct PairContactDesc {
  std::string name;
  std::string body1, body2;                   // the geoms' bodies: different, at most one of them Ground
  PlaneContactShape shape1 = kShapeSphere;    // shape1 <= shape2 (MuJoCo's order); softPairModelled
  PlaneContactShape shape2 = kShapeSphere;
  Transformd X_BG1 = Transformd::identity();  // each geom's frame on its body (a capsule's axis: z)
  Transformd X_BG2 = Transformd::identity();
  Vec3d size1 = {{0.05, 0, 0}}, size2 = {{0.05, 0, 0}};  // MuJoCo's, as PlaneContactDesc::size
  int condim = 3;                             // as PlaneContactDesc's: 1, 3, 4 or 6
  bool elliptic = false;                      // as PlaneContactDesc's
  double friction = 1;                        // as PlaneContactDesc's
  double torsional = 0.005, rolling = 0.0001;  // as PlaneContactDesc's
  std::array<double, 2> solref{{0.02, 1}};
  std::array<double, 5> solimp{{0.9, 0.95, 0.001, 0.5, 2}};
  double margin = 0, gap = 0;
  double impratio = 1;
  double timestep = 0.002;
  double invweight = 0;                       // both bodies' body_invweight0 (translation), summed; >= 0
  int mujocoBody1 = -1, mujocoBody2 = -1;     // the geoms' MuJoCo bodies, as PlaneContactDesc's mujocoBody
  // kLawCompliant: the compliant law, as PlaneContactDesc's (two spheres or capsules, condim 3; Hertz's
  // relative radius R1 R2 / (R1 + R2)), with the pair's material: stiffness the E whose E^(2/3) is the
  // harmonic mean of the two materials' E^(2/3), and dissipation their c weighted as Simbody's
  // HuntCrossleyForce weighs them (pairMaterial); friction the pair's Coulomb coefficient.
  SoftLawKind law = kLawMujoco;
  double stiffness = 1e7, dissipation = 0, stictionVelocity = 1e-4;
  bool lagged = true;
};
// A geom's material under the compliant law (a scene's collision_geoms), and the pair's, as
// Simbody's HuntCrossleyForce combines two: with s1 = E2^(2/3) / (E1^(2/3) + E2^(2/3)), the pair's
// k = (s1 E1^(2/3)) (PairContactDesc::stiffness: the E of one material that against itself has
// that k), c = c1 s1 + c2 (1 - s1), mu = 2 mu1 mu2 / (mu1 + mu2); the stiction velocity the larger.
struct CompliantMaterial {
  double stiffness = 1e7, dissipation = 0, friction = 0, stictionVelocity = 1e-4;
};
CompliantMaterial pairMaterial(const CompliantMaterial& a, const CompliantMaterial& b);
struct SoftLimitDesc {
  std::string name;                          // defaults to the coordinate's
  std::string coordinate;                    // a hinge's or slide's (its qdot is its speed)
  double lower = -1, upper = 1;              // lower <= upper
  double margin = 0;
  std::array<double, 2> solref{{0.02, 1}};
  std::array<double, 5> solimp{{0.9, 0.95, 0.001, 0.5, 2}};
  double timestep = 0.002;
  double invweight = 0;                      // MuJoCo's dof_invweight0; >= 0
  // kLawCompliant: a stop under Lockstep's compliant law (soft_constraints.h): beyond a bound by x,
  // the force of stiffness (x0 - h v)_+ (1 - dissipation v)_+ at the step's end, v the speed away
  // from the bound, timestep its step h; solref, solimp and invweight are not read.
  SoftLawKind law = kLawMujoco;
  double stiffness = 0, dissipation = 0;  // >= 0
};

// SphereOnSphereContact (simbody-SphereOnSphereContact.txt): a bilateral constraint keeping a
// sphere on body F touching a sphere on body B, optionally without slip (rolling).
struct SphereContactDesc {
  std::string name;
  std::string bodyF = "ground", bodyB = "ground";
  Vec3d centerOnF = Vec3d::zero(), centerOnB = Vec3d::zero();
  double radiusOnF = 1, radiusOnB = 1;  // > 0
  bool enforceRolling = false;
  bool enabledByDefault = true;
};

// Simbody 3.7's SmoothSphereHalfSpaceForce parameters (defaults as Simbody's): the plane-strain
// modulus E (Hertz force (4/3) k^(3/2) sqrt(R) x^(3/2) with k = E^(2/3) / 2, so (4/3) E/(2 sqrt 2)
// sqrt(R) x^(3/2)), the Hunt-Crossley dissipation c, the static, dynamic and viscous friction
// coefficients, the transition velocity vt, the smoothing constants cf, bd and bv.
struct GroundMaterial {
  double stiffness = 1;              // E (N/m^2); >= 0
  double dissipation = 0;            // c (s/m); >= 0
  double staticFriction = 0;         // us; >= 0
  double dynamicFriction = 0;        // ud; >= 0
  double viscousFriction = 0;        // uv (s/m); >= 0
  double transitionVelocity = 0.01;  // vt (m/s); > 0
  double cf = 1e-5;                  // keeps sqrt(x^2 + cf) and the slip speed away from 0; > 0
  double bd = 300;                   // steepness of the Hertz force's tanh; >= 0
  double bv = 50;                    // steepness of the Hunt-Crossley force's tanh; >= 0
};

// Ground contact: Simbody 3.7's SmoothSphereHalfSpaceForce between a sphere fixed on a body and a
// half-space fixed on Ground. The half-space is the side of the plane through planePoint opposite
// to planeNormal (planeNormal points out of the ground, into free space); it need not be unit
// (a built Model holds it unit, scaled without overflow, as the per-world parameters may not).
struct GroundContactDesc {
  std::string name;
  std::string body;                  // the sphere's body (not Ground)
  Vec3d center = Vec3d::zero();      // sphere center on the body, in B
  double radius = 0.01;              // > 0
  Vec3d planeNormal = {{0, 0, 1}};   // |n| > 0
  Vec3d planePoint = Vec3d::zero();  // in G
  GroundMaterial material;
};

// A joint stop (Simbody's Force::MobilityLinearStop) on one coordinate whose qdot is its speed u
// (every mobilizer but Ball and Free): no force within [lower, upper]; beyond a bound, with
// x = q - bound, f = min(0, -k x (1 + d qdot)) above and max(0, -k x (1 - d qdot)) below.
struct JointStopDesc {
  std::string coordinate;  // a name of Model::qNames(): "joint" or "joint.axis"
  double lower = -std::numeric_limits<double>::infinity();  // <= upper; -inf: no lower stop
  double upper = std::numeric_limits<double>::infinity();   // +inf: no upper stop
  double stiffness = 0;    // k >= 0
  double dissipation = 0;  // d >= 0 (s/m or s/rad)
};

// How an actuator drives its generalized speed. Every speed takes the user's action tau; a PD
// actuator adds kp (target position - q) + kd (target velocity - u) (Position) or kd (target
// velocity - u) (Velocity), as Simbody's MobilityLinearSpring (q0 = target) plus MobilityLinearDamper
// would; the sum is then clamped to the effort limit.
enum class ActuatorMode : std::int8_t { Torque = 0, Position = 1, Velocity = 2 };
const char* actuatorModeName(ActuatorMode mode);
ActuatorMode parseActuatorMode(const std::string& s);  // "torque", "position", "velocity"

struct ActuatorDesc {
  std::string coordinate;  // a name of Model::qNames() (of a coordinate whose qdot is u)
  ActuatorMode mode = ActuatorMode::Position;
  double kp = 0, kd = 0;  // >= 0
  // The action on the speed taken as a control (MJCF's motor): clamped to [controlLower,
  // controlUpper], times the gear. The defaults leave the action a mobility force.
  double gear = 1;  // finite
  double controlLower = -std::numeric_limits<double>::infinity();  // <= controlUpper
  double controlUpper = std::numeric_limits<double>::infinity();
};

// A site: a named frame S fixed on a body (MJCF's <site>), for observations and sensors.
struct SiteDesc {
  std::string name;
  std::string body;                          // a body, or "ground"
  Transformd X_BS = Transformd::identity();  // S on the body
};

// A sensor (MJCF's <sensor>): what it measures, of which object, resolved into Lockstep's terms
// by the importer. Lockstep computes (physics/sensors.h) jointpos and jointvel (1 value: the
// coordinate and its speed), framepos, framequat, framelinvel and frameangvel (3, 4, 3, 3: the
// frame's position, orientation (w x y z), velocity and angular velocity, in Ground), velocimeter,
// gyro and accelerometer (3: the frame's velocity, angular velocity and acceleration minus
// gravity, in the frame), touch (1: the normal ground contact forces on the frame's body whose
// contact point lies in the zone), force and torque (3: the force and the moment about the
// frame's origin that the parent exerts on the subtree of the frame's body, in the frame), and
// subtreecom and subtreelinvel (3: the centre of mass of a body's subtree and its velocity, in
// Ground; the frame's body is the subtree's root), as MuJoCo defines them. Other sensors are kept with dimension 0 (not computed).
struct SensorDesc {
  std::string name;
  std::string type;        // MuJoCo's name: "jointpos", "framepos", "gyro", ...
  std::string objectType;  // "joint", "site", "body", "xbody", ...
  std::string object;
  int dimension = 0;       // values it gives; 0: not computed by Lockstep
  std::string coordinate;  // jointpos, jointvel: the coordinate (a name of Model::qNames())
  std::string body = "ground";               // the frame's body (or "ground")
  Transformd X_BS = Transformd::identity();  // the frame on it
  std::string zone;        // touch: "sphere", "capsule", "ellipsoid", "cylinder" or "box"
  Vec3d zoneSize = Vec3d::zero();  // its MJCF size (radius, half-length or half-sizes)
  double cutoff = 0;       // MuJoCo's cutoff (>= 0; 0: none): clamps the values (physics/sensors.h)
};

// MuJoCo's view of an MJCF model (physics/mujoco_bodies.h), which the MJCF importer adds to the models
// it builds: each MuJoCo joint, where its values are in MuJoCo's qpos and qvel (and, resolved, in
// Lockstep's q and u), and each MuJoCo body, carried by a Lockstep body at X_BL, with its own mass
// properties. They give the per-world fields mujocoQpos, mujocoQvel and mujocoBody.
struct MujocoJointDesc {
  std::string name;
  int type = 3;             // MuJoCo's mjtJoint: 0 free, 1 ball, 2 slide, 3 hinge
  int qposAdr = 0, dofAdr = 0;
  std::string body;         // the Lockstep body whose mobilizer is this joint
};
struct MujocoBodyDesc {
  std::string name;
  int parent = -1;          // its parent among the MuJoCo bodies (-1: the world body, which is body 0)
  int root = 0;             // MuJoCo's body_rootid
  std::string body = "ground";               // the Lockstep body carrying it
  Transformd X_BL = Transformd::identity();  // its frame L on that body
  MassProperties mass;      // its own, in L (centre of mass and central inertia in L)
};

// The same, as stored in a built Model: bodies resolved to indices (-1 for Ground).
struct LinearBushing {
  LinearBushingDesc desc;
  int body1, body2;
};
struct SpringDamper {
  SpringDamperDesc desc;
  int bodyA, bodyB;
};
struct ConstantForce {
  ConstantForceDesc desc;
  int body;
};
struct SphereContact {
  SphereContactDesc desc;
  int bodyF, bodyB;
};
struct GroundContact {
  GroundContactDesc desc;
  int body;
};
struct JointStop {
  JointStopDesc desc;
  int q, u;  // the coordinate and its speed
};
struct Actuator {
  ActuatorDesc desc;
  int q, u;
};
struct Site {
  SiteDesc desc;
  int body;
};
struct PlaneContact {
  PlaneContactDesc desc;
  int body;
  int point, row;  // its first contact point and constraint row among the world's
};
struct PairContact {
  PairContactDesc desc;
  int body1, body2;  // -1: Ground
  int point, row;    // its first contact point and constraint row among the world's
};
struct SoftLimit {
  SoftLimitDesc desc;
  int q, u;
  int row;
};
struct MujocoJoint {
  MujocoJointDesc desc;
  int q, u;  // its first coordinate and speed in Lockstep's q and u
};
struct MujocoBody {
  MujocoBodyDesc desc;
  int body;  // the carrier (-1: Ground)
};
struct Sensor {
  SensorDesc desc;
  int body;        // the frame's body, -1 for Ground
  int coordinate;  // jointpos, jointvel: the index in q, else -1
  int speed;       // jointvel: the coordinate's speed (its qdot), else -1
  int offset;      // first value in the model's sensor data
};

const char* mobilizerName(MobilizerType t);
// Parses "pin", "Pin", "free", ...; throws ModelError naming the accepted values otherwise.
MobilizerType parseMobilizerType(const std::string& s);

class Model;

// ---- what each element kind defines ---------------------------------------------------------------
// Every kind of the registry (views.h LOCKSTEP_ELEMENT_KINDS) defines, in its file host/model/elements_*.cpp:
//   Kind buildElement(const Kind##Desc&, ElementBuild&)  the built element: its bodies and coordinates
//        resolved, its parameters validated (ModelError naming the element, the field and the reason)
//   std::string describeElement(const Model&, const Kind&)  its line in `lockstep info`
//   InfoSection infoSection(const Model&, const std::vector<Kind>&)  the heading `lockstep info` puts
//        over the kind (kinds with the same heading, next to each other, share it)
// and a Body kind also
//   Topology elementTopology(const Model&, const Kind&)  its bodies, indices and flags for the
//        kernels (ElementTopology, or the kind's own integers)
//   std::vector<double> parameterBlock(const Kind&, ParamId)  the element's values of one of its
//        per-world parameters (views.h LOCKSTEP_PARAM_FIELDS of its Per), the batch's defaults
//   void validateParameterBlock(const std::vector<Kind>&, ParamId, const std::vector<double>& block,
//        const std::string& where)  a per-world value of one, checked as buildElement checks it

// What a kind's build rule sees while ModelBuilder::build() runs: the model built so far (bodies,
// coordinates and the kinds before it in the registry), the element's index among those of its kind,
// and scratch the kind may keep across its elements (cleared before each kind).
struct ElementBuild {
  Model& model;
  std::map<std::string, int> bodyIndex;  // every body by name
  std::size_t index = 0;                 // the element's index among those of its kind
  std::vector<char> speedsTaken;         // nu flags: the speeds that have an element of this kind
  std::set<std::string> namesTaken;      // names of this kind's elements so far
  // The body of that name (-1 for "ground"); throws ModelError "<where>: <field>: no body named ...".
  int body(const std::string& name, const std::string& where, const char* field) const;
  // The coordinate of that name and its speed (a coordinate whose qdot is its speed: every
  // mobilizer but Ball and Free); throws ModelError naming the element and the reason.
  void coordinate(const std::string& name, const std::string& where, int* q, int* u) const;
  // "<word> '<name>'", the name defaulting to <placeholder><index>: the element's name and where
  // messages say it is.
  std::string where(const char* word, const std::string& name) const { return std::string(word) + " '" + name + "'"; }
};

// A heading of `lockstep info`: "force elements 2", with what follows the count.
struct InfoSection {
  std::string heading;   // "force elements"
  std::string note;      // after the count: " (3 equations)"
  bool showEmpty = true;  // printed when the model has none of the kind
};

#define LOCKSTEP_X(Kind, list, count, ...)                                 \
  Kind buildElement(const Kind##Desc& desc, ElementBuild& build);          \
  std::string describeElement(const Model& model, const Kind& element);    \
  InfoSection infoSection(const Model& model, const std::vector<Kind>& elements);
LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
#define LOCKSTEP_X(Kind, list, count, per, array, topology, word, placeholder)                        \
  topology elementTopology(const Model& model, const Kind& element);                                 \
  std::vector<double> parameterBlock(const Kind& element, ParamId id);                              \
  void validateParameterBlock(const std::vector<Kind>&, ParamId id, const std::vector<double>& block, \
                              const std::string& where);
LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X

class Model {
 public:
  int numBodies() const { return static_cast<int>(bodies_.size()); }
  int nq() const { return nq_; }
  int nu() const { return nu_; }
  int nz() const { return nz_; }
  const Body& body(int b) const { return bodies_.at(b); }
  const std::vector<Body>& bodies() const { return bodies_; }
  // Index of the body with this name, -1 for "ground", throws ModelError when there is none.
  int bodyIndex(const std::string& name) const;
  const Vec3d& gravity() const { return gravity_; }
  // Whether the model steps as MuJoCo's RK4 (integrator.h), as an MJCF file under MuJoCo's law does,
  // whether it has soft-constraint rows or not.
  bool mujocoStepping() const { return mujocoStepping_; }
  const std::vector<double>& damping() const { return damping_; }          // [nu]
  const std::vector<double>& effortLimit() const { return effortLimit_; }  // [nu], +inf if unbounded
  const std::vector<double>& armature() const { return armature_; }        // [nu]
  const std::vector<double>& jointStiffness() const { return jointStiffness_; }    // [nu]
  const std::vector<double>& springReference() const { return springReference_; }  // [nu]
  const std::vector<double>& defaultQ() const { return defaultQ_; }        // [nq]
  const std::vector<double>& defaultU() const { return defaultU_; }        // [nu]
  // Column names for output: "<joint>" for one-coordinate mobilizers, "<joint>.<axis>" otherwise
  // (axes: qw qx qy qz x y z for quaternions and translations, rx ry rz for angles).
  const std::vector<std::string>& qNames() const { return qNames_; }
  const std::vector<std::string>& uNames() const { return uNames_; }
  const std::vector<std::string>& zNames() const { return zNames_; }
  double totalMass() const;
  // The largest trace of a body's central inertia: the scale of round-off in inertia checks
  // (validateMassProperties).
  double largestInertia() const;

  // The elements of each kind (views.h LOCKSTEP_ELEMENT_KINDS): bushings(), springs(),
  // groundContacts(), stops(), actuators(), contacts() (sphere contacts), sites(), sensors().
#define LOCKSTEP_X(Kind, list, count, ...) \
  const std::vector<Kind>& list() const { return list##_; }
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  // Auxiliary state of ground contact i: the energy it has taken out of the system (minus its work).
  int groundContactZ(int i) const { return static_cast<int>(bushings_.size()) + 2 + i; }
  // Number of constraint equations of the contacts: 3 for rolling, 1 otherwise.
  int numConstraintEquations() const;
  // Values of all computed sensors together (the sum of their dimensions), and their names:
  // "<sensor>" for one value, "<sensor>.x" .. for three, "<sensor>.w" .. for a quaternion.
  int sensorDataSize() const { return sensorDataSize_; }
  const std::vector<std::string>& sensorDataNames() const { return sensorDataNames_; }
  // The stop and the actuator on generalized speed u, nullptr where there is none.
  const JointStop* stopOnSpeed(int u) const;
  const Actuator* actuatorOnSpeed(int u) const;
  // Index in z of minus the work done by the mobility forces (actions and PD actuators, within the
  // effort limits): KE + PE + sum(z) stays constant.
  int actuationState() const { return static_cast<int>(bushings_.size()) + 1; }

 private:
  friend class ModelBuilder;
  std::vector<Body> bodies_;
  Vec3d gravity_ = Vec3d::zero();
  bool mujocoStepping_ = false;
  std::vector<double> damping_, effortLimit_, armature_, jointStiffness_, springReference_, defaultQ_, defaultU_;
  std::vector<std::string> qNames_, uNames_, zNames_;
#define LOCKSTEP_X(Kind, list, count, ...) std::vector<Kind> list##_;
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  int sensorDataSize_ = 0;
  std::vector<std::string> sensorDataNames_;
  int nq_ = 0, nu_ = 0, nz_ = 0;
};

class ModelBuilder {
 public:
  ModelBuilder& setGravity(const Vec3d& g);
  ModelBuilder& setMujocoStepping(bool on);  // Model::mujocoStepping
  // The implicit step of the compliant law (soft_constraints.h, "THE COMPLIANT LAW"): each ground
  // contact becomes a plane contact under that law (its sphere, plane and material: E, c, the dynamic
  // friction as Coulomb's, vt as the stiction velocity; Simbody's smoothing constants, static and
  // viscous friction are not read), and each joint stop a limit under it, for steps of `timestep`
  // with semi-implicit Euler. Their fields change with them (ground.* and stop.* become
  // plane_contact.*, soft_contact.* and limit.*).
  ModelBuilder& compliantConstraints(double timestep);
  // Adds a body on a mobilizer to its parent; bodies may be added in any order.
  ModelBuilder& addBody(const BodyDesc& body);
  // Adds an element of any kind (LinearBushingDesc, SpringDamperDesc, GroundContactDesc,
  // JointStopDesc, ActuatorDesc, SphereContactDesc, SiteDesc, SensorDesc); build() checks it.
#define LOCKSTEP_X(Kind, list, count, ...) \
  ModelBuilder& add(const Kind##Desc& element) {  \
    list##_.push_back(element);                    \
    return *this;                                  \
  }
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  // Validates and freezes the model. Throws ModelError on the first problem found.
  std::shared_ptr<const Model> build() const;
  // A builder holding everything of a built model (to extend or change it and build again).
  static ModelBuilder fromModel(const Model& model);

  const std::vector<BodyDesc>& bodies() const { return bodies_; }
#define LOCKSTEP_X(Kind, list, count, ...) \
  const std::vector<Kind##Desc>& list() const { return list##_; }
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X

 private:
  Vec3d gravity_ = Vec3d::zero();
  bool mujocoStepping_ = false;
  std::vector<BodyDesc> bodies_;
#define LOCKSTEP_X(Kind, list, count, ...) std::vector<Kind##Desc> list##_;
  LOCKSTEP_ELEMENT_KINDS(LOCKSTEP_X)
#undef LOCKSTEP_X
};

// Refuses, naming the body and its mobilizer, a moving mobilizer whose body and every body outboard
// of it have no mass and no inertia (no mass, for a mobilizer that translates: slider, cylinder,
// planar, translation, free): its joint inertia is singular in every state, so every world would
// be flagged. The scene and URDF readers call it on the models they build (such a body is refused
// rather than welded: welding would change the coordinates the file asked for); a model built in
// code may keep such a body, e.g. to give it mass per world (Batch::setMassProperties).
void validateJointInertias(const Model& model);

// Parameter checks of the force elements and constraints, shared with the per-world setters.
void validateBushingParameters(const std::array<double, 6>& stiffness, const std::array<double, 6>& damping,
                               const std::string& where);
void validateSpringParameters(double freeLength, double stiffness, double damping, const std::string& where);
void validateSphereRadii(double radiusOnF, double radiusOnB, const std::string& where);
void validateGroundSphere(const Vec3d& center, double radius, const std::string& where);
void validateGroundPlane(const Vec3d& normal, const Vec3d& point, const std::string& where);
void validateGroundMaterial(const GroundMaterial& material, const std::string& where);
// lower <= upper (either may be infinite, neither NaN), stiffness and dissipation >= 0.
void validateStopParameters(double lower, double upper, double stiffness, double dissipation, const std::string& where);
// mode 0, 1 or 2; kp, kd >= 0.
void validateActuatorParameters(double mode, double kp, double kd, const std::string& where);
// A finite gear; controlLower <= controlUpper (either may be infinite, neither NaN).
void validateActuatorControl(double gear, double controlLower, double controlUpper, const std::string& where);

// Checks of single parameters, shared by the builder and by per-world setters. Each throws
// ModelError("<where>: <field>: <reason>").

// How far an inertia's principal moments may miss positivity or the triangle inequality: by
// kInertiaRelativeTolerance of the largest principal moment, or by kInertiaRoundoff of
// `inertiaScale`, the trace of the largest inertia of the model (Model::largestInertia(); 0 when
// unknown). The second accepts inertias that are round-off noise next to the model's bodies
// (about 1e-20 kg m^2 in CAD exports, whatever their shape), as Simbody does; the builder and the
// readers pass it. Real violations, relative or absolute, stay errors.
constexpr double kInertiaRelativeTolerance = 1e-9;
constexpr double kInertiaRoundoff = 100 * std::numeric_limits<double>::epsilon();
// Mass >= 0, finite center of mass, and a valid central inertia (above).
void validateMassProperties(const MassProperties& m, const std::string& where, double inertiaScale = 0);
void validateTransform(const Transformd& X, const std::string& where, const std::string& field);
void validateFinite(double x, const std::string& where, const std::string& field);
void validateNonNegative(double x, const std::string& where, const std::string& field);

}  // namespace lockstep
