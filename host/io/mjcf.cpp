// MJCF import (mjcf.h): MuJoCo's compiler reads and compiles the XML; this file converts the
// compiled mjModel into Lockstep bodies, mobilizers and force elements, and checks that nothing
// the model says is silently lost.
#include "lockstep/io/mjcf.h"

#include "lockstep/io/urdf.h"  // reexpressMassProperties, combineMassProperties, rotationTaking
#include "message_text.h"
#include "mjcf_compile.h"
#include "mjcf_names.h"
#include "mjcf_soft.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace lockstep {

using io::inQuotes;

namespace {

Vec3d vec3(const mjtNum* v) { return {{v[0], v[1], v[2]}}; }

Rotationd rotationOfQuaternion(const mjtNum* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  return Rotationd::fromQuaternion(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
}

Transformd poseOf(const mjtNum* pos, const mjtNum* quat) { return {rotationOfQuaternion(quat), vec3(pos)}; }

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

// Converts one compiled model. Each MuJoCo body maps to a placement: the Lockstep body that
// carries it ("ground" for static bodies) and its frame L on that body.
class Converter {
 public:
  struct Placement {
    std::string body;
    Transformd X_BL;
  };

  Converter(const mjModel* m, const std::string& source, const MjcfOptions& options)
      : m_(m), source_(source), options_(options) {}

  MjcfImport run() {
    refuseUnsupported();
    out_.modelName = m_->names[0] ? std::string(m_->names) : "";
    out_.timestep = m_->opt.timestep;
    out_.integrator = m_->opt.integrator == mjINT_RK4 ? Integrator::RK4 : Integrator::SemiImplicitEuler;
    out_.law = options_.law;
    out_.mujocoNq = m_->nq;
    out_.mujocoNv = m_->nv;
    builder_.setGravity(disabled(mjDSBL_GRAVITY) ? Vec3d::zero() : vec3(m_->opt.gravity));
    builder_.setMujocoStepping(options_.law == MjcfOptions::ContactLaw::Mujoco);
    placeBodies();
    addActuators();
    for (const BodyDesc& d : bodies_) builder_.addBody(d);
    addStops();
    addGroundContacts();
    addPairContacts();
    addSitesAndSensors();
    // MuJoCo's bodies on Lockstep's (the MuJoCo joints were added with the bodies).
    for (int b = 0; b < m_->nbody; ++b)
      builder_.add(MujocoBodyDesc{bodyName(b), b == 0 ? -1 : m_->body_parentid[b], m_->body_rootid[b],
                                  placement_[b].body, placement_[b].X_BL, massOf(b)});
    warnIgnored();
    try {
      out_.model = builder_.build();
    } catch (const ModelError& e) {
      throw InputError(source_ + ": " + e.what());
    }
    for (MjcfActuator& a : out_.actuators)
      for (const MujocoJoint& j : out_.model->mujocoJoints())
        if (j.desc.name == a.joint) a.u = j.u;
    addVisuals();
    out_.q0 = qFromMujoco(out_, m_->qpos0);
    out_.builder = builder_;
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& reason) const {
    throw InputError(source_ + ": " + element + ": " + reason);
  }

  std::string bodyName(int b) const { return b == 0 ? "ground" : nameOf(m_, mjOBJ_BODY, b, "body" + std::to_string(b)); }
  std::string jointName(int j) const {
    return nameOf(m_, mjOBJ_JOINT, j, bodyName(m_->jnt_bodyid[j]) + ".joint" + std::to_string(j));
  }
  std::string geomName(int g) const {
    return nameOf(m_, mjOBJ_GEOM, g, bodyName(m_->geom_bodyid[g]) + ".geom" + std::to_string(g));
  }

  // MuJoCo's <option><flag .../>: whether a disable flag is set (mjtDisableBit); "constraint"
  // disables every constraint: equality, frictionloss, limits and contacts.
  bool disabled(int bit) const {
    const int constraints = mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT | mjDSBL_CONTACT;
    return (m_->opt.disableflags & bit) || ((bit & constraints) && (m_->opt.disableflags & mjDSBL_CONSTRAINT));
  }

  // The flags Lockstep honours (gravity, contact, limit, equality, frictionloss, passive, actuation,
  // clampctrl, constraint, and filterparent under MuJoCo's law) change what is built; those of
  // MuJoCo's solver and collision detection (warmstart, refsafe, energy, fwdinv, multiccd) have
  // nothing to act on; the others
  // are named in the warning of what is ignored.
  void readFlags() {
    if (disabled(mjDSBL_SENSOR) && m_->nsensor > 0)
      ignored_["option flags (Lockstep computes the sensors all the same)"].push_back("sensor=\"disable\"");
    if ((m_->opt.enableflags & mjENBL_OVERRIDE) && m_->ngeom > 0)
      ignored_["option flags (the contact material is the import's options)"].push_back("override=\"enable\"");
    bool noisy = false;
    for (int s = 0; s < m_->nsensor; ++s) noisy = noisy || m_->sensor_noise[s] > 0;
    if ((m_->opt.enableflags & mjENBL_SENSORNOISE) && noisy)
      ignored_["option flags (Lockstep adds no sensor noise)"].push_back("sensornoise=\"enable\"");
  }

  void refuseUnsupported() {
    readFlags();
    if (m_->neq > 0 && !disabled(mjDSBL_EQUALITY))
      fail("equality " + inQuotes(nameOf(m_, mjOBJ_EQUALITY, 0, "#0")),
           "equality constraints have no Lockstep counterpart (remove them, or model the loop otherwise)");
    if ((m_->opt.density != 0 || m_->opt.viscosity != 0) && !disabled(mjDSBL_PASSIVE))
      fail("option", "fluid forces (density, viscosity) have no Lockstep counterpart");
    for (int t = 0; t < m_->ntendon; ++t) {
      if ((m_->tendon_stiffness[t] != 0 || m_->tendon_damping[t] != 0) && !disabled(mjDSBL_PASSIVE))
        fail("tendon " + inQuotes(nameOf(m_, mjOBJ_TENDON, t, "#" + std::to_string(t))),
             "tendon stiffness and damping have no Lockstep counterpart");
      if (m_->tendon_limited[t] && !disabled(mjDSBL_LIMIT)) ignored_["tendon limits"].push_back(nameOf(m_, mjOBJ_TENDON, t, "#" + std::to_string(t)));
    }
    for (int j = 0; j < m_->njnt; ++j)
      for (int k = 0; k < dofsOf(m_->jnt_type[j]); ++k)
        if (m_->dof_frictionloss[m_->jnt_dofadr[j] + k] > 0 && !disabled(mjDSBL_FRICTIONLOSS)) {
          ignored_["frictionloss"].push_back(jointName(j));
          break;
        }
  }

  static int dofsOf(int type) { return type == mjJNT_FREE ? 6 : type == mjJNT_BALL ? 3 : 1; }

  // Per-dof values of joint j in Lockstep's speed order (a free joint's angular dofs first).
  std::vector<double> perSpeed(const mjtNum* values, int j) const {
    const int d = m_->jnt_dofadr[j];
    if (m_->jnt_type[j] == mjJNT_FREE)
      return {values[d + 3], values[d + 4], values[d + 5], values[d], values[d + 1], values[d + 2]};
    return std::vector<double>(values + d, values + d + dofsOf(m_->jnt_type[j]));
  }

  void placeBodies() {
    placement_.assign(m_->nbody, {"ground", Transformd::identity()});
    for (int b = 1; b < m_->nbody; ++b) {
      const int parent = m_->body_parentid[b];
      const Transformd X_PL = placement_[parent].X_BL * poseOf(m_->body_pos + 3 * b, m_->body_quat + 4 * b);
      const int nj = m_->body_jntnum[b];
      const MassProperties mass = massOf(b);
      if (nj == 0) {  // welded into its parent
        placement_[b] = {placement_[parent].body, X_PL};
        if (placement_[parent].body != "ground") {
          BodyDesc& carrier = bodies_[bodyIndex_.at(placement_[parent].body)];
          carrier.mass = combineMassProperties(carrier.mass, reexpressMassProperties(X_PL, mass));
        }
        continue;
      }
      std::string parentBody = placement_[parent].body;
      Transformd X_PF0 = X_PL;  // the first joint's frames start at the body's pose in its parent
      for (int k = 0; k < nj; ++k) {
        const int j = m_->body_jntadr[b] + k;
        const int type = m_->jnt_type[j];
        const std::string joint = jointName(j);
        BodyDesc d;
        d.name = k == nj - 1 ? bodyName(b) : bodyName(b) + "." + joint;
        d.parent = parentBody;
        d.jointName = joint;
        const Transformd anchor = Transformd::translation(vec3(m_->jnt_pos + 3 * j));
        const Vec3d axis = vec3(m_->jnt_axis + 3 * j);
        const double q0 = m_->qpos0[m_->jnt_qposadr[j]];
        switch (type) {
          case mjJNT_HINGE: {
            const Transformd A{rotationTaking({{0, 0, 1}}, axis / norm(axis), /*halfTurnAxis=*/1), Vec3d::zero()};
            d.mobilizer = MobilizerType::Pin;
            d.X_BM = anchor * A;
            d.X_PF = X_PF0 * d.X_BM * Transformd{Rotationd::aboutAxis(2, -q0), Vec3d::zero()};
            break;
          }
          case mjJNT_SLIDE: {
            const Transformd A{rotationTaking({{1, 0, 0}}, axis / norm(axis), /*halfTurnAxis=*/2), Vec3d::zero()};
            d.mobilizer = MobilizerType::Slider;
            d.X_BM = anchor * A;
            d.X_PF = X_PF0 * d.X_BM * Transformd::translation({{-q0, 0, 0}});
            break;
          }
          case mjJNT_BALL:
            d.mobilizer = MobilizerType::Ball;
            d.X_BM = anchor;
            d.X_PF = X_PF0 * anchor;
            break;
          case mjJNT_FREE:
            if (parentBody != "ground" || nj != 1)
              fail("joint " + inQuotes(joint), "a free joint must be the only joint of a body on the world body");
            d.mobilizer = MobilizerType::Free;  // MuJoCo's free joint ignores the body's pose: q gives it
            d.X_PF = Transformd::identity();
            d.X_BM = Transformd::identity();
            break;
          default: fail("joint " + inQuotes(joint), "unknown joint type " + std::to_string(type));
        }
        d.damping = perSpeed(m_->dof_damping, j);
        if (disabled(mjDSBL_PASSIVE)) d.damping.assign(d.damping.size(), 0.0);  // springs and dampers off
        d.armature = perSpeed(m_->dof_armature, j);
        if (m_->jnt_stiffness[j] != 0 && !disabled(mjDSBL_PASSIVE)) {
          if (type == mjJNT_BALL || type == mjJNT_FREE)
            fail("joint " + inQuotes(joint), std::string("stiffness on a ") + jointTypeName(type) +
                                                 " joint has no Lockstep counterpart (hinges and slides only)");
          d.stiffness = {m_->jnt_stiffness[j]};
          d.springReference = {m_->qpos_spring[m_->jnt_qposadr[j]]};
        }
        if (k == nj - 1) d.mass = mass;
        bodyIndex_[d.name] = static_cast<int>(bodies_.size());
        jointBodyDesc_[j] = static_cast<int>(bodies_.size());
        bodies_.push_back(d);
        builder_.add(MujocoJointDesc{joint, type, m_->jnt_qposadr[j], m_->jnt_dofadr[j], d.name});
        parentBody = d.name;
        X_PF0 = Transformd::identity();  // the next joint's frames are on this joint's body
      }
      placement_[b] = {bodyName(b), Transformd::identity()};
    }
  }

  MassProperties massOf(int b) const {
    MassProperties mp;
    mp.mass = m_->body_mass[b];
    mp.com = vec3(m_->body_ipos + 3 * b);
    const Rotationd R = rotationOfQuaternion(m_->body_iquat + 4 * b);
    const mjtNum* I = m_->body_inertia + 3 * b;
    Mat33<double> Ic;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Ic.m[r][c] = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k) Ic.m[r][c] += R.R.m[r][k] * I[k] * R.R.m[c][k];
    mp.inertia = {Ic.m[0][0], Ic.m[1][1], Ic.m[2][2], Ic.m[0][1], Ic.m[0][2], Ic.m[1][2]};
    return mp;
  }

  void addActuators() {
    std::set<int> driven;
    for (int i = 0; i < m_->nu; ++i) {
      const std::string name = nameOf(m_, mjOBJ_ACTUATOR, i, "actuator" + std::to_string(i));
      const std::string where = "actuator " + inQuotes(name);
      if (m_->actuator_trntype[i] != mjTRN_JOINT)
        fail(where, "only joint transmissions are supported (tendon, site and other transmissions are not)");
      const int j = m_->actuator_trnid[2 * i];
      const int type = m_->jnt_type[j];
      if (type != mjJNT_HINGE && type != mjJNT_SLIDE)
        fail(where, std::string("drives a ") + jointTypeName(type) + " joint; actuators drive hinges and slides");
      if (!driven.insert(j).second) fail(where, "a second actuator on joint " + inQuotes(jointName(j)) + " (one per joint)");
      if (m_->actuator_dyntype[i] != mjDYN_NONE)
        fail(where, "actuator dynamics (dyntype) have no Lockstep counterpart (motor, position and velocity only)");
      if (m_->actuator_gaintype[i] != mjGAIN_FIXED)
        fail(where, "a gain that is not fixed has no Lockstep counterpart (motor, position and velocity only)");
      const double gain = m_->actuator_gainprm[i * mjNGAIN];
      const mjtNum* bias = m_->actuator_biasprm + i * mjNBIAS;
      const double gear = m_->actuator_gear[6 * i];
      ActuatorDesc a;
      a.coordinate = jointName(j);
      MjcfActuator info{name, "motor", jointName(j), 0, gear, false};
      const bool clamped = m_->actuator_ctrllimited[i] && !disabled(mjDSBL_CLAMPCTRL);
      if (clamped) {
        info.controlLower = m_->actuator_ctrlrange[2 * i];
        info.controlUpper = m_->actuator_ctrlrange[2 * i + 1];
      }
      if (m_->actuator_biastype[i] == mjBIAS_NONE) {
        a.mode = ActuatorMode::Torque;
        a.gear = gear * gain;
        if (clamped) {
          a.controlLower = info.controlLower;
          a.controlUpper = info.controlUpper;
        }
      } else if (m_->actuator_biastype[i] == mjBIAS_AFFINE && bias[0] == 0 && gain != 0 && bias[1] == -gain) {
        info.kind = "position";
        info.drivesTarget = true;
        a.mode = ActuatorMode::Position;
        a.kp = gain * gear * gear;
        a.kd = -bias[2] * gear * gear;
      } else if (m_->actuator_biastype[i] == mjBIAS_AFFINE && bias[0] == 0 && bias[1] == 0 && gain != 0 &&
                 bias[2] == -gain) {
        info.kind = "velocity";
        info.drivesTarget = true;
        a.mode = ActuatorMode::Velocity;
        a.kd = gain * gear * gear;
      } else {
        fail(where, "a general actuator other than a motor, position or velocity servo has no Lockstep counterpart");
      }
      if (info.drivesTarget && gear == 0) fail(where, "gear: must not be 0");
      if (disabled(mjDSBL_ACTUATION)) a.gear = a.kp = a.kd = 0;  // every actuator's force is 0
      if (m_->actuator_forcelimited[i]) {
        const double lo = m_->actuator_forcerange[2 * i], hi = m_->actuator_forcerange[2 * i + 1];
        if (lo != -hi || !(hi > 0))
          fail(where, "forcerange: Lockstep's effort limits are symmetric and positive (got [" + std::to_string(lo) +
                          ", " + std::to_string(hi) + "])");
        BodyDesc& d = bodies_[jointBodyDesc_.at(j)];
        d.effortLimit = {std::abs(gear) * hi};
      }
      builder_.add(a);
      out_.actuators.push_back(info);
    }
  }

  void addStops() {
    if (disabled(mjDSBL_LIMIT)) return;
    for (int j = 0; j < m_->njnt; ++j) {
      if (!m_->jnt_limited[j]) continue;
      const int type = m_->jnt_type[j];
      if (type != mjJNT_HINGE && type != mjJNT_SLIDE) {
        ignored_["limits of ball joints"].push_back(jointName(j));
        continue;
      }
      if (options_.law == MjcfOptions::ContactLaw::Mujoco) {
        builder_.add(mjcfSoftLimit(m_, j, jointName(j)));
        continue;
      }
      JointStopDesc s;
      s.coordinate = jointName(j);
      s.lower = m_->jnt_range[2 * j];
      s.upper = m_->jnt_range[2 * j + 1];
      s.stiffness = options_.stopStiffness;
      s.dissipation = options_.stopDissipation;
      builder_.add(s);
    }
  }

  bool touches(int g, int plane) const {
    return (m_->geom_contype[g] & m_->geom_conaffinity[plane]) || (m_->geom_contype[plane] & m_->geom_conaffinity[g]);
  }

  void addGroundContacts() {
    if (disabled(mjDSBL_CONTACT)) return;
    std::vector<int> planes;
    for (int g = 0; g < m_->ngeom; ++g) {
      const bool onGround = placement_[m_->geom_bodyid[g]].body == "ground";
      const int type = m_->geom_type[g];
      if (type == mjGEOM_PLANE && onGround) planes.push_back(g);
      else if (type == mjGEOM_PLANE) ignored_["planes on moving bodies"].push_back(geomName(g));
      else if (onGround && (m_->geom_contype[g] || m_->geom_conaffinity[g]) &&
               options_.law != MjcfOptions::ContactLaw::Mujoco)  // under MuJoCo's law: pair contacts
        ignored_["static geoms other than planes"].push_back(geomName(g));
    }
    for (int g = 0; g < m_->ngeom; ++g) {
      const Placement& p = placement_[m_->geom_bodyid[g]];
      if (p.body == "ground") continue;
      for (int plane : planes) {
        if (!touches(g, plane)) continue;
        const int type = m_->geom_type[g];
        const bool mujocoLaw = options_.law == MjcfOptions::ContactLaw::Mujoco;
        if (type != mjGEOM_SPHERE && type != mjGEOM_CAPSULE && type != mjGEOM_BOX && type != mjGEOM_CYLINDER &&
            !(type == mjGEOM_ELLIPSOID && mujocoLaw)) {  // an ellipsoid's contact spheres: not yet
          ignored_[std::string(geomTypeName(type)) + " geoms on the ground"].push_back(geomName(g));
          break;
        }
        if (mujocoLaw) {
          const Transformd X_GP = placement_[m_->geom_bodyid[plane]].X_BL *
                                  poseOf(m_->geom_pos + 3 * plane, m_->geom_quat + 4 * plane);
          builder_.add(mjcfPlaneContact(m_, g, plane, geomName(g) + (planes.size() > 1 ? "@" + geomName(plane) : ""),
                                        p.body, p.X_BL * poseOf(m_->geom_pos + 3 * g, m_->geom_quat + 4 * g), X_GP));
          continue;
        }
        // The compliant law's spheres have no torsional or rolling friction.
        if (mjcfContactCondim(m_, g, plane) > 3)
          ignored_["torsional and rolling friction (condim 4 and 6) under the compliant law"].push_back(geomName(g));
        addShape(g, plane, planes.size() > 1, p);
      }
    }
  }

  // MuJoCo's contacts between geoms on different bodies (mj_collision), under MuJoCo's law: every
  // explicit <pair>, and every other pair of geoms whose contype and conaffinity match either way,
  // except geoms welded into one body, a body's and its parent's (where neither is the world and
  // filterparent is on), <exclude>d body pairs, and the geoms of an explicit pair. Planes are the
  // ground contacts'; the kinds softPairModelled names pair here (a sphere or a capsule with any
  // primitive, an ellipsoid with an ellipsoid, a cylinder or a box, two boxes); other kinds are named
  // in a warning.
  // Under the compliant law the same rules pick the pairs of spheres and capsules on moving bodies,
  // kept aside for its implicit step (MjcfImport::compliantPairs).
  void addPairContacts() {
    if (disabled(mjDSBL_CONTACT)) return;
    const bool compliant = options_.law != MjcfOptions::ContactLaw::Mujoco;
    auto weld = [&](int g) { return m_->body_weldid[m_->geom_bodyid[g]]; };
    auto weldParent = [&](int g) { return m_->body_weldid[m_->body_parentid[weld(g)]]; };
    std::set<std::pair<int, int>> excluded, explicitGeoms;  // body pairs, geom pairs (smaller first)
    for (int e = 0; e < m_->nexclude; ++e) {  // MuJoCo 2's signature: (body1 + 1) << 16 + body2 + 1
      const int b1 = (m_->exclude_signature[e] >> 16) - 1, b2 = (m_->exclude_signature[e] & 0xFFFF) - 1;
      excluded.insert({std::min(b1, b2), std::max(b1, b2)});
    }
    for (int p = 0; p < m_->npair; ++p)
      explicitGeoms.insert({std::min(m_->pair_geom1[p], m_->pair_geom2[p]), std::max(m_->pair_geom1[p], m_->pair_geom2[p])});
    std::map<std::string, int> unpaired;  // "box-capsule" -> how many pairs
    auto add = [&](int g1, int g2, int pair) {
      if (m_->geom_type[g1] > m_->geom_type[g2]) std::swap(g1, g2);  // MuJoCo's order: by type
      const int t1 = m_->geom_type[g1], t2 = m_->geom_type[g2];
      if (t1 == mjGEOM_PLANE) return;  // the ground contacts'
      auto primitive = [](int t) {
        return t == mjGEOM_SPHERE || t == mjGEOM_CAPSULE || t == mjGEOM_ELLIPSOID || t == mjGEOM_CYLINDER || t == mjGEOM_BOX;
      };
      auto round = [](int t) { return t == mjGEOM_SPHERE || t == mjGEOM_CAPSULE; };
      if (!primitive(t1) || !primitive(t2) || !softPairModelled(mjcfShape(t1), mjcfShape(t2)) ||
          (compliant && !(round(t1) && round(t2)))) {
        ++unpaired[std::string(geomTypeName(t1)) + "-" + geomTypeName(t2)];
        return;
      }
      const Placement &p1 = placement_[m_->geom_bodyid[g1]], &p2 = placement_[m_->geom_bodyid[g2]];
      if (p1.body == p2.body) return;  // one rigid body: the pair's forces cancel
      // (The compliant law's static geoms other than planes are named in a warning, as for the ground.)
      if (compliant && (p1.body == "ground" || p2.body == "ground")) return;
      const Transformd X_BG1 = p1.X_BL * poseOf(m_->geom_pos + 3 * g1, m_->geom_quat + 4 * g1);
      const Transformd X_BG2 = p2.X_BL * poseOf(m_->geom_pos + 3 * g2, m_->geom_quat + 4 * g2);
      const std::string name = geomName(g1) + "/" + geomName(g2);
      PairContactDesc d = pair >= 0 ? mjcfExplicitPair(m_, pair, g1, g2, name, p1.body, p2.body, X_BG1, X_BG2)
                                    : mjcfPairContact(m_, g1, g2, name, p1.body, p2.body, X_BG1, X_BG2);
      if (!compliant) {
        builder_.add(d);
        return;
      }
      out_.compliantPairs.push_back(compliantPair(d, g1, g2, pair));
    };
    for (int p = 0; p < m_->npair; ++p) {
      add(m_->pair_geom1[p], m_->pair_geom2[p], p);
      const mjtNum* friction = m_->pair_friction + 5 * p;
      if ((m_->pair_dim[p] > 1 && friction[1] != friction[0]) || (m_->pair_dim[p] > 4 && friction[4] != friction[3]))
        ignored_["explicit pairs' second tangential or rolling friction (Lockstep's pyramid and elliptic cone take the "
                 "first for both tangents, and for both rolling axes)"]
            .push_back(geomName(m_->pair_geom1[p]) + "/" + geomName(m_->pair_geom2[p]));
    }
    for (int g1 = 0; g1 < m_->ngeom; ++g1) {
      for (int g2 = g1 + 1; g2 < m_->ngeom; ++g2) {
        if (!(m_->geom_contype[g1] & m_->geom_conaffinity[g2]) && !(m_->geom_contype[g2] & m_->geom_conaffinity[g1])) continue;
        if (weld(g1) == weld(g2)) continue;
        if (!disabled(mjDSBL_FILTERPARENT) && weld(g1) != 0 && weld(g2) != 0 &&
            (weld(g1) == weldParent(g2) || weld(g2) == weldParent(g1)))
          continue;
        const int b1 = m_->geom_bodyid[g1], b2 = m_->geom_bodyid[g2];
        if (excluded.count({std::min(b1, b2), std::max(b1, b2)}) || explicitGeoms.count({g1, g2})) continue;
        add(g1, g2, -1);
      }
    }
    for (const auto& [kinds, count] : unpaired)
      ignored_[compliant ? "contacts between moving geoms other than spheres and capsules under the compliant law"
                         : "contacts between moving geoms of kinds Lockstep does not pair yet (spheres and capsules "
                           "pair with each other and with cylinders, a sphere with a box, two boxes)"]
          .push_back(kinds + " (" + std::to_string(count) + (count == 1 ? " pair)" : " pairs)"));
  }

  // Geom g's material under the compliant law: MjcfOptions' default, or the geom's own; its
  // friction MuJoCo's friction[0] unless the geom's own is given.
  CompliantMaterial compliantMaterial(int g) const {
    CompliantMaterial m{options_.contactStiffness, options_.contactDissipation, m_->geom_friction[3 * g],
                        options_.transitionVelocity};
    if (auto it = options_.geoms.find(geomName(g)); it != options_.geoms.end()) {
      if (it->second.stiffness >= 0) m.stiffness = it->second.stiffness;
      if (it->second.dissipation >= 0) m.dissipation = it->second.dissipation;
      if (it->second.friction >= 0) m.friction = it->second.friction;
    }
    return m;
  }
  // MuJoCo's pair d of geoms g1 and g2 (explicit pair `pair`, or -1) under the compliant law: the
  // two materials combined (pairMaterial), the friction MuJoCo's mix (the larger, or the explicit
  // pair's own; none at condim 1), condim 3.
  PairContactDesc compliantPair(PairContactDesc d, int g1, int g2, int pair) {
    const CompliantMaterial a = compliantMaterial(g1), b = compliantMaterial(g2), m = pairMaterial(a, b);
    d.law = kLawCompliant;
    d.stiffness = m.stiffness;
    d.dissipation = m.dissipation;
    d.stictionVelocity = m.stictionVelocity;
    d.friction = d.condim == 1 ? 0 : pair >= 0 ? m_->pair_friction[5 * pair] : std::max(a.friction, b.friction);
    if (d.condim > 3)
      ignored_["torsional and rolling friction (condim 4 and 6) under the compliant law"].push_back(d.name);
    d.condim = 3;
    return d;
  }

  // The spheres that stand for geom g against one plane.
  void addShape(int g, int plane, bool namePlane, const Placement& p) {
    const Transformd X_BG = p.X_BL * poseOf(m_->geom_pos + 3 * g, m_->geom_quat + 4 * g);
    const mjtNum* size = m_->geom_size + 3 * g;
    const Transformd X_GP = poseOf(m_->geom_pos + 3 * plane, m_->geom_quat + 4 * plane);
    const Transformd X_GPl = placement_[m_->geom_bodyid[plane]].X_BL * X_GP;
    const std::string name = geomName(g) + (namePlane ? "@" + geomName(plane) : "");
    GroundContactDesc d;
    d.body = p.body;
    d.planeNormal = X_GPl.R * Vec3d{{0, 0, 1}};
    d.planePoint = X_GPl.p;
    d.material.stiffness = options_.contactStiffness;
    d.material.dissipation = options_.contactDissipation;
    d.material.transitionVelocity = options_.transitionVelocity;
    const double mu = std::max(m_->geom_friction[3 * g], m_->geom_friction[3 * plane]);
    d.material.staticFriction = d.material.dynamicFriction = mu;
    if (auto it = options_.geoms.find(geomName(g)); it != options_.geoms.end()) {
      if (it->second.stiffness >= 0) d.material.stiffness = it->second.stiffness;
      if (it->second.dissipation >= 0) d.material.dissipation = it->second.dissipation;
      if (it->second.friction >= 0) d.material.staticFriction = d.material.dynamicFriction = it->second.friction;
    }
    auto sphere = [&](const std::string& suffix, const Vec3d& p_G, double radius) {
      GroundContactDesc s = d;
      s.name = name + suffix;
      s.center = X_BG * p_G;
      s.radius = radius;
      builder_.add(s);
    };
    switch (m_->geom_type[g]) {
      case mjGEOM_SPHERE: sphere("", Vec3d::zero(), size[0]); break;
      case mjGEOM_CAPSULE:
        sphere(".0", {{0, 0, -size[1]}}, size[0]);
        sphere(".1", {{0, 0, size[1]}}, size[0]);
        break;
      case mjGEOM_BOX: {
        const double r = options_.cornerRadiusFraction * std::min({size[0], size[1], size[2]});
        for (int c = 0; c < 8; ++c)
          sphere(".corner" + std::to_string(c),
                 {{(c & 1 ? 1 : -1) * (size[0] - r), (c & 2 ? 1 : -1) * (size[1] - r), (c & 4 ? 1 : -1) * (size[2] - r)}}, r);
        break;
      }
      case mjGEOM_CYLINDER: {
        const double r = options_.cornerRadiusFraction * std::min(size[0], size[1]);
        for (int end = 0; end < 2; ++end)
          for (int k = 0; k < 8; ++k) {
            const double a = k * M_PI / 4;
            sphere(".rim" + std::to_string(end * 8 + k),
                   {{(size[0] - r) * std::cos(a), (size[0] - r) * std::sin(a), (end ? 1 : -1) * (size[1] - r)}}, r);
          }
        break;
      }
    }
  }

  void addSitesAndSensors() {
    for (int s = 0; s < m_->nsite; ++s) {
      const Placement& p = placement_[m_->site_bodyid[s]];
      builder_.add(SiteDesc{nameOf(m_, mjOBJ_SITE, s, "site" + std::to_string(s)), p.body,
                            p.X_BL * poseOf(m_->site_pos + 3 * s, m_->site_quat + 4 * s)});
    }
    for (int s = 0; s < m_->nsensor; ++s) {
      const int objType = m_->sensor_objtype[s], objId = m_->sensor_objid[s];
      const char* typeName = mju_type2Str(objType);
      SensorDesc d;
      d.name = nameOf(m_, mjOBJ_SENSOR, s, "sensor" + std::to_string(s));
      d.type = sensorTypeName(m_->sensor_type[s]);
      d.objectType = typeName ? typeName : "";
      d.object = objId >= 0 ? nameOf(m_, static_cast<mjtObj>(objType), objId, "") : "";
      d.cutoff = m_->sensor_cutoff[s];  // by MuJoCo's data type: real, positive (touch) or quaternion
      if (const std::string why = resolveSensor(s, d); !why.empty()) {
        d.dimension = 0;
        ignored_["sensors (" + why + ")"].push_back(d.name);
      }
      builder_.add(d);
    }
  }

  // Where sensor s measures, in Lockstep's terms (SensorDesc); returns why Lockstep does not
  // compute it, or "" when it does.
  std::string resolveSensor(int s, SensorDesc& d) const {
    const int type = m_->sensor_type[s], objType = m_->sensor_objtype[s], id = m_->sensor_objid[s];
    if (m_->sensor_reftype[s] != mjOBJ_UNKNOWN && m_->sensor_refid[s] >= 0) return "relative to a reference frame";
    if (type == mjSENS_SUBTREECOM || type == mjSENS_SUBTREELINVEL) {
      // Of a MuJoCo body's subtree: Lockstep's body carrying it and everything below, which is
      // the same set of masses when the body is a Lockstep body (not welded into one).
      const Placement& p = placement_[id];
      if (id != 0 && p.body != bodyName(id)) return "of the subtree of a body without a joint of its own";
      d.body = id == 0 ? "ground" : p.body;
      d.dimension = 3;
      return "";
    }
    if (type == mjSENS_JOINTPOS || type == mjSENS_JOINTVEL) {
      if (m_->jnt_type[id] != mjJNT_HINGE && m_->jnt_type[id] != mjJNT_SLIDE) return "of a ball or free joint";
      d.coordinate = d.object;
      d.dimension = 1;
      return "";
    }
    const bool frame = type == mjSENS_FRAMEPOS || type == mjSENS_FRAMEQUAT || type == mjSENS_FRAMELINVEL ||
                       type == mjSENS_FRAMEANGVEL;
    const bool site = type == mjSENS_VELOCIMETER || type == mjSENS_GYRO || type == mjSENS_ACCELEROMETER ||
                      type == mjSENS_TOUCH || type == mjSENS_FORCE || type == mjSENS_TORQUE;
    if (!frame && !site) return "of a kind Lockstep does not compute";
    int body;
    Transformd X_LS;  // the frame on the MuJoCo body
    switch (objType) {
      case mjOBJ_SITE:
        body = m_->site_bodyid[id];
        X_LS = poseOf(m_->site_pos + 3 * id, m_->site_quat + 4 * id);
        break;
      case mjOBJ_XBODY:
        body = id;
        X_LS = Transformd::identity();
        break;
      case mjOBJ_BODY:  // the body's inertial frame
        body = id;
        X_LS = poseOf(m_->body_ipos + 3 * id, m_->body_iquat + 4 * id);
        break;
      case mjOBJ_GEOM:
        body = m_->geom_bodyid[id];
        X_LS = poseOf(m_->geom_pos + 3 * id, m_->geom_quat + 4 * id);
        break;
      default: return "of a camera";
    }
    const Placement& p = placement_[body];
    d.body = p.body;
    d.X_BS = p.X_BL * X_LS;
    d.dimension = type == mjSENS_FRAMEQUAT ? 4 : type == mjSENS_TOUCH ? 1 : 3;
    if (type == mjSENS_TOUCH) {
      const char* zones[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box"};
      const int zone = m_->site_type[id];
      if (zone < mjGEOM_SPHERE || zone > mjGEOM_BOX) return "a touch zone that is not a solid";
      d.zone = zones[zone];
      d.zoneSize = vec3(m_->site_size + 3 * id);
    }
    // The force between a body and its parent exists in Lockstep only where a joint is: the site's
    // MuJoCo body must be a Lockstep body, not welded into one.
    if ((type == mjSENS_FORCE || type == mjSENS_TORQUE) && (p.body == "ground" || p.body != bodyName(body)))
      return "force or torque at a body without a joint of its own";
    return "";
  }

  // The geoms MuJoCo draws by default (groups 0 to 2, not fully transparent), on their carriers;
  // a geom's colour is its material's when it has one (MuJoCo's rule).
  void addVisuals() {
    for (int g = 0; g < m_->ngeom; ++g) {
      const float* rgba = m_->geom_matid[g] >= 0 ? m_->mat_rgba + 4 * m_->geom_matid[g] : m_->geom_rgba + 4 * g;
      if (m_->geom_group[g] < 0 || m_->geom_group[g] > 2 || rgba[3] <= 0) continue;
      VisualShape shape;
      shape.source = "geom " + inQuotes(geomName(g));
      const Placement& p = placement_[m_->geom_bodyid[g]];
      shape.body = p.body;
      shape.X_BS = p.X_BL * poseOf(m_->geom_pos + 3 * g, m_->geom_quat + 4 * g);
      shape.rgba = {{rgba[0], rgba[1], rgba[2], rgba[3]}};
      const mjtNum* size = m_->geom_size + 3 * g;
      shape.size = {{size[0], size[1], size[2]}};
      switch (m_->geom_type[g]) {
        case mjGEOM_PLANE: shape.kind = ShapeKind::Plane; break;
        case mjGEOM_SPHERE: shape.kind = ShapeKind::Sphere; break;
        case mjGEOM_CAPSULE: shape.kind = ShapeKind::Capsule; break;
        case mjGEOM_ELLIPSOID: shape.kind = ShapeKind::Ellipsoid; break;
        case mjGEOM_CYLINDER: shape.kind = ShapeKind::Cylinder; break;
        case mjGEOM_BOX: shape.kind = ShapeKind::Box; break;
        case mjGEOM_MESH: {
          const int mesh = m_->geom_dataid[g];
          if (mesh < 0) continue;
          shape.kind = ShapeKind::Mesh;
          shape.size = {{1, 1, 1}};  // MuJoCo's compiler has scaled the vertices
          const float* v = m_->mesh_vert + 3 * m_->mesh_vertadr[mesh];
          shape.vertices.assign(v, v + 3 * m_->mesh_vertnum[mesh]);
          const int* f = m_->mesh_face + 3 * m_->mesh_faceadr[mesh];
          shape.triangles.assign(f, f + 3 * m_->mesh_facenum[mesh]);
          break;
        }
        default: continue;  // height fields are not drawn
      }
      out_.visuals.push_back(std::move(shape));
    }
  }

  void warnIgnored() {
    for (const auto& [what, names] : ignored_)
      out_.warnings.push_back(source_ + ": ignored (no Lockstep counterpart): " + what + ": " + joined(names));
  }

  const mjModel* m_;
  std::string source_;
  MjcfOptions options_;
  MjcfImport out_;
  ModelBuilder builder_;
  std::vector<BodyDesc> bodies_;
  std::map<std::string, int> bodyIndex_;
  std::map<int, int> jointBodyDesc_;
  std::vector<Placement> placement_;
  std::map<std::string, std::vector<std::string>> ignored_;
};

}  // namespace

bool isMjcfPath(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0;
}

MjcfOptions::ContactLaw parseMjcfContactLaw(const std::string& name) {
  if (name == "mujoco") return MjcfOptions::ContactLaw::Mujoco;
  if (name == "compliant") return MjcfOptions::ContactLaw::Compliant;
  throw InputError("must be \"compliant\" or \"mujoco\", not " + inQuotes(name));
}

MjcfImport importMjcfFile(const std::string& path, const MjcfOptions& options) {
  std::vector<std::string> compilerWarnings;
  const io::MjModelPtr m = io::compileMjcf(path, &compilerWarnings);
  io::checkCompiledMjcf(m.get(), path);
  MjcfImport out = Converter(m.get(), path, options).run();
  for (const std::string& w : compilerWarnings) out.warnings.push_back(path + ": " + w);
  return out;
}

}  // namespace lockstep
