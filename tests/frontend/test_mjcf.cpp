// MJCF import (mjcf.h) against MuJoCo itself: Gymnasium's seven MuJoCo robots (models/mjcf/), at
// seeded random states inside the joint ranges with random controls, with MuJoCo's contacts, limits
// and friction loss off; body poses against MuJoCo's kinematics; ground contact of capsules and boxes
// against closed forms; the energy balance with every contact on; refusals naming the element.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>

#include "lockstep/engine/batch.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "mjcf_compliant.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

const std::string kMjcf = std::string(LOCKSTEP_SOURCE_DIR) + "/models/mjcf/";

struct MjDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
  void operator()(mjData* d) const { mj_deleteData(d); }
};

std::unique_ptr<mjModel, MjDeleter> loadMujoco(const std::string& path) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m) ADD_FAILURE() << path << ": " << error;
  return std::unique_ptr<mjModel, MjDeleter>(m);
}

// A file in the test's temporary directory holding `text`.
std::string writeTemporary(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// A random state of MuJoCo's model: hinges and slides uniform in their range (or within +-1 of
// qpos0 when unlimited), balls and free joints at random unit quaternions, free positions within a
// metre; every qvel in [-2, 2]; controls uniform in their range (or [-1, 1]).
void randomState(const mjModel* m, mjData* d, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int j = 0; j < m->njnt; ++j) {
    double* q = d->qpos + m->jnt_qposadr[j];
    auto randomQuaternion = [&](double* p) {
      std::normal_distribution<double> n;
      double s = 0;
      for (int k = 0; k < 4; ++k) {
        p[k] = n(rng);
        s += p[k] * p[k];
      }
      for (int k = 0; k < 4; ++k) p[k] /= std::sqrt(s);
    };
    switch (m->jnt_type[j]) {
      case mjJNT_FREE:
        for (int k = 0; k < 3; ++k) q[k] = unit(rng);
        randomQuaternion(q + 3);
        break;
      case mjJNT_BALL: randomQuaternion(q); break;
      default:
        if (m->jnt_limited[j]) {
          std::uniform_real_distribution<double> in(m->jnt_range[2 * j], m->jnt_range[2 * j + 1]);
          q[0] = in(rng);
        } else {
          q[0] = m->qpos0[m->jnt_qposadr[j]] + unit(rng);
        }
    }
  }
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 2 * unit(rng);
  for (int i = 0; i < m->nu; ++i) {
    if (m->actuator_ctrllimited[i]) {
      std::uniform_real_distribution<double> in(m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
      d->ctrl[i] = in(rng);
    } else {
      d->ctrl[i] = unit(rng);
    }
  }
}

// Lockstep's actions and targets for MuJoCo's controls: a motor's control is its speed's action; a
// position or velocity servo's control over its gear is its target.
void applyControls(const MjcfImport& mjcf, const double* ctrl, Batch<double>& batch) {
  const Model& model = *mjcf.model;
  std::vector<double> tau(model.nu(), 0.0), position(model.nu(), 0.0), velocity(model.nu(), 0.0);
  for (std::size_t i = 0; i < mjcf.actuators.size(); ++i) {
    const MjcfActuator& a = mjcf.actuators[i];
    if (!a.drivesTarget) tau[a.u] = ctrl[i];
    else if (a.kind == "position") position[a.u] = ctrl[i] / a.gear;
    else velocity[a.u] = ctrl[i] / a.gear;
  }
  batch.setTau(0, tau);
  batch.setTargets(0, position, velocity);
}

class GymnasiumRobot : public ::testing::TestWithParam<const char*> {};

TEST_P(GymnasiumRobot, AccelerationsEqualMujocosWithContactsAndLimitsOff) {
  const std::string path = kMjcf + GetParam();
  const MjcfImport mjcf = importCompliant(path);
  auto m = loadMujoco(path);
  ASSERT_TRUE(m);
  m->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS;
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(20261125);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    randomState(m.get(), d.get(), rng);
    mj_forward(m.get(), d.get());
    const std::vector<double> q = qFromMujoco(mjcf, d->qpos), u = uFromMujoco(mjcf, d->qpos, d->qvel);
    batch.setQ(0, q);
    batch.setU(0, u);
    applyControls(mjcf, d->ctrl, batch);
    // The stops and ground contacts stay: inside the ranges the stops are silent, and the contacts
    // are switched off by putting the worlds' planes far below.
    for (int i = 0; i < static_cast<int>(mjcf.model->groundContacts().size()); ++i)
      batch.setGroundPlane(0, i, {{0, 0, 1}}, {{0, 0, -1e6}});
    batch.evaluate();
    const std::vector<double> udot = batch.udot(0), expected = uFromMujoco(mjcf, d->qpos, d->qacc);
    double scale = 1;
    for (double a : expected) scale = std::max(scale, std::abs(a));
    for (int i = 0; i < mjcf.model->nu(); ++i) {
      EXPECT_NEAR(udot[i], expected[i], 1e-10 * scale) << GetParam() << " trial " << trial << " speed "
                                                        << mjcf.model->uNames()[i];
      worst = std::max(worst, std::abs(udot[i] - expected[i]) / scale);
    }
    // Body poses: every MuJoCo body with joints is the Lockstep body of the same name.
    for (int b = 1; b < m->nbody; ++b) {
      const char* name = mj_id2name(m.get(), mjOBJ_BODY, b);
      if (!name || m->body_jntnum[b] == 0) continue;
      const Transformd X = batch.bodyPose(0, mjcf.model->bodyIndex(name));
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(X.p[k], d->xpos[3 * b + k], 1e-12) << name;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(X.R.R.m[r][c], d->xmat[9 * b + 3 * r + c], 1e-12) << name;
    }
  }
  std::printf("%s: largest |udot - qacc| / max(1, |qacc|) over 20 states: %.2e\n", GetParam(), worst);
}

// MuJoCo's view of a world as the engine computes it (physics/mujoco_bodies.h): qpos, qvel and every
// MuJoCo body's xpos, xmat, xipos, subtree_com, cinert and cvel, against mj_forward's at random
// states (cfrc_ext comes from Lockstep's contacts, not MuJoCo's: TasksContactForcesCarryTheWeight).
TEST_P(GymnasiumRobot, MujocosQuantitiesEqualMujocosAtRandomStates) {
  const std::string path = kMjcf + GetParam();
  const MjcfImport mjcf = importCompliant(path);
  auto m = loadMujoco(path);
  ASSERT_TRUE(m);
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  const Model& model = *mjcf.model;
  ASSERT_EQ(static_cast<int>(model.mujocoBodies().size()), m->nbody);
  Batch<double> batch(mjcf.model, 3, Backend::Cpu);
  std::mt19937_64 rng(20261127);
  auto values = [&](const char* field, std::int64_t w) {
    const FieldView v = batch.field(field, MemorySpace::Host);
    std::vector<double> out(static_cast<std::size_t>(v.components));
    for (std::int64_t c = 0; c < v.components; ++c)
      out[c] = static_cast<const double*>(v.data)[w * v.worldStride + c * v.componentStride];
    return out;
  };
  for (int trial = 0; trial < 20; ++trial) {
    randomState(m.get(), d.get(), rng);
    mj_forward(m.get(), d.get());
    const std::int64_t w = trial % 3;  // any world of the batch
    batch.setQ(w, qFromMujoco(mjcf, d->qpos));
    batch.setU(w, uFromMujoco(mjcf, d->qpos, d->qvel));
    batch.evaluate();
    const std::vector<double> qpos = values("mujocoQpos", w), qvel = values("mujocoQvel", w);
    ASSERT_EQ(static_cast<int>(qpos.size()), m->nq);
    ASSERT_EQ(static_cast<int>(qvel.size()), m->nv);
    for (int i = 0; i < m->nq; ++i) EXPECT_NEAR(qpos[i], d->qpos[i], 1e-14) << GetParam() << " qpos " << i;
    for (int i = 0; i < m->nv; ++i) EXPECT_NEAR(qvel[i], d->qvel[i], 1e-13) << GetParam() << " qvel " << i;
    const std::vector<double> body = values("mujocoBody", w);
    ASSERT_EQ(static_cast<int>(body.size()), 40 * m->nbody);
    for (int b = 0; b < m->nbody; ++b) {
      const double* x = body.data() + 40 * b;
      const std::string what = std::string(GetParam()) + " body " + std::to_string(b) + " trial " + std::to_string(trial);
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(x[k], d->xpos[3 * b + k], 1e-12) << what << " xpos";
        EXPECT_NEAR(x[12 + k], d->xipos[3 * b + k], 1e-12) << what << " xipos";
        EXPECT_NEAR(x[15 + k], d->subtree_com[3 * b + k], 1e-12) << what << " subtree_com";
      }
      for (int k = 0; k < 9; ++k) EXPECT_NEAR(x[3 + k], d->xmat[9 * b + k], 1e-12) << what << " xmat";
      double scale = 1;
      for (int k = 0; k < 10; ++k) scale = std::max(scale, std::abs(d->cinert[10 * b + k]));
      for (int k = 0; k < 10; ++k) EXPECT_NEAR(x[18 + k], d->cinert[10 * b + k], 1e-12 * scale) << what << " cinert " << k;
      scale = 1;
      for (int k = 0; k < 6; ++k) scale = std::max(scale, std::abs(d->cvel[6 * b + k]));
      for (int k = 0; k < 6; ++k) EXPECT_NEAR(x[28 + k], d->cvel[6 * b + k], 1e-12 * scale) << what << " cvel " << k;
    }
  }
  // Every world of the batch computes them alike: the world of the last trial, alone.
  Batch<double> alone(mjcf.model, 1, Backend::Cpu);
  alone.setQ(0, batch.q((20 - 1) % 3));
  alone.setU(0, batch.u((20 - 1) % 3));
  alone.evaluate();
  const FieldView a = alone.field("mujocoBody", MemorySpace::Host);
  const std::vector<double> inBatch = values("mujocoBody", (20 - 1) % 3);
  for (std::int64_t c = 0; c < a.components; ++c)
    EXPECT_EQ(static_cast<const double*>(a.data)[c * a.componentStride], inBatch[c]) << "component " << c;
}

INSTANTIATE_TEST_SUITE_P(Mjcf, GymnasiumRobot,
                         ::testing::Values("ant.xml", "half_cheetah.xml", "hopper.xml", "walker2d_v5.xml",
                                           "humanoid.xml", "inverted_double_pendulum.xml", "reacher.xml",
                                           "pusher_v5.xml"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string s = info.param;
                           s = s.substr(0, s.find('.'));
                           std::string out;
                           for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return out;
                         });

TEST(Mjcf, CoordinatesRoundTripThroughMujocos) {
  const MjcfImport mjcf = importCompliant(kMjcf + "humanoid.xml");
  auto m = loadMujoco(kMjcf + "humanoid.xml");
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  std::mt19937_64 rng(7);
  randomState(m.get(), d.get(), rng);
  const std::vector<double> q = qFromMujoco(mjcf, d->qpos), u = uFromMujoco(mjcf, d->qpos, d->qvel);
  const std::vector<double> qpos = qToMujoco(mjcf, q), qvel = uToMujoco(mjcf, q, u);
  for (int i = 0; i < m->nq; ++i) EXPECT_DOUBLE_EQ(qpos[i], d->qpos[i]);
  for (int i = 0; i < m->nv; ++i) EXPECT_NEAR(qvel[i], d->qvel[i], 1e-15 * 4);
  // The free joint: Lockstep's q is the quaternion, then the position.
  EXPECT_EQ(mjcf.model->qNames()[0], "root.qw");
  EXPECT_EQ(mjcf.model->qNames()[4], "root.x");
}

TEST(Mjcf, SeveralJointsInOneBodyBecomeAChainOfMasslessFrames) {
  const MjcfImport mjcf = importCompliant(kMjcf + "hopper.xml");
  const Model& model = *mjcf.model;
  // Hopper's torso has rootx, rootz, rooty: two massless frames, then the torso.
  EXPECT_EQ(model.body(0).name, "torso.rootx");
  EXPECT_EQ(model.body(0).mobilizer, MobilizerType::Slider);
  EXPECT_EQ(model.body(0).mass.mass, 0);
  EXPECT_EQ(model.body(1).name, "torso.rootz");
  EXPECT_EQ(model.body(2).name, "torso");
  EXPECT_EQ(model.body(2).mobilizer, MobilizerType::Pin);
  EXPECT_GT(model.body(2).mass.mass, 0);
  EXPECT_EQ(model.qNames()[0], "rootx");
  // Armature and damping from the file's defaults; a motor's gear and control range.
  EXPECT_DOUBLE_EQ(model.armature()[3], 1.0);
  EXPECT_DOUBLE_EQ(model.damping()[3], 1.0);
  ASSERT_EQ(model.actuators().size(), 3u);
  EXPECT_DOUBLE_EQ(model.actuators()[0].desc.gear, 200);
  EXPECT_DOUBLE_EQ(model.actuators()[0].desc.controlLower, -1);
  EXPECT_DOUBLE_EQ(model.actuators()[0].desc.controlUpper, 1);
  // Limited hinges carry stops at their range.
  EXPECT_FALSE(model.stops().empty());
  EXPECT_EQ(mjcf.timestep, 0.002);
}

TEST(Mjcf, ContactsFromCapsulesSpheresAndTheGroundPlane) {
  const MjcfImport mjcf = importCompliant(kMjcf + "ant.xml");
  const Model& model = *mjcf.model;
  // The torso sphere and the 12 leg capsules (two end spheres each) touch the floor.
  int spheres = 0;
  for (const GroundContact& c : model.groundContacts()) {
    ++spheres;
    EXPECT_NEAR(c.desc.planeNormal[2], 1, 1e-15);
    EXPECT_GT(c.desc.material.staticFriction, 0);
  }
  EXPECT_EQ(spheres, 1 + 12 * 2);
  EXPECT_EQ(model.groundContacts()[0].desc.name, "torso_geom");
}

// A capsule's end spheres, a box's corner spheres: the static penetration x of one sphere of radius R
// carrying weight W solves W = (4/3) k sqrt(R k) (x^2 + cf)^(3/4) (1 + tanh(bd x)) / 2 (at rest the
// Hunt-Crossley factor is 1 and its tanh 1 to round-off).
double staticPenetration(double W, double R, const GroundMaterial& p) {
  const double k = 0.5 * std::pow(p.stiffness, 2.0 / 3.0);
  auto force = [&](double x) {
    return 4.0 / 3.0 * k * std::sqrt(R * k) * std::pow(x * x + p.cf, 0.75) * (0.5 + 0.5 * std::tanh(p.bd * x));
  };
  double lo = -R, hi = R;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (force(mid) < W ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::string floorWorld(const std::string& body, const std::string& option = "") {
  return "<mujoco model=\"t\"><option timestep=\"0.0005\" " + option + "/><worldbody>"
         "<geom name=\"floor\" type=\"plane\" size=\"10 10 0.1\" friction=\"1 0.005 0.0001\"/>" + body +
         "</worldbody></mujoco>";
}

// Runs `seconds` of RK4 steps of world 0 and returns the batch.
void settle(Batch<double>& batch, double dt, double seconds) {
  batch.step(dt, static_cast<int>(std::lround(seconds / dt)), Integrator::RK4);
  ASSERT_EQ(batch.status(0), 0);
}

TEST(MjcfContact, ACapsuleRestsAtTheLawsStaticPenetration) {
  const std::string path = writeTemporary("capsule.xml", floorWorld(
      "<body name=\"c\" pos=\"0 0 0.1\"><freejoint name=\"root\"/>"
      "<geom name=\"capsule\" type=\"capsule\" fromto=\"0 -0.2 0 0 0.2 0\" size=\"0.05\" mass=\"2\"/></body>"));
  const Scene scene = loadSceneFile(path, compliantScene());
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  settle(batch, 2e-4, 3.0);
  const GroundMaterial& p = scene.model->groundContacts()[0].desc.material;
  const double expected = staticPenetration(2 * 9.81 / 2, 0.05, p);
  ASSERT_EQ(scene.model->groundContacts().size(), 2u);  // the two end spheres
  const GroundContactQuantities<double> end0 = batch.groundContact(0, 0), end1 = batch.groundContact(0, 1);
  EXPECT_NEAR(end0.penetration, expected, 1e-6 * expected);
  EXPECT_NEAR(end1.penetration, expected, 1e-6 * expected);
  EXPECT_NEAR(end0.normalForce + end1.normalForce, 2 * 9.81, 1e-6);  // the normal forces carry the weight
}

TEST(MjcfContact, ABoxRestsOnItsFourLowerCorners) {
  const std::string path = writeTemporary("box.xml", floorWorld(
      "<body name=\"b\" pos=\"0 0 0.2\"><freejoint name=\"root\"/>"
      "<geom name=\"box\" type=\"box\" size=\"0.1 0.15 0.05\" mass=\"4\"/></body>"));
  const Scene scene = loadSceneFile(path, compliantScene());
  ASSERT_EQ(scene.model->groundContacts().size(), 8u);
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  settle(batch, 2e-4, 3.0);
  const double r = 0.1 * 0.05;  // the corner spheres' radius: a tenth of the smallest half-size
  EXPECT_DOUBLE_EQ(scene.model->groundContacts()[0].desc.radius, r);
  const double expected = staticPenetration(4 * 9.81 / 4, r, scene.model->groundContacts()[0].desc.material);
  double carried = 0;
  for (int c = 0; c < 8; ++c) {
    const GroundContactQuantities<double> corner = batch.groundContact(0, c);
    const bool lower = (c & 4) == 0;  // the corners at -z
    if (lower) EXPECT_NEAR(corner.penetration, expected, 1e-6 * expected) << "corner " << c;
    else EXPECT_NEAR(corner.penetration, expected - 2 * (0.05 - r), 1e-6 * expected) << "corner " << c;
    carried += corner.normalForce;
  }
  EXPECT_NEAR(carried, 4 * 9.81, 1e-6);
  EXPECT_NEAR(batch.bodyPose(0, 0).p[2], 0.05 - expected, 1e-6 * expected);  // the centre, a half-height up
}

// The bodyContact observation: the ground contacts' total force on each body, about its origin.
// Resting, it carries the weight and has no moment about the centre of mass; at any state it is
// the sum of the contacts' forces and their moments.
TEST(MjcfContact, BodyContactIsTheSumOfTheGroundForcesAboutTheBodysOrigin) {
  const std::string path = writeTemporary("box2.xml", floorWorld(
      "<body name=\"b\" pos=\"0 0 0.2\"><freejoint name=\"root\"/>"
      "<geom name=\"box\" type=\"box\" size=\"0.1 0.15 0.05\" pos=\"0.02 0 0\" mass=\"4\"/></body>"));
  const Scene scene = loadSceneFile(path, compliantScene());
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  settle(batch, 2e-4, 3.0);
  auto bodyContact = [&] {
    const FieldView v = batch.field("bodyContact", MemorySpace::Host);
    std::vector<double> F(6);
    for (int k = 0; k < 6; ++k) F[k] = static_cast<const double*>(v.data)[k * v.componentStride];
    return F;
  };
  std::vector<double> F = bodyContact();
  EXPECT_NEAR(F[5], 4 * 9.81, 1e-6);
  EXPECT_NEAR(F[3], 0, 1e-6);
  EXPECT_NEAR(F[4], 0, 1e-6);
  // About the centre of mass (0.02 along the body's x from Bo): no moment at rest.
  const Transformd X = batch.bodyPose(0, 0);
  const Vec3d com = X.R * Vec3d{{0.02, 0, 0}};
  const Vec3d m = Vec3d{{F[0], F[1], F[2]}} - cross(com, Vec3d{{F[3], F[4], F[5]}});
  EXPECT_NEAR(norm(m), 0, 1e-6);
  // Tipped and moving: the sum over the corners, from the contacts' own getters.
  std::vector<double> u = batch.u(0);
  u[0] = 2.0;
  u[3] = 0.3;
  batch.setU(0, u);
  batch.step(2e-4, 50, Integrator::RK4);
  batch.evaluate();
  F = bodyContact();
  Vec3d fSum = Vec3d::zero(), mSum = Vec3d::zero();
  for (int c = 0; c < 8; ++c) {
    const GroundContactQuantities<double> q = batch.groundContact(0, c);
    fSum = fSum + q.forceOnSphere;
    mSum = mSum + cross(q.p_GP - batch.bodyPose(0, 0).p, q.forceOnSphere);
  }
  ASSERT_GT(norm(fSum), 1.0);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(F[k], mSum[k], 1e-12 * (1 + norm(mSum))) << k;
    EXPECT_NEAR(F[3 + k], fSum[k], 1e-12 * (1 + norm(fSum))) << k;
  }
}

// MuJoCo's cfrc_ext as the engine gives it (mujocoBody): a box resting on the floor, with a welded
// child, carries its weight on its own MuJoCo body (the child's contacts are the carrier's), with no
// moment about the subtree's centre of mass; the world body gets none.
TEST(MjcfContact, CfrcExtOfARestingBodyCarriesItsWeightAboutTheCentreOfMass) {
  const std::string path = writeTemporary("box3.xml", floorWorld(
      "<body name=\"b\" pos=\"0 0 0.2\"><freejoint name=\"root\"/>"
      "<geom name=\"box\" type=\"box\" size=\"0.1 0.15 0.05\" pos=\"0.02 0 0\" mass=\"4\"/>"
      "<body name=\"cap\" pos=\"0 0 0.1\"><geom type=\"sphere\" size=\"0.02\" mass=\"1\"/></body></body>"));
  const Scene scene = loadSceneFile(path, compliantScene());
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  settle(batch, 2e-4, 3.0);
  const FieldView v = batch.field("mujocoBody", MemorySpace::Host);
  ASSERT_EQ(v.components, 40 * 3);  // world, b, cap
  auto at = [&](int body, int part) { return static_cast<const double*>(v.data)[(40 * body + part) * v.componentStride]; };
  EXPECT_NEAR(at(1, 34 + 5), 5 * 9.81, 1e-6);  // cfrc_ext force z of b: the weight of b and cap
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(at(1, 34 + k), 0, 1e-6) << k;  // no moment about c, no sideways force
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(at(0, 34 + k), 0.0) << k;
    EXPECT_EQ(at(2, 34 + k), 0.0) << k;  // welded into b: its contacts are b's
  }
  // cvel and cinert about c, the subtree's centre of mass: at rest, no velocity; b's first moment
  // m (xipos - c) and cap's sum to zero.
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(at(1, 28 + k), 0, 1e-6) << k;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(at(1, 18 + 6 + k) + at(2, 18 + 6 + k), 0, 1e-12) << k;
  EXPECT_EQ(at(1, 18 + 9), 4.0);
  EXPECT_EQ(at(2, 18 + 9), 1.0);
}

TEST(MjcfContact, ACapsuleRollsDownASlopeAtTheRollingAcceleration) {
  // The slope: gravity tilted by 10 degrees about y; the capsule lies along y and rolls along x.
  const double theta = 10 * M_PI / 180, g = 9.81;
  char option[128];
  std::snprintf(option, sizeof option, "gravity=\"%.17g 0 %.17g\"", g * std::sin(theta), -g * std::cos(theta));
  const std::string path = writeTemporary("roll.xml", floorWorld(
      "<body name=\"c\" pos=\"0 0 0.0495\"><freejoint name=\"root\"/>"
      "<geom name=\"capsule\" type=\"capsule\" fromto=\"0 -0.2 0 0 0.2 0\" size=\"0.05\" mass=\"2\"/></body>", option));
  const Scene scene = loadSceneFile(path, compliantScene());
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  // a = g sin(theta) / (1 + I / (m r^2)), I the capsule's moment about its own axis.
  const Body& body = scene.model->body(0);
  const double I = body.mass.inertia.yy, m = body.mass.mass, r = 0.05;
  const double expected = g * std::sin(theta) / (1 + I / (m * r * r));
  const double dt = 2e-4;
  settle(batch, dt, 0.5);
  const double v0 = batch.u(0)[3];
  settle(batch, dt, 0.5);
  const double v1 = batch.u(0)[3];
  EXPECT_NEAR((v1 - v0) / 0.5, expected, 2e-3 * expected);
  // Rolling, not sliding: the centre's speed is r times the spin.
  EXPECT_NEAR(batch.u(0)[3], r * batch.u(0)[1], 0.02);
}

TEST(MjcfContact, EnergyBalancesAlongRk4WithEveryContactOn) {
  const Scene scene = loadSceneFile(kMjcf + "ant.xml", compliantScene());
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  std::vector<double> u = batch.u(0);
  u[3] = 0.5;  // a push along x, and a spin
  u[2] = 1.0;
  batch.setU(0, u);
  auto total = [&] {
    batch.evaluate();
    const std::vector<double> z = batch.z(0);
    double s = batch.kineticEnergy(0) + batch.potentialEnergy(0);
    for (double x : z) s += x;
    return s;
  };
  const double before = total();
  batch.step(1e-4, 5000, Integrator::RK4);  // half a second: the ant lands and its legs touch
  ASSERT_EQ(batch.status(0), 0);
  const double after = total();
  double absorbed = 0;
  for (int i = 0; i < static_cast<int>(scene.model->groundContacts().size()); ++i)
    absorbed += std::abs(batch.z(0)[scene.model->groundContactZ(i)]);
  EXPECT_GT(absorbed, 1e-3);  // the contacts did work
  EXPECT_NEAR(after, before, 1e-6 * std::max(1.0, std::abs(before)));
}

TEST(Mjcf, AnAxisOppositeToTheMobilizersTurnsItHalfAboutAFixedAxis) {
  // A hinge about -z turns its Pin half about y (x onto -x), a slide along -x its Slider half about
  // z: the frames the MJCF import has always made (the URDF import turns a Pin about x instead,
  // test_urdf.cpp).
  const std::string path = writeTemporary("opposite_axes.xml",
      "<mujoco><worldbody><body name=\"h\"><joint name=\"hinge\" type=\"hinge\" axis=\"0 0 -1\"/>"
      "<geom size=\"0.1\"/></body><body name=\"s\"><joint name=\"slide\" type=\"slide\" axis=\"-1 0 0\"/>"
      "<geom size=\"0.1\"/></body></worldbody></mujoco>");
  const MjcfImport mjcf = importCompliant(path);
  const Vec3d x = Vec3d::unit(0), y = Vec3d::unit(1), z = Vec3d::unit(2);
  auto image = [&](const char* body, const Vec3d& v) {
    return Transformd{mjcf.model->body(mjcf.model->bodyIndex(body)).X_BM.R, Vec3d::zero()} * v;
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(image("h", x)[i], -x[i], 1e-15);
    EXPECT_NEAR(image("h", y)[i], y[i], 1e-15);
    EXPECT_NEAR(image("h", z)[i], -z[i], 1e-15);
    EXPECT_NEAR(image("s", x)[i], -x[i], 1e-15);
    EXPECT_NEAR(image("s", y)[i], -y[i], 1e-15);
    EXPECT_NEAR(image("s", z)[i], z[i], 1e-15);
  }
}

TEST(Mjcf, RefusesWhatLockstepCannotModelNamingTheElement) {
  const std::string eq = writeTemporary("eq.xml",
      "<mujoco><worldbody><body name=\"a\"><joint name=\"j\" type=\"hinge\"/><geom size=\"0.1\"/></body>"
      "<body name=\"b\"><joint name=\"k\" type=\"hinge\"/><geom size=\"0.1\"/></body></worldbody>"
      "<equality><joint name=\"couple\" joint1=\"j\" joint2=\"k\"/></equality></mujoco>");
  EXPECT_NE(messageOf<InputError>([&] { importCompliant(eq); }).find("equality 'couple'"), std::string::npos);
  const std::string general = writeTemporary("general.xml",
      "<mujoco><worldbody><body name=\"a\"><joint name=\"j\" type=\"hinge\"/><geom size=\"0.1\"/></body>"
      "</worldbody><actuator><general name=\"muscle\" joint=\"j\" biastype=\"affine\" biasprm=\"1 2 3\"/>"
      "</actuator></mujoco>");
  EXPECT_NE(messageOf<InputError>([&] { importCompliant(general); }).find("actuator 'muscle'"), std::string::npos);
  const std::string broken = writeTemporary("broken.xml", "<mujoco><worldbody><body></mujoco>");
  const std::string message = messageOf<InputError>([&] { importCompliant(broken); });
  EXPECT_NE(message.find(broken), std::string::npos) << message;
  EXPECT_NE(message.find("MuJoCo's compiler"), std::string::npos) << message;
  EXPECT_NE(messageOf<InputError>([&] { importCompliant("/nonexistent/robot.xml"); }).find("cannot open"),
            std::string::npos);
}

TEST(Mjcf, WarnsOnceListingWhatItIgnores) {
  // Humanoid's two fixed tendons exert nothing (no limits, stiffness or damping): no warning.
  EXPECT_TRUE(importCompliant(kMjcf + "humanoid.xml").warnings.empty());
  const std::string path = writeTemporary("ignored.xml",
      "<mujoco><worldbody><body name=\"a\"><joint name=\"j\" type=\"hinge\" frictionloss=\"0.1\"/>"
      "<geom size=\"0.1\"/><body name=\"b\"><joint name=\"k\" type=\"hinge\" frictionloss=\"0.2\"/>"
      "<geom size=\"0.1\"/></body></body></worldbody><tendon><fixed name=\"t\" limited=\"true\" range=\"-1 1\">"
      "<joint joint=\"j\" coef=\"1\"/><joint joint=\"k\" coef=\"1\"/></fixed></tendon></mujoco>");
  const std::vector<std::string> warnings = importCompliant(path).warnings;
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("frictionloss: j, k"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("tendon limits: t"), std::string::npos) << warnings[1];
}

TEST(Mjcf, ScenesTakeAnMjcfRobotWithTheirOwnContactMaterial) {
  const std::string path = writeTemporary("ant_scene.json",
      "{\"mjcf\": {\"path\": \"" + kMjcf + "ant.xml\", \"contact_law\": \"compliant\", \"contact\": {\"stiffness\": 2e6, \"dissipation\": 3},"
      " \"stops\": {\"stiffness\": 500}, \"geoms\": {\"torso_geom\": {\"friction\": 0.3}}},"
      " \"simulation\": {\"worlds\": 4}}");
  const Scene scene = loadSceneFile(path);
  const Model& model = *scene.model;
  EXPECT_EQ(model.groundContacts()[0].desc.material.staticFriction, 0.3);
  EXPECT_EQ(model.groundContacts()[1].desc.material.stiffness, 2e6);
  EXPECT_EQ(model.groundContacts()[1].desc.material.dissipation, 3);
  EXPECT_EQ(model.stops()[0].desc.stiffness, 500);
  EXPECT_EQ(scene.simulation.dt, 0.01);  // MuJoCo's timestep
  EXPECT_EQ(scene.q0[6], 0.75);          // MuJoCo's qpos0: the torso's height
  const std::string bad = writeTemporary("bad_scene.json",
      "{\"mjcf\": {\"path\": \"" + kMjcf + "ant.xml\", \"geoms\": {\"nosuch\": {\"friction\": 1}}}}");
  EXPECT_NE(messageOf<InputError>([&] { loadSceneFile(bad); }).find("no geom named 'nosuch'"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::test
