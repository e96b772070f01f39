// Scene files: the shipped scenes against the models built in code, the chain-7 check value, the
// format's features (poses, inertias, initial states, per-world overrides, URDF includes), and one
// clear error for each kind of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/urdf.h"
#include "bad_inputs.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

const std::string kRoot = LOCKSTEP_SOURCE_DIR;

Scene load(const std::string& relative) { return loadSceneFile(kRoot + "/" + relative); }
Scene parse(const std::string& json) { return parseScene(json, "inline.json", kRoot + "/scenes"); }

// The message of the InputError that `f` throws, or a failure when it throws none.
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError was thrown";
  return "";
}

void expectSameTransform(const Transformd& a, const Transformd& b, double tol, const std::string& what) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(a.p[i], b.p[i], tol) << what;
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(a.R(i, j), b.R(i, j), tol) << what;
  }
}

void expectSameMass(const MassProperties& a, const MassProperties& b, double tol, const std::string& what) {
  EXPECT_NEAR(a.mass, b.mass, tol) << what;
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a.com[i], b.com[i], tol) << what;
  const SymMat33d& I = a.inertia;
  const SymMat33d& J = b.inertia;
  for (auto [x, y] : {std::pair{I.xx, J.xx}, {I.yy, J.yy}, {I.zz, J.zz}, {I.xy, J.xy}, {I.xz, J.xz}, {I.yz, J.yz}})
    EXPECT_NEAR(x, y, tol) << what;
}

// Two models with the same bodies, parameters, coordinates and elements, to `tol` (0: exactly).
void expectSameModel(const Model& a, const Model& b, double tol) {
  ASSERT_EQ(a.numBodies(), b.numBodies());
  ASSERT_EQ(a.nq(), b.nq());
  ASSERT_EQ(a.nu(), b.nu());
  ASSERT_EQ(a.nz(), b.nz());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.gravity()[i], b.gravity()[i]);
  for (int k = 0; k < a.numBodies(); ++k) {
    const Body &x = a.body(k), &y = b.body(k);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.jointName, y.jointName);
    EXPECT_EQ(x.mobilizer, y.mobilizer);
    EXPECT_EQ(x.parent, y.parent);
    expectSameTransform(x.X_PF, y.X_PF, tol, x.name + " X_PF");
    expectSameTransform(x.X_BM, y.X_BM, tol, x.name + " X_BM");
    expectSameMass(x.mass, y.mass, tol, x.name);
  }
  EXPECT_EQ(a.damping(), b.damping());
  EXPECT_EQ(a.effortLimit(), b.effortLimit());
  EXPECT_EQ(a.qNames(), b.qNames());
  EXPECT_EQ(a.uNames(), b.uNames());
  EXPECT_EQ(a.zNames(), b.zNames());
  ASSERT_EQ(a.bushings().size(), b.bushings().size());
  for (std::size_t i = 0; i < a.bushings().size(); ++i) {
    const LinearBushing &x = a.bushings()[i], &y = b.bushings()[i];
    EXPECT_EQ(x.desc.name, y.desc.name);
    EXPECT_EQ(x.body1, y.body1);
    EXPECT_EQ(x.body2, y.body2);
    expectSameTransform(x.desc.X_B1F, y.desc.X_B1F, tol, x.desc.name);
    expectSameTransform(x.desc.X_B2M, y.desc.X_B2M, tol, x.desc.name);
    EXPECT_EQ(x.desc.stiffness, y.desc.stiffness);
    EXPECT_EQ(x.desc.damping, y.desc.damping);
  }
  ASSERT_EQ(a.springs().size(), b.springs().size());
  for (std::size_t i = 0; i < a.springs().size(); ++i) {
    const SpringDamper &x = a.springs()[i], &y = b.springs()[i];
    EXPECT_EQ(x.desc.name, y.desc.name);
    EXPECT_EQ(x.bodyA, y.bodyA);
    EXPECT_EQ(x.bodyB, y.bodyB);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(x.desc.p_AP[k], y.desc.p_AP[k]);
      EXPECT_EQ(x.desc.p_BQ[k], y.desc.p_BQ[k]);
    }
    EXPECT_EQ(x.desc.freeLength, y.desc.freeLength);
    EXPECT_EQ(x.desc.stiffness, y.desc.stiffness);
    EXPECT_EQ(x.desc.damping, y.desc.damping);
  }
  ASSERT_EQ(a.contacts().size(), b.contacts().size());
  for (std::size_t i = 0; i < a.contacts().size(); ++i) {
    const SphereContact &x = a.contacts()[i], &y = b.contacts()[i];
    EXPECT_EQ(x.desc.name, y.desc.name);
    EXPECT_EQ(x.bodyF, y.bodyF);
    EXPECT_EQ(x.bodyB, y.bodyB);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(x.desc.centerOnF[k], y.desc.centerOnF[k]);
      EXPECT_EQ(x.desc.centerOnB[k], y.desc.centerOnB[k]);
    }
    EXPECT_EQ(x.desc.radiusOnF, y.desc.radiusOnF);
    EXPECT_EQ(x.desc.radiusOnB, y.desc.radiusOnB);
    EXPECT_EQ(x.desc.enforceRolling, y.desc.enforceRolling);
    EXPECT_EQ(x.desc.enabledByDefault, y.desc.enabledByDefault);
  }
}

// ---- the shipped scenes ------------------------------------------------------------------------

TEST(SceneFile, ConstantForcesOnBodiesAndLinks) {
  const Scene s = parse(R"({
    "bodies": [{"name": "cart", "mobilizer": "slider", "mass": 2, "inertia": [1, 1, 1, 0, 0, 0]}],
    "constant_forces": [{"name": "push", "body": "cart", "station": [0, 0.5, 0], "force": [3, 0, 0]}]
  })");
  ASSERT_EQ(s.model->constantForces().size(), 1u);
  const ConstantForce& e = s.model->constantForces()[0];
  EXPECT_EQ(e.desc.name, "push");
  EXPECT_EQ(e.body, 0);
  EXPECT_EQ(e.desc.station[1], 0.5);
  Batch<double> batch(s.model, 1);
  batch.evaluate();
  EXPECT_NEAR(batch.udot(0)[0], 1.5, 1e-14);
  EXPECT_NE(errorOf([] {
              parse(R"({
                "bodies": [{"name": "cart", "mobilizer": "slider", "mass": 2, "inertia": [1, 1, 1, 0, 0, 0]}],
                "constant_forces": [{"body": "cart", "force": [3, 0]}]})");
            }).find("constant_forces[0].force"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parse(R"({
                "bodies": [{"name": "cart", "mobilizer": "slider", "mass": 2, "inertia": [1, 1, 1, 0, 0, 0]}],
                "constant_forces": [{"body": "ground", "force": [3, 0, 0]}]})");
            }).find("constant force 'force0': body: must be a body, not ground"),
            std::string::npos);
}

TEST(ShippedScenes, EveryOneLoadsAndEvaluates) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/scenes")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const Scene scene = loadSceneFile(entry.path().string());
    ++count;
    EXPECT_EQ(scene.name, entry.path().stem().string());
    EXPECT_FALSE(scene.description.empty());
    ASSERT_EQ(static_cast<int>(scene.q0.size()), scene.model->nq());
    ASSERT_EQ(static_cast<int>(scene.u0.size()), scene.model->nu());
    Batch<double> batch(scene.model, 2);
    applyScene(scene, batch);
    batch.evaluate();
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(batch.status(w), kStatusOk) << describeStatus(batch.status(w));
      for (double a : batch.udot(w)) EXPECT_TRUE(std::isfinite(a));
    }
  }
  EXPECT_EQ(count, 19);  // docs/scenes.md: chain-7, chain-32, chain-7-seed, two grids, four robots, panda-reach,
                        // solo12-stand, the seven MJCF robots, and balls-in-a-box
}

TEST(ShippedScenes, ChainsAreTheModelsOfMakeChain) {
  for (int n : {7, 32}) {
    const Scene scene = load("scenes/chain-" + std::to_string(n) + ".json");
    expectSameModel(*scene.model, *makeChain(n), 0.0);
    EXPECT_EQ(scene.q0, chainInitialQ(n));
    EXPECT_EQ(scene.u0, std::vector<double>(n, 0.0));
    EXPECT_EQ(scene.simulation.dt, 1e-3);
    EXPECT_EQ(scene.simulation.integrator, Integrator::RK4);
  }
}

TEST(ShippedScenes, Chain7CheckValue) {
  // docs/scenes.md: summing udot[0] over q0 = 0.3 + 1e-9 k, k = 0..199999 (other q = 0.3, u = 0) gives
  // 2.11259e+06 in Simbody 3.7 and MuJoCo 2.2.2.
  const Scene scene = load("scenes/chain-7.json");
  const int n = 200000;
  Batch<double> batch(scene.model, n);
  applyScene(scene, batch);
  EXPECT_NEAR(chain7CheckSum(batch, scene.q0), 2.11259e+06, 0.000005e+06);
}

TEST(ShippedScenes, Chain7SeedIsTheModelOfMakeChain7Seed) {
  const Scene scene = load("scenes/chain-7-seed.json");
  expectSameModel(*scene.model, *makeChain7Seed(), 0.0);
  EXPECT_EQ(scene.q0, chainInitialQ(7));
}

TEST(ShippedScenes, FreeBushingGridsAreTheModelsOfMakeFreeBushingGrid) {
  for (int n : {4, 16}) {
    SCOPED_TRACE(n);
    const Scene scene = load("scenes/free-bushing-grid-" + std::to_string(n) + ".json");
    // The file gives the inertia about the center of mass computed by scenes/generate.py; the
    // builder computes it in C++: they agree to rounding.
    expectSameModel(*scene.model, *makeFreeBushingGrid(n), 1e-15);
    const std::vector<double> q = freeBushingGridInitialQ(n);
    ASSERT_EQ(scene.q0.size(), q.size());
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(scene.q0[i], q[i], 1e-15) << i;
  }
}

TEST(ShippedScenes, BuiltinSceneIsTheShippedChain7Seed) {
  std::ifstream in(kRoot + "/scenes/chain-7-seed.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(builtinSceneJson(), text.str());
  const Scene scene = loadBuiltinScene();
  EXPECT_EQ(scene.name, "chain-7-seed");
  expectSameModel(*scene.model, *load("scenes/chain-7-seed.json").model, 0.0);
  EXPECT_EQ(scene.simulation.worlds, 4096);
}

TEST(ShippedScenes, RobotScenesUseTheRobotsInModels) {
  const Scene solo = load("scenes/solo12.json");
  EXPECT_EQ(solo.model->body(0).mobilizer, MobilizerType::Free);
  EXPECT_EQ(solo.model->nq(), 19);
  EXPECT_EQ(solo.q0[6], 0.35);  // the root starts 0.35 m up
  const Scene panda = load("scenes/panda.json");
  EXPECT_EQ(panda.model->body(0).mobilizer, MobilizerType::Weld);
  EXPECT_EQ(panda.model->nq(), 9);
}

// ---- format features ---------------------------------------------------------------------------

// A one-body scene whose body has the given extra keys.
std::string oneBody(const std::string& extra) {
  return R"({"bodies": [{"name": "b", "mobilizer": "free", "mass": 2, "inertia": [1, 1, 1, 0, 0, 0])" +
         (extra.empty() ? "" : ", " + extra) + "}]}";
}

TEST(SceneFormat, QuaternionAndXyzAnglesDescribeTheSameRotation) {
  const Vec3d angles = {{0.3, -0.7, 1.1}};
  double q[4];
  Rotationd::bodyFixedXYZ(angles).toQuaternion(q);
  std::ostringstream a, b;
  a.precision(17);
  b.precision(17);
  a << R"("X_PF": {"position": [1, 2, 3], "xyz_angles": [)" << angles[0] << ", " << angles[1] << ", " << angles[2] << "]}";
  b << R"("X_PF": {"position": [1, 2, 3], "quaternion": [)" << q[0] << ", " << q[1] << ", " << q[2] << ", " << q[3] << "]}";
  const Transformd Xa = parse(oneBody(a.str())).model->body(0).X_PF;
  const Transformd Xb = parse(oneBody(b.str())).model->body(0).X_PF;
  expectSameTransform(Xa, Xb, 1e-15, "pose");
  EXPECT_EQ(Xa.p[2], 3.0);
}

TEST(SceneFormat, NearlyUnitQuaternionsAreNormalized) {
  const Transformd X = parse(oneBody(R"("X_BM": {"quaternion": [1.0000005, 0, 0, 0]})")).model->body(0).X_BM;
  EXPECT_EQ(X.R(0, 0), 1.0);
  EXPECT_NE(errorOf([] { parse(oneBody(R"("X_BM": {"quaternion": [1.00001, 0, 0, 0]})")); }).find("unit quaternion"),
            std::string::npos);
}

TEST(SceneFormat, InertiaFormsAreEquivalent) {
  auto inertia = [](const std::string& form) {
    return parseScene(R"({"bodies": [{"name": "b", "mobilizer": "pin", "mass": 1, "inertia": )" + form + "}]}",
                      "inline.json", ".")
        .model->body(0)
        .mass.inertia;
  };
  for (const std::string& form : {std::string(R"({"xx": 2, "yy": 3, "zz": 4, "xy": 0.1, "xz": 0.2, "yz": 0.3})"),
                                  std::string("[[2, 0.1, 0.2], [0.1, 3, 0.3], [0.2, 0.3, 4]]")}) {
    const SymMat33d I = inertia(form), J = inertia("[2, 3, 4, 0.1, 0.2, 0.3]");
    EXPECT_EQ(I.xx, J.xx);
    EXPECT_EQ(I.yy, J.yy);
    EXPECT_EQ(I.zz, J.zz);
    EXPECT_EQ(I.xy, J.xy);
    EXPECT_EQ(I.xz, J.xz);
    EXPECT_EQ(I.yz, J.yz);
  }
  EXPECT_NE(errorOf([&] { inertia("[[2, 0.1, 0.2], [0.2, 3, 0.3], [0.2, 0.3, 4]]"); }).find("must be symmetric"),
            std::string::npos);
}

TEST(SceneFormat, InitialStateJointsOverrideTheFullVector) {
  const Scene s = parse(R"({
    "bodies": [
      {"name": "a", "mobilizer": "pin", "mass": 1, "inertia": [1, 1, 1, 0, 0, 0]},
      {"name": "b", "parent": "a", "mobilizer": "free", "joint": "j", "mass": 1, "inertia": [1, 1, 1, 0, 0, 0]}
    ],
    "initial_state": {"q": [0.1, 1, 0, 0, 0, 4, 5, 6], "u": [1, 2, 3, 4, 5, 6, 7],
                      "joints": {"a": {"q": 0.5}, "j": {"u": [0, 0, 0, 9, 9, 9]}}}})");
  EXPECT_EQ(s.q0, (std::vector<double>{0.5, 1, 0, 0, 0, 4, 5, 6}));
  EXPECT_EQ(s.u0, (std::vector<double>{1, 0, 0, 0, 9, 9, 9}));
  EXPECT_EQ(s.model->qNames()[1], "j.qw");
}

TEST(SceneFormat, DampingAndEffortLimitsAsScalarsOrPerSpeed) {
  const Scene s = parse(oneBody(R"("damping": 0.5, "effort_limit": [1, 2, 3, 4, 5, 6])"));
  EXPECT_EQ(s.model->damping(), std::vector<double>(6, 0.5));
  EXPECT_EQ(s.model->effortLimit(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(SceneFormat, SimulationDefaults) {
  const Scene s = parse(R"({"bodies": [], "simulation": {"dt": 0.002, "steps": 7, "integrator": "euler", "worlds": 33}})");
  EXPECT_EQ(s.simulation.dt, 0.002);
  EXPECT_EQ(s.simulation.steps, 7);
  EXPECT_EQ(s.simulation.integrator, Integrator::SemiImplicitEuler);
  EXPECT_EQ(s.simulation.worlds, 33);
}

TEST(SceneFormat, PerWorldOverridesReachTheBatch) {
  std::ifstream in(kRoot + "/scenes/chain-7-seed.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  // Append a per_world list to chain-7-seed.
  json = json.substr(0, json.rfind('}')) + R"(,
    "per_world": [
      {"worlds": [1, 2], "gravity": [0, -1.62, 0], "mass_properties": {"link3": {"mass": 2.5}},
       "damping": {"joint2": 0.25}, "initial_state": {"joints": {"joint1": {"q": -0.4, "u": 1.5}}},
       "linear_bushings": {"bushing": {"stiffness": [1, 2, 3, 4, 5, 6], "frame_on_body2": {"position": [0, -0.4, 0]}}},
       "spring_dampers": {"spring": {"free_length": 0.9, "p_AP": [0.6, 0, 0]}},
       "sphere_contacts": {"contact": {"radius_on_B": 0.15, "enabled": false}}},
      {"worlds": 2, "gravity": [0, 0, -9.81]}
    ]})";
  const Scene s = parseScene(json, "inline.json", ".");
  Batch<double> batch(s.model, 3);
  applyScene(s, batch);
  const Model& m = *s.model;
  // World 0 keeps every default.
  EXPECT_EQ(batch.gravity(0)[1], -9.81);
  EXPECT_EQ(batch.massProperties(0, 2).mass, 1.0);
  EXPECT_EQ(batch.damping(0), m.damping());
  EXPECT_EQ(batch.q(0), s.q0);
  EXPECT_EQ(batch.bushingStiffness(0, 0), m.bushings()[0].desc.stiffness);
  EXPECT_TRUE(batch.contactEnabled(0, 0));
  for (int w : {1, 2}) {
    SCOPED_TRACE(w);
    const MassProperties mp = batch.massProperties(w, 2);
    EXPECT_EQ(mp.mass, 2.5);
    EXPECT_EQ(mp.com[1], -0.25);  // the other fields keep the model's values
    EXPECT_EQ(mp.inertia.yy, 0.005);
    EXPECT_EQ(batch.damping(w)[1], 0.25);
    EXPECT_EQ(batch.damping(w)[0], 0.0);
    EXPECT_EQ(batch.q(w)[0], -0.4);
    EXPECT_EQ(batch.q(w)[1], 0.3);
    EXPECT_EQ(batch.u(w)[0], 1.5);
    EXPECT_EQ(batch.bushingStiffness(w, 0), (std::array<double, 6>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(batch.bushingDamping(w, 0), m.bushings()[0].desc.damping);
    EXPECT_EQ(batch.bushingFrameOnBody2(w, 0).p[1], -0.4);
    EXPECT_EQ(batch.bushingFrameOnBody1(w, 0).p[0], 0.1);
    EXPECT_EQ(batch.springParameters(w, 0), (std::array<double, 3>{0.9, 200, 2}));
    EXPECT_EQ(batch.springPoints(w, 0)[0][0], 0.6);
    EXPECT_EQ(batch.springPoints(w, 0)[1][1], -0.5);
    EXPECT_EQ(batch.sphereRadii(w, 0), (std::array<double, 2>{0.2, 0.15}));
    EXPECT_FALSE(batch.contactEnabled(w, 0));
  }
  // A later entry wins.
  EXPECT_EQ(batch.gravity(1)[1], -1.62);
  EXPECT_EQ(batch.gravity(2)[2], -9.81);
  EXPECT_EQ(batch.gravity(2)[1], 0.0);

  Batch<double> small(s.model, 2);
  const std::string message = errorOf([&] { applyScene(s, small); });
  EXPECT_NE(message.find("per_world[0].worlds: world 2 is outside the batch of 2 worlds; run at least 3 worlds"),
            std::string::npos)
      << message;
}

TEST(SceneFormat, UrdfLinksWeldedIntoBodiesCanBeReferenced) {
  // In the UR5, tool0 is welded into wrist_3_link by a fixed joint: a body hung from tool0 and a
  // spring attached to it land on wrist_3_link, at tool0's frame.
  const Scene s = parse(R"({
    "urdf": {"path": "../models/ur5_robot.urdf"},
    "bodies": [{"name": "payload", "parent": "tool0", "mobilizer": "weld", "X_PF": {"position": [0, 0, 0.1]},
                "mass": 0.5, "inertia": [0.001, 0.001, 0.001, 0, 0, 0]}],
    "spring_dampers": [{"bodyA": "ground", "p_AP": [0, 0, 1], "bodyB": "tool0", "p_BQ": [0, 0, 0.2],
                        "free_length": 0.5, "stiffness": 10}]})");
  const UrdfImport ur5 = importUrdfFile(kRoot + "/models/ur5_robot.urdf");
  const UrdfLinkPlacement tool0 = ur5.links.at("tool0");
  EXPECT_EQ(tool0.body, "wrist_3_link");
  const Model& m = *s.model;
  const Body& payload = m.body(m.bodyIndex("payload"));
  EXPECT_EQ(m.body(payload.parent).name, "wrist_3_link");
  expectSameTransform(payload.X_PF, tool0.X_BL * Transformd::translation({{0, 0, 0.1}}), 1e-15, "payload X_PF");
  const Vec3d p_BQ = tool0.X_BL * Vec3d{{0, 0, 0.2}};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.springs()[0].desc.p_BQ[k], p_BQ[k], 1e-15);
  EXPECT_EQ(m.gravity()[2], -9.81);  // URDF gravity unless the scene gives its own
  // Overriding the mass of a welded link names the body to override instead.
  const std::string message = errorOf([] {
    parse(R"({"urdf": {"path": "../models/ur5_robot.urdf"},
              "per_world": [{"worlds": 0, "mass_properties": {"tool0": {"mass": 1}}}]})");
  });
  EXPECT_NE(message.find("per_world[0].mass_properties.tool0: URDF link 'tool0' was welded into body 'wrist_3_link'"),
            std::string::npos)
      << message;
}

TEST(SceneFormat, GroundSectionMakesGroundContacts) {
  // A URDF with a leg whose foot link is welded into it (and carries a collision sphere) and a
  // scene that takes that sphere from the URDF, adds one of its own and overrides the friction.
  const std::string urdf = testing::TempDir() + "/ground_leg.urdf";
  {
    std::ofstream out(urdf);
    out << R"(<robot name="leg">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="shin"><inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="foot">
    <collision><origin xyz="0 0 -0.01"/><geometry><sphere radius="0.02"/></geometry></collision>
    <collision><origin xyz="0.03 0 -0.01"/><geometry><sphere radius="0.015"/></geometry></collision>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
  <joint name="knee" type="revolute"><parent link="base"/><child link="shin"/><axis xyz="0 1 0"/><origin xyz="0 0 -0.2"/>
    <limit effort="10" lower="-2" upper="2" velocity="10"/></joint>
  <joint name="ankle" type="fixed"><parent link="shin"/><child link="foot"/><origin xyz="0 0 -0.2"/></joint>
</robot>)";
  }
  const Scene s = parse(R"({"urdf": {"path": ")" + urdf + R"(", "root_joint": "free"},
    "ground": {"normal": [0, 0, 2], "point": [0, 0, -0.5], "stiffness": 1e6, "dissipation": 2, "static_friction": 0.9,
               "dynamic_friction": 0.6, "transition_velocity": 0.02,
               "contact_spheres": [{"body": "foot", "from_urdf": true},
                                   {"name": "heel", "body": "foot", "center": [-0.03, 0, 0], "radius": 0.01,
                                    "static_friction": 0.7, "cf": 1e-6, "bd": 200, "bv": 40}]}})");
  const Model& m = *s.model;
  ASSERT_EQ(m.groundContacts().size(), 3u);
  const GroundContact& a = m.groundContacts()[0];
  const GroundContact& b = m.groundContacts()[1];
  const GroundContact& heel = m.groundContacts()[2];
  EXPECT_EQ(a.desc.name, "foot");
  EXPECT_EQ(b.desc.name, "foot_1");
  EXPECT_EQ(m.body(a.body).name, "shin");  // the foot is welded into the shin, 0.2 below its origin
  for (auto [c, expected] : {std::pair{&a, Vec3d{{0, 0, -0.21}}}, {&b, Vec3d{{0.03, 0, -0.21}}}, {&heel, Vec3d{{-0.03, 0, -0.2}}}})
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(c->desc.center[k], expected[k], 1e-15);
  EXPECT_EQ(a.desc.radius, 0.02);
  EXPECT_EQ(b.desc.radius, 0.015);
  EXPECT_EQ(heel.desc.radius, 0.01);
  EXPECT_EQ(a.desc.planeNormal[2], 1.0);  // [0, 0, 2], held unit by the model
  EXPECT_EQ(a.desc.planePoint[2], -0.5);
  EXPECT_EQ(a.desc.material.stiffness, 1e6);
  EXPECT_EQ(a.desc.material.staticFriction, 0.9);
  EXPECT_EQ(a.desc.material.cf, 1e-5);  // Simbody's defaults
  EXPECT_EQ(a.desc.material.bd, 300);
  EXPECT_EQ(a.desc.material.bv, 50);
  EXPECT_EQ(heel.desc.material.staticFriction, 0.7);
  EXPECT_EQ(heel.desc.material.dynamicFriction, 0.6);
  EXPECT_EQ(heel.desc.material.cf, 1e-6);
  EXPECT_EQ(heel.desc.material.bd, 200);
  EXPECT_EQ(heel.desc.material.bv, 40);
  // One absorbed-energy state per contact, after the others.
  EXPECT_EQ(m.zNames().back(), "heel.absorbed");
  EXPECT_EQ(m.nz(), 2 + 3);  // dissipated, actuation, then one per ground contact
  // Refused: a link without URDF spheres, and a name used twice.
  EXPECT_NE(errorOf([&] {
              parse(R"({"urdf": {"path": ")" + urdf + R"("}, "ground": {"contact_spheres": [{"body": "shin", "from_urdf": true}]}})");
            }).find("ground.contact_spheres[0].body: the URDF has no <collision><sphere> on link 'shin'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              parse(R"({"urdf": {"path": ")" + urdf + R"("}, "ground": {"contact_spheres": [
                {"body": "shin", "radius": 0.1}, {"body": "shin", "radius": 0.2}]}})");
            }).find("ground.contact_spheres[1]: the ground contact name 'shin' is already used"),
            std::string::npos);
}

// "integrator": "implicit": a robot's ground contacts and joint stops become the compliant law's
// constraints of the implicit step (docs/contact-laws.md), its PD actuators taken implicitly too, and
// it steps at 10 ms: the Ant (MJCF under the compliant law) lands and settles, Solo12 (URDF) holds its
// crouch on its PD actuators (their gains in the solve's metric); no world is flagged in 3 s.
TEST(SceneFormat, ImplicitIntegratorStepsRobotsAtLargeSteps) {
  struct Case {
    const char* file;
    const char* simulation;  // the file's, replaced
    const char* implicit;    // by this
    double dt, lowest, highest;  // the root's height at the end
  };
  for (const Case& c :
       {Case{"scenes/solo12-stand.json", R"("dt": 0.0005, "steps": 10000, "integrator": "rk4")",
             R"("dt": 0.01, "steps": 300, "integrator": "implicit")", 0.01, 0.1, 0.3},
        Case{"scenes/ant.json", R"("dt": 0.001, "steps": 3000, "integrator": "rk4")",
             R"("dt": 0.01, "steps": 300, "integrator": "implicit")", 0.01, 0.2, 1.0}}) {
    SCOPED_TRACE(c.file);
    std::ifstream in(kRoot + "/" + c.file);
    std::stringstream text;
    text << in.rdbuf();
    std::string json = text.str();
    const std::size_t at = json.find(c.simulation);
    ASSERT_NE(at, std::string::npos);
    json.replace(at, std::string(c.simulation).size(), c.implicit);
    const Scene s = parse(json);
    const Model& m = *s.model;
    EXPECT_TRUE(m.groundContacts().empty());
    EXPECT_TRUE(m.stops().empty());
    ASSERT_FALSE(m.planeContacts().empty());
    EXPECT_FALSE(m.softLimits().empty());
    for (const PlaneContact& p : m.planeContacts()) {
      EXPECT_EQ(p.desc.law, kLawCompliant);
      EXPECT_EQ(p.desc.timestep, c.dt);
    }
    EXPECT_EQ(s.simulation.integrator, Integrator::SemiImplicitEuler);
    EXPECT_EQ(s.simulation.dt, c.dt);
    Batch<double> batch(s.model, 3);
    applyScene(s, batch);
    batch.step(c.dt, static_cast<int>(std::lround(3.0 / c.dt)), Integrator::SemiImplicitEuler);
    batch.evaluate();
    for (int w = 0; w < 3; ++w) {
      ASSERT_EQ(batch.status(w), kStatusOk) << describeStatus(batch.status(w));
      const std::vector<double> q = batch.q(w), u = batch.u(w);
      const double speed = std::sqrt(u[3] * u[3] + u[4] * u[4] + u[5] * u[5]);
      std::printf("%s at %g s, 3 s: root at %.4g m, moving at %.3g m/s\n", c.file, c.dt, q[6], speed);
      EXPECT_GT(q[6], c.lowest);
      EXPECT_LT(q[6], c.highest);
      EXPECT_LT(speed, 1e-4);
    }
  }
}

// ---- joint stops and actuators -------------------------------------------------------------------

// panda-reach: every world's arm reaches its own random target (the home pose +/- 0.5 rad, within
// the URDF limits) from the home pose; after 2 s (the scene's 2000 steps) each joint is within
// 0.02 rad of its target, against gravity (a PD's steady error is the gravity torque / kp, about
// 0.01 rad here), and KE + PE + dissipated energy - actuator work has held to 1e-4 relative.
TEST(ShippedScenes, PandaReachTracksPerWorldRandomTargets) {
  const Scene scene = load("scenes/panda-reach.json");
  const Model& m = *scene.model;
  ASSERT_EQ(m.actuators().size(), 7u);
  ASSERT_EQ(m.stops().size(), 9u);  // 7 arm joints and 2 fingers, from the URDF
  const int n = 64;
  Batch<double> batch(scene.model, n);
  applyScene(scene, batch);
  const std::vector<double> home = batch.q(0);
  for (int w = 0; w < n; ++w)
    for (const Actuator& a : m.actuators()) {
      const JointStop& stop = *m.stopOnSpeed(a.u);
      const double target = batch.targetPositions(w)[a.u];
      EXPECT_GT(target, stop.desc.lower);
      EXPECT_LT(target, stop.desc.upper);
      EXPECT_LE(std::abs(target - home[a.q]), 0.5 + 1e-3);
    }
  EXPECT_NE(batch.targetPositions(0), batch.targetPositions(1));
  auto balance = [&](int w) {
    double e = batch.kineticEnergy(w) + batch.potentialEnergy(w);
    for (double z : batch.z(w)) e += z;
    return e;
  };
  batch.evaluate();
  std::vector<double> e0(n), start(n, 0.0);
  for (int w = 0; w < n; ++w) {
    e0[w] = balance(w);
    for (const Actuator& a : m.actuators())
      start[w] = std::max(start[w], std::abs(batch.q(w)[a.q] - batch.targetPositions(w)[a.u]));
  }
  batch.step(scene.simulation.dt, scene.simulation.steps, scene.simulation.integrator);
  batch.evaluate();
  double worst = 0, drift = 0, farthest = 0;
  for (int w = 0; w < n; ++w) {
    ASSERT_EQ(batch.status(w), kStatusOk) << describeStatus(batch.status(w));
    for (const Actuator& a : m.actuators())
      worst = std::max(worst, std::abs(batch.q(w)[a.q] - batch.targetPositions(w)[a.u]));
    drift = std::max(drift, std::abs(balance(w) - e0[w]) / std::abs(e0[w]));
    farthest = std::max(farthest, start[w]);
  }
  std::printf("panda-reach: largest |q - target| %.3g rad at the start, %.3g rad after %d steps over %d worlds; "
              "energy balance drift %.2g relative\n", farthest, worst, scene.simulation.steps, n, drift);
  EXPECT_GT(farthest, 0.4);  // the worlds start far from their targets: the tracking is the PD's work
  EXPECT_LT(worst, 0.02);
  EXPECT_LT(drift, 1e-4);
  // In float (8 worlds a pack), the same worlds end where the double ones do, to float's rounding.
  Batch<float> single(scene.model, n);
  applyScene(scene, single);
  single.step(scene.simulation.dt, scene.simulation.steps, scene.simulation.integrator);
  for (int w = 0; w < n; ++w) {
    ASSERT_EQ(single.status(w), kStatusOk) << describeStatus(single.status(w));
    for (const Actuator& a : m.actuators()) EXPECT_NEAR(single.q(w)[a.q], batch.q(w)[a.q], 1e-3) << w;
  }
}

TEST(SceneFormat, LimitsFromTheUrdfAndListedStopsAndActuatorTargets) {
  const std::string urdf = R"("urdf": {"path": "../models/panda.urdf"})";
  // Without "limits", no stops; with it, the URDF's limits take the default k and d.
  EXPECT_TRUE(parse("{" + urdf + "}").model->stops().empty());
  const Scene s = parse("{" + urdf + R"(, "limits": {"stiffness": 300, "dissipation": 0.5,
      "stops": [{"coordinate": "panda_joint4", "lower": -2, "stiffness": 50}]},
      "actuators": [{"coordinates": "panda_joint1", "mode": "velocity", "kd": 2, "target_velocity": 0.25},
                    {"coordinates": ["panda_joint2"], "kp": 10, "kd": 1, "target": 0.4}]})");
  const Model& m = *s.model;
  ASSERT_EQ(m.stops().size(), 9u);
  const JointStop& j1 = *m.stopOnSpeed(0);
  EXPECT_EQ(j1.desc.lower, -2.8973);
  EXPECT_EQ(j1.desc.upper, 2.8973);
  EXPECT_EQ(j1.desc.stiffness, 300);
  EXPECT_EQ(j1.desc.dissipation, 0.5);
  const JointStop& j4 = *m.stopOnSpeed(3);  // listed: replaces the URDF's
  EXPECT_EQ(j4.desc.lower, -2);
  EXPECT_EQ(j4.desc.upper, std::numeric_limits<double>::infinity());
  EXPECT_EQ(j4.desc.stiffness, 50);
  EXPECT_EQ(j4.desc.dissipation, 0.5);
  ASSERT_EQ(m.actuators().size(), 2u);
  EXPECT_EQ(m.actuators()[0].desc.mode, ActuatorMode::Velocity);
  EXPECT_EQ(m.actuators()[1].desc.mode, ActuatorMode::Position);
  Batch<double> batch(s.model, 3);
  applyScene(s, batch);
  EXPECT_EQ(batch.targetVelocities(2)[0], 0.25);
  EXPECT_EQ(batch.targetPositions(2)[1], 0.4);
  EXPECT_EQ(batch.parameter(1, "actuator.panda_joint1.mode"), 2.0);
  EXPECT_EQ(batch.parameter(1, "stop.panda_joint4.stiffness"), 50.0);
  // Per-world overrides: a stop's bounds and an actuator's gains and targets in some worlds.
  const Scene pw = parse("{" + urdf + R"(, "limits": {"stiffness": 300, "dissipation": 0.5},
      "actuators": [{"coordinates": "panda_joint1", "kp": 10, "kd": 1, "target": 0.4}],
      "per_world": [{"worlds": [1], "limits": {"panda_joint1": {"upper": 1.5}},
                     "actuators": {"panda_joint1": {"kp": 20, "target": -0.3}, "panda_joint2": {"mode": "velocity", "kd": 3}}}]})");
  Batch<double> pwBatch(pw.model, 2);
  applyScene(pw, pwBatch);
  EXPECT_EQ(pwBatch.jointStop(1, 0), (std::array<double, 4>{-2.8973, 1.5, 300, 0.5}));
  EXPECT_EQ(pwBatch.jointStop(0, 0), (std::array<double, 4>{-2.8973, 2.8973, 300, 0.5}));
  EXPECT_EQ(pwBatch.actuatorGains(1, 0), (std::array<double, 3>{1, 20, 1}));
  EXPECT_EQ(pwBatch.actuatorGains(1, 1), (std::array<double, 3>{2, 0, 3}));
  EXPECT_EQ(pwBatch.actuatorGains(0, 1), (std::array<double, 3>{0, 0, 0}));
  EXPECT_EQ(pwBatch.targetPositions(1)[0], -0.3);
  EXPECT_EQ(pwBatch.targetPositions(0)[0], 0.4);
  EXPECT_NE(errorOf([&] {
              parse("{" + urdf + R"(, "limits": {"stiffness": 300, "dissipation": 0.5},
                  "per_world": [{"worlds": 0, "limits": {"panda_joint1": {"lower": 3, "upper": 2}}}]})");
            }).find("inline.json: per_world[0].limits.panda_joint1: lower: must be <= upper (got 3 > 2)"),
            std::string::npos);
  // A stop added per world on a coordinate without one takes the scene's default stiffness and
  // dissipation, as the scene's listed stops do.
  const Scene added = parse("{" + urdf + R"(, "limits": {"from_urdf": false, "stiffness": 300, "dissipation": 0.5,
      "stops": [{"coordinate": "panda_joint1", "upper": 1}]},
      "per_world": [{"worlds": [1], "limits": {"panda_joint2": {"upper": 0.5}}}]})");
  Batch<double> addedBatch(added.model, 2);
  applyScene(added, addedBatch);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(addedBatch.jointStop(1, 1), (std::array<double, 4>{-inf, 0.5, 300, 0.5}));
  EXPECT_EQ(addedBatch.jointStop(0, 1), (std::array<double, 4>{-inf, inf, 0, 0}));
  EXPECT_NE(errorOf([&] {
              parse("{" + urdf + R"(, "per_world": [{"worlds": 0, "actuators": {"panda_joint1": {"kp": 3}}}]})");
            }).find("inline.json: per_world[0].actuators.panda_joint1: the scene declares no joint stop and no actuator"),
            std::string::npos);
  // "from_urdf": false drops the URDF's stops; without k and d they are an error.
  EXPECT_TRUE(parse("{" + urdf + R"(, "limits": {"from_urdf": false}})").model->stops().empty());
  EXPECT_NE(errorOf([&] { parse("{" + urdf + R"(, "limits": {}})"); })
                .find("inline.json: limits: the URDF's joint limits become stops: give their \"stiffness\""),
            std::string::npos);
  EXPECT_NE(errorOf([&] { parse("{" + urdf + R"(, "actuators": [{"coordinates": "panda_joint1", "kd": 1}]})"); })
                .find("inline.json: actuators[0]: missing key 'kp'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              parse("{" + urdf + R"(, "actuators": [{"coordinates": "panda_joint1", "kp": 1, "kd": 1,
                                   "target": {"uniform": "limits"}}]})");
            }).find("actuators[0].target: coordinate 'panda_joint1' has no joint stop with finite bounds"),
            std::string::npos);
}

// A second check of the scene's default stop stiffness and dissipation: a listed stop without its
// own takes "limits"' k and d, and its force at one state is the law's -k x (1 + d u) with them.
TEST(SceneFormat, DefaultStopStiffnessAndDissipationSetTheForceOfAListedStop) {
  const double k = 250, d = 0.4;
  const Scene scene = parseScene(R"({"bodies": [{"name": "arm", "mobilizer": "pin", "joint": "hinge", "mass": 1,
      "com": [0.2, 0, 0], "inertia": [0.01, 0.01, 0.01, 0, 0, 0]}],
      "limits": {"stiffness": 250, "dissipation": 0.4, "stops": [{"coordinate": "hinge", "upper": 0.3}]}})",
                                 "defaults.json", ".");
  Batch<double> batch(scene.model, 1);
  applyScene(scene, batch);
  batch.setQ(0, {0.35});
  batch.setU(0, {0.5});
  batch.evaluate();
  EXPECT_NEAR(batch.stopForces(0)[0], -k * 0.05 * (1 + d * 0.5), 1e-12 * k);
  EXPECT_EQ(batch.parameter(0, "stop.hinge.stiffness"), k);
  EXPECT_EQ(batch.parameter(0, "stop.hinge.dissipation"), d);
}

// ---- bad input: one clear message each ----------------------------------------------------------

TEST(BadScenes, EachIsRejectedWithOneClearMessage) {
  for (const BadScene& bad : kBadScenes) {
    const std::string path = kRoot + "/tests/data/bad/" + bad.file;
    const std::string message = errorOf([&] { loadSceneFile(path); });
    EXPECT_EQ(message.rfind(path + ": " + bad.message, 0), 0u) << "got: " << message << "\nexpected: " << path << ": " << bad.message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Every file of tests/data/bad is in the table.
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/tests/data/bad")) files += entry.is_regular_file();
  EXPECT_EQ(files, kBadScenes.size());
}

TEST(BadScenes, RepairInertiaOptionLoadsTheTriangleViolation) {
  SceneOptions options;
  options.repairInertia = true;
  const Scene s = loadSceneFile(kRoot + "/tests/data/bad/bad_urdf_include.json", options);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("link 'arm': inertia repaired"), std::string::npos) << s.warnings[0];
  EXPECT_NO_THROW(validateMassProperties(s.model->body(1).mass, "repaired"));
}

}  // namespace
}  // namespace lockstep::test
