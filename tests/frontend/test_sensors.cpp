// MJCF sensors (physics/sensors.h) against MuJoCo's own sensordata at the same state: joint
// positions and speeds, frame positions, orientations and velocities of sites, bodies and geoms,
// velocimeter, gyro, accelerometer, and the force and torque a parent exerts on a subtree, at
// random states of a free-floating arm with a hinge and a slide (MuJoCo's contacts off). The touch
// sensor against the weight a resting ball puts on the ground. Sensors Lockstep does not compute
// are kept with dimension 0 and named in the import's warnings.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/quantities.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/scene_description.h"
#include "mjcf_compliant.h"

namespace lockstep::test {
namespace {

const char* kArm = R"(<mujoco model="sensors">
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size=".2 .1 .05" mass="3"/>
      <site name="imu" pos=".1 .02 .03" euler="10 20 30"/>
      <body name="arm" pos=".2 0 0" euler="0 15 5">
        <joint name="shoulder" type="hinge" axis="0 1 0.2" damping="0.3" armature="0.01"/>
        <geom name="upper" type="capsule" fromto="0 0 0 .3 0 .05" size=".03" mass="1"/>
        <site name="elbow" pos=".15 .01 0" euler="30 -10 45"/>
        <body name="hand" pos=".3 0 .05">
          <joint name="extend" type="slide" axis="1 0.1 0" damping="0.2"/>
          <geom type="sphere" size=".04" mass=".5" pos=".01 .02 0"/>
          <site name="tip" pos=".05 0 0" type="sphere" size=".05" euler="0 0 60"/>
        </body>
      </body>
      <body name="welded" pos="0 .15 0">
        <geom type="sphere" size=".03" mass=".2"/>
        <site name="on_welded"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder" gear="2"/></actuator>
  <sensor>
    <jointpos name="q_shoulder" joint="shoulder"/>
    <jointvel name="u_shoulder" joint="shoulder"/>
    <jointpos name="q_extend" joint="extend"/>
    <jointvel name="u_extend" joint="extend"/>
    <framepos name="imu_pos" objtype="site" objname="imu"/>
    <framequat name="imu_quat" objtype="site" objname="imu"/>
    <framepos name="arm_com" objtype="body" objname="arm"/>
    <framequat name="arm_inertia_quat" objtype="body" objname="arm"/>
    <framepos name="arm_pos" objtype="xbody" objname="arm"/>
    <framequat name="arm_quat" objtype="xbody" objname="arm"/>
    <framepos name="upper_pos" objtype="geom" objname="upper"/>
    <framelinvel name="tip_v" objtype="site" objname="tip"/>
    <frameangvel name="tip_w" objtype="site" objname="tip"/>
    <velocimeter name="imu_v" site="imu"/>
    <gyro name="imu_w" site="imu"/>
    <accelerometer name="imu_a" site="imu"/>
    <accelerometer name="tip_a" site="tip"/>
    <force name="elbow_f" site="elbow"/>
    <torque name="elbow_t" site="elbow"/>
    <force name="tip_f" site="tip"/>
    <torque name="tip_t" site="tip"/>
    <force name="imu_f" site="imu"/>
    <force name="welded_f" site="on_welded"/>
    <subtreecom name="com" body="torso"/>
    <subtreelinvel name="arm_vcom" body="arm"/>
    <subtreeangmom name="L" body="torso"/>
    <subtreecom name="welded_com" body="welded"/>
  </sensor>
</mujoco>)";

std::string writeModel(const std::string& name, const std::string& xml) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << xml;
  return path;
}

TEST(Sensors, EqualMujocosSensordataAtRandomStates) {
  const std::string path = writeModel("sensors_arm.xml", kArm);
  const MjcfImport mjcf = importCompliant(path);
  const Model& model = *mjcf.model;
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_TRUE(m) << error;
  m->opt.disableflags |= mjDSBL_CONTACT;
  mjData* d = mj_makeData(m);
  // Lockstep's contacts are kept away: its ground planes far below.
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  for (int i = 0; i < static_cast<int>(model.groundContacts().size()); ++i)
    batch.setGroundPlane(0, i, {{0, 0, 1}}, {{0, 0, -1e6}});
  // What is not computed is said once, and takes no values.
  bool welded = false, subtreeCom = false;
  for (const std::string& w : mjcf.warnings) {
    welded |= w.find("force or torque at a body without a joint of its own): welded_f") != std::string::npos;
    subtreeCom |= w.find("of a kind Lockstep does not compute): L") != std::string::npos &&
                  w.find("welded_com") == std::string::npos;
  }
  EXPECT_TRUE(welded && subtreeCom) << ::testing::PrintToString(mjcf.warnings);
  for (const char* name : {"welded_f", "L", "welded_com"}) EXPECT_GE(mj_name2id(m, mjOBJ_SENSOR, name), 0);
  const int computed = m->nsensor - 3;  // all but welded_f, L and welded_com
  ASSERT_EQ(static_cast<int>(model.sensors().size()), m->nsensor);

  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    for (int i = 0; i < 3; ++i) d->qpos[i] = uni(rng);
    double n = 0;
    for (int i = 3; i < 7; ++i) {
      d->qpos[i] = uni(rng);
      n += d->qpos[i] * d->qpos[i];
    }
    for (int i = 3; i < 7; ++i) d->qpos[i] /= std::sqrt(n);
    d->qpos[7] = 2 * uni(rng);
    d->qpos[8] = 0.2 * uni(rng);
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = 2 * uni(rng);
    d->ctrl[0] = uni(rng);
    mj_forward(m, d);
    batch.setQ(0, qFromMujoco(mjcf, d->qpos));
    batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
    std::vector<double> tau(model.nu(), 0.0);
    tau[mjcf.actuators[0].u] = d->ctrl[0];  // the motor's action: its control (the engine applies the gear)
    batch.setTau(0, tau);
    batch.evaluate();
    const std::vector<double> values = batch.sensors(0);
    ASSERT_EQ(static_cast<int>(values.size()), model.sensorDataSize());
    int checked = 0;
    for (const Sensor& s : model.sensors()) {
      if (!s.desc.dimension) continue;
      ++checked;
      const int id = mj_name2id(m, mjOBJ_SENSOR, s.desc.name.c_str());
      const double* expected = d->sensordata + m->sensor_adr[id];
      ASSERT_EQ(s.desc.dimension, m->sensor_dim[id]) << s.desc.name;
      double scale = 1, sign = 1;
      for (int k = 0; k < s.desc.dimension; ++k) scale = std::max(scale, std::abs(expected[k]));
      if (s.desc.type == "framequat" && values[s.offset] * expected[0] < 0) sign = -1;  // q and -q: one rotation
      for (int k = 0; k < s.desc.dimension; ++k) {
        EXPECT_NEAR(sign * values[s.offset + k], expected[k], 1e-10 * scale) << s.desc.name << " trial " << trial << " k " << k;
        worst = std::max(worst, std::abs(sign * values[s.offset + k] - expected[k]) / scale);
      }
    }
    EXPECT_EQ(checked, computed);
  }
  std::printf("largest |sensor - MuJoCo's| / max(1, |MuJoCo's|) over 20 states: %.2e\n", worst);

  // `lockstep info` lists them and their recordable columns.
  const std::string info = describeScene(loadSceneFile(path));
  EXPECT_NE(info.find("sensors       27 (67 values: record them as \"sensors\")"), std::string::npos) << info;
  EXPECT_NE(info.find("sensor 'welded_f': force of site 'on_welded' (not computed by Lockstep)"), std::string::npos);
  EXPECT_NE(info.find("sensor.<sensor>"), std::string::npos);

  // Recordable by name: the quantity "sensors", columns sensor.<name>[.<part>].
  const Quantity* q = findQuantity("sensors");
  ASSERT_TRUE(q);
  const std::vector<std::string> names = publicNames(model, q->info);
  ASSERT_EQ(static_cast<int>(names.size()), model.sensorDataSize());
  EXPECT_EQ(names[0], "sensor.q_shoulder");
  EXPECT_NE(std::find(names.begin(), names.end(), "sensor.imu_quat.w"), names.end());
  std::vector<std::vector<double>> sampled;
  sampleQuantities(batch, {q}, sampled);
  EXPECT_EQ(sampled[0], batch.sensors(0));
  // The whole mechanism's centre of mass and its velocity: MuJoCo's subtree of the world body.
  const Quantity* com = findQuantity("center_of_mass");
  ASSERT_TRUE(com);
  sampleQuantities(batch, {com}, sampled);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(sampled[0][k], d->subtree_com[k], 1e-12);
    EXPECT_NEAR(sampled[0][3 + k], d->subtree_linvel[k], 1e-12);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
}

// A ball at rest on the floor: the touch zone around its bottom carries its weight, one above it
// nothing.
TEST(Sensors, TouchCarriesTheWeightOfABallAtRest) {
  const std::string path = writeModel("sensors_touch.xml", R"(<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="ball" pos="0 0 .1">
      <freejoint/>
      <geom type="sphere" size=".1" mass="2"/>
      <site name="bottom" pos="0 0 -.1" type="box" size=".05 .05 .02"/>
      <site name="top" pos="0 0 .1" type="sphere" size=".05"/>
    </body>
  </worldbody>
  <sensor><touch name="bottom" site="bottom"/><touch name="top" site="top"/></sensor>
</mujoco>)");
  const Scene scene = loadSceneFile(path);
  Batch<double> batch(scene.model, 1, Backend::Cpu);
  applyScene(scene, batch);
  batch.step(1e-3, 3000, Integrator::RK4);
  batch.evaluate();
  const std::vector<double> touch = batch.sensors(0);
  ASSERT_EQ(touch.size(), 2u);
  EXPECT_NEAR(touch[0], 2 * 9.81, 1e-6 * 2 * 9.81);
  EXPECT_EQ(touch[1], 0.0);
}

}  // namespace
}  // namespace lockstep::test
