// Hostile and careless MJCF (issue 38): a scene that adds a body and its initial state to an MJCF
// robot, <option><flag .../> against MuJoCo's own accelerations with the flag, sensor cutoffs
// against MuJoCo's sensordata, names that are not UTF-8, a FIFO, files and counts over the limits,
// and messages that name the file and the attribute. Each test failed on 330fb27.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "mjcf_compliant.h"
#include "test_util.h"
#include "lockstep/engine/batch.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kSource = LOCKSTEP_SOURCE_DIR;

std::string writeModel(const std::string& name, const std::string& xml) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << xml;
  return path;
}

std::string importError(const std::string& path) { return messageOf<InputError, ModelError>([&] { importMjcfFile(path); }); }

// Item 1: an MJCF robot plus a scene body, with the initial state of that body's joint (written
// past the end of the robot's initial q: heap corruption; without it, no batch could be made).
TEST(MjcfHostile, SceneBodiesAddedToARobotHaveTheirState) {
  const std::string scene = R"({
    "mjcf": {"path": ")" + kSource + R"(/models/mjcf/reacher.xml"},
    "bodies": [{"name": "extra", "parent": "ground", "mobilizer": "pin", "mass": 1,
                "inertia": {"xx": 0.1, "yy": 0.1, "zz": 0.1}, "X_PF": {"position": [1, 0, 0]}}],
    "initial_state": {"joints": {"extra": {"q": 0.25}}}
  })";
  const Scene s = parseScene(scene, "robot_and_body.json", kSource + "/scenes");
  const Model& model = *s.model;
  ASSERT_EQ(static_cast<int>(s.q0.size()), model.nq());
  ASSERT_EQ(static_cast<int>(s.u0.size()), model.nu());
  const auto at = [&](const std::string& body) { return model.bodies()[model.bodyIndex(body)].qOffset; };
  EXPECT_EQ(s.q0[at("extra")], 0.25);
  EXPECT_NEAR(s.q0[at("target")], -0.1, 1e-15);  // reacher's qpos0 (ref) kept: target_y, the target body's joint
  Batch<double> batch(s.model, 2, Backend::Cpu);
  applyScene(s, batch);
  batch.evaluate();
  EXPECT_EQ(batch.q(1)[at("extra")], 0.25);
  // Without initial_state, too.
  const Scene plain = parseScene(R"({"mjcf": {"path": ")" + kSource + R"(/models/mjcf/reacher.xml"},
    "bodies": [{"name": "extra", "parent": "ground", "mobilizer": "pin", "mass": 1,
                "inertia": {"xx": 0.1, "yy": 0.1, "zz": 0.1}}]})",
                                 "plain.json", kSource + "/scenes");
  Batch<double> b2(plain.model, 1, Backend::Cpu);
  EXPECT_NO_THROW(applyScene(plain, b2));
}

// A hinge pendulum (limited, damped, sprung, driven by a motor with a control range) and a ball on
// a free joint sinking into the floor, with one <flag/>.
std::string flagged(const std::string& flags) {
  return R"(<mujoco model="flags"><option timestep="0.001"><flag )" + flags + R"(/></option>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="arm" pos="0 0 2">
      <joint name="hinge" type="hinge" axis="0 1 0" limited="true" range="-0.5 0.5" damping="0.7" stiffness="3" springref="0.1"/>
      <geom type="capsule" fromto="0 0 0 .5 0 0" size=".05" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="ball" pos="2 0 0.05">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1"/>
    </body>
  </worldbody>
  <actuator><motor joint="hinge" gear="3" ctrllimited="true" ctrlrange="-1 1"/></actuator>
</mujoco>)";
}

// Lockstep's udot and MuJoCo's qacc (in Lockstep's speeds) at one state: the hinge past its range and
// moving, the ball 5 cm into the floor, the motor's control `ctrl`.
void compare(const std::string& flags, double ctrl) {
  const std::string path = writeModel("flags.xml", flagged(flags));
  const MjcfImport mjcf = importCompliant(path);
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_TRUE(m) << error;
  mjData* d = mj_makeData(m);
  d->qpos[0] = 0.9;
  d->qvel[0] = -1.5;
  d->qpos[3] = 2;
  d->qpos[5] = 0.05;
  d->ctrl[0] = ctrl;
  mj_forward(m, d);
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  batch.setQ(0, qFromMujoco(mjcf, d->qpos));
  batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
  std::vector<double> tau(mjcf.model->nu(), 0.0);
  tau[mjcf.actuators[0].u] = ctrl;
  batch.setTau(0, tau);
  batch.evaluate();
  const std::vector<double> expected = uFromMujoco(mjcf, d->qpos, d->qacc), udot = batch.udot(0);
  for (std::size_t i = 0; i < udot.size(); ++i)
    EXPECT_NEAR(udot[i], expected[i], 1e-9 * std::max(1.0, std::abs(expected[i]))) << flags << " speed " << i;
  mj_deleteData(d);
  mj_deleteModel(m);
}

// Item 5: each flag of <option><flag/> that changes the dynamics is honoured (gravity 0, actuators
// without force, no joint stops, no ground contacts, no springs and dampers, controls not clamped);
// with the stops and contacts off, Lockstep's udot is MuJoCo's qacc.
TEST(MjcfHostile, OptionFlagsAreHonoured) {
  compare(R"(limit="disable" contact="disable")", 0.5);
  compare(R"(constraint="disable")", 0.5);
  compare(R"(limit="disable" contact="disable" gravity="disable")", 0.5);
  compare(R"(limit="disable" contact="disable" actuation="disable")", 0.5);
  compare(R"(limit="disable" contact="disable" passive="disable")", 0.5);
  compare(R"(limit="disable" contact="disable" clampctrl="disable")", 4);
  compare(R"(constraint="disable" gravity="disable" actuation="disable" passive="disable")", 0.8);
  // What is built: no stops, no ground contacts.
  const MjcfImport off = importCompliant(writeModel("off.xml", flagged(R"(limit="disable" contact="disable")")));
  EXPECT_TRUE(off.model->stops().empty());
  EXPECT_TRUE(off.model->groundContacts().empty());
  const MjcfImport on = importCompliant(writeModel("on.xml", flagged("")));
  EXPECT_EQ(on.model->stops().size(), 1u);
  EXPECT_FALSE(on.model->groundContacts().empty());
  // A flag Lockstep cannot honour is named.
  const std::string sensors = flagged(R"(sensor="disable")");
  const MjcfImport s = importCompliant(writeModel(
      "sensors_off.xml", sensors.substr(0, sensors.find("</mujoco>")) + "<sensor><jointpos joint=\"hinge\"/></sensor></mujoco>"));
  std::string all;
  for (const std::string& w : s.warnings) all += w + "\n";
  EXPECT_NE(all.find("option flags (Lockstep computes the sensors all the same): sensor=\"disable\""), std::string::npos) << all;
}

// Item 6: a sensor's cutoff clamps its values as MuJoCo's do: real values on both sides, touch
// from above only (MuJoCo's compiler refuses a cutoff on a quaternion).
TEST(MjcfHostile, SensorCutoffIsMujocos) {
  const std::string path = writeModel("cutoff.xml", R"(<mujoco model="cutoff">
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="arm" pos="0 0 2">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .5 0 0" size=".05" mass="1" contype="0" conaffinity="0"/>
      <site name="tip" pos=".5 0 0"/>
    </body>
    <body name="ball" pos="2 0 0.1">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1"/>
      <site name="zone" type="sphere" size="0.2"/>
    </body>
  </worldbody>
  <sensor>
    <jointpos name="q" joint="hinge" cutoff="0.1"/>
    <jointvel name="u" joint="hinge" cutoff="0.2"/>
    <framepos name="p" objtype="site" objname="tip" cutoff="1.5"/>
    <framequat name="quat" objtype="site" objname="tip"/>
    <frameangvel name="w" objtype="site" objname="tip" cutoff="0.3"/>
    <touch name="touch" site="zone" cutoff="2"/>
    <jointpos name="free" joint="hinge"/>
  </sensor>
</mujoco>)");
  const MjcfImport mjcf = importMjcfFile(path);
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_TRUE(m) << error;
  m->opt.disableflags |= mjDSBL_CONTACT;  // MuJoCo's touch reads its own contacts: compared below to the weight
  mjData* d = mj_makeData(m);
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  for (double angle : {0.5, -0.7, 0.05}) {
    d->qpos[0] = angle;
    d->qvel[0] = -4 * angle;
    mj_forward(m, d);
    batch.setQ(0, qFromMujoco(mjcf, d->qpos));
    batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
    batch.evaluate();
    const std::vector<double> v = batch.sensors(0);
    for (const Sensor& s : mjcf.model->sensors()) {
      if (s.desc.name == "touch") continue;
      const int id = mj_name2id(m, mjOBJ_SENSOR, s.desc.name.c_str());
      const double sign = s.desc.type == "framequat" && v[s.offset] * d->sensordata[m->sensor_adr[id]] < 0 ? -1 : 1;
      for (int k = 0; k < s.desc.dimension; ++k)
        EXPECT_NEAR(sign * v[s.offset + k], d->sensordata[m->sensor_adr[id] + k], 1e-12) << s.desc.name << " at " << angle;
    }
    EXPECT_NEAR(v[0], std::clamp(angle, -0.1, 0.1), 1e-15);
    EXPECT_EQ(v[mjcf.model->sensors().back().offset], angle);  // no cutoff
  }
  // The ball rests on the floor: its weight, 9.81 N, clamped to 2 (from above only).
  const Sensor& touch = mjcf.model->sensors()[5];
  ASSERT_EQ(touch.desc.name, "touch");
  EXPECT_EQ(touch.desc.cutoff, 2);
  const Scene scene = loadSceneFile(path);
  Batch<double> resting(scene.model, 1, Backend::Cpu);
  applyScene(scene, resting);
  resting.step(1e-3, 2000, Integrator::RK4);
  resting.evaluate();
  EXPECT_EQ(resting.sensors(0)[touch.offset], 2);
  mj_deleteData(d);
  mj_deleteModel(m);
}

// Item 10: names that are not UTF-8 are refused at import, naming the element (they failed at the
// end of a run, in the page's JSON, and as UnicodeDecodeError in Python).
TEST(MjcfHostile, NamesMustBeUtf8) {
  const std::string body = writeModel("latin1.xml", "<mujoco><worldbody><body name=\"caf\xe9\"><joint/><geom size=\".1\"/></body></worldbody></mujoco>");
  EXPECT_NE(importError(body).find("latin1.xml: body 'caf\\xe9': name: not UTF-8 (byte 4): names must be UTF-8 text"),
            std::string::npos) << importError(body);
  const std::string sensor = writeModel("latin1_sensor.xml",
      "<mujoco><worldbody><body name=\"b\"><joint name=\"j\"/><geom size=\".1\"/></body></worldbody>"
      "<sensor><jointpos name=\"\xff\xfe\" joint=\"j\"/></sensor></mujoco>");
  EXPECT_NE(importError(sensor).find("sensor '\\xff\\xfe': name: not UTF-8 (byte 1)"), std::string::npos) << importError(sensor);
  const std::string good = writeModel("utf8.xml", "<mujoco><worldbody><body name=\"caf\xc3\xa9\"><joint/><geom size=\".1\"/></body></worldbody></mujoco>");
  EXPECT_EQ(importError(good), "");
}

// Item 24: the file and the attribute are named.
TEST(MjcfHostile, MessagesNameTheFileAndTheAttribute) {
  const std::string quat = writeModel("zero_quat.xml", "<mujoco><worldbody><body name=\"b\" quat=\"0 0 0 0\"><joint/><geom size=\".1\"/></body></worldbody></mujoco>");
  EXPECT_NE(importError(quat).find("zero_quat.xml: body 'b': quat: 0 0 0 0 is no orientation"), std::string::npos) << importError(quat);
  const std::string geom = writeModel("zero_geom_quat.xml", "<mujoco><worldbody><body name=\"b\"><joint/><geom name=\"g\" size=\".1\" quat=\"0 0 0 0\"/></body></worldbody></mujoco>");
  EXPECT_NE(importError(geom).find("zero_geom_quat.xml: geom 'g': quat: 0 0 0 0 is no orientation"), std::string::npos) << importError(geom);
  const std::string dt = writeModel("zero_dt.xml", "<mujoco><option timestep=\"0\"/><worldbody><body><joint/><geom size=\".1\"/></body></worldbody></mujoco>");
  EXPECT_NE(importError(dt).find("zero_dt.xml: option: timestep: must be a positive number of seconds (got 0)"), std::string::npos) << importError(dt);
  const std::string hfield = writeModel("hfield.xml", "<mujoco><asset><hfield name=\"terrain\" nrow=\"50000\" ncol=\"50000\" size=\"1 1 1 1\"/></asset><worldbody/></mujoco>");
  EXPECT_NE(importError(hfield).find("hfield.xml: <hfield 'terrain'> nrow x ncol: 2500000000, over the limit of 16000000"), std::string::npos) << importError(hfield);
}

// Item 17: the input limit and the counts MuJoCo's compiler takes time or memory for.
TEST(MjcfHostile, SizesAndCountsAreLimited) {
  std::string geoms = "<mujoco><worldbody><body><joint/>";
  for (int i = 0; i < 10001; ++i) geoms += "<geom size=\".01\"/>";
  const std::string many = writeModel("many_geoms.xml", geoms + "</body></worldbody></mujoco>");
  EXPECT_NE(importError(many).find("many_geoms.xml: <geom> elements: 10001, over the limit of 10000"), std::string::npos) << importError(many);
  std::string composite = "<mujoco><worldbody><composite type=\"grid\" count=\"200 200 1\" spacing=\"0.1\"><geom size=\".01\"/></composite></worldbody></mujoco>";
  EXPECT_NE(importError(writeModel("composite.xml", composite)).find("composite.xml: <body> elements (with those of <composite> count=\"200 200 1\"): 40000"),
            std::string::npos) << importError(writeModel("composite.xml", composite));
  const std::string user = writeModel("nuser.xml", "<mujoco><size nuser_body=\"100000000\"/><worldbody/></mujoco>");
  EXPECT_NE(importError(user).find("nuser.xml: <size> nuser_body: 100000000, over the limit of 1000"), std::string::npos) << importError(user);
  const std::string texture = writeModel("texture.xml", "<mujoco><asset><texture name=\"t\" type=\"2d\" builtin=\"checker\" width=\"100000\" height=\"100000\"/></asset><worldbody/></mujoco>");
  EXPECT_NE(importError(texture).find("<texture 't'> width x height: 10000000000"), std::string::npos) << importError(texture);
  // The file size, and an include's.
  const std::string big = writeModel("big.xml", "<mujoco><!--" + std::string(3 << 20, 'x') + "--><worldbody/></mujoco>");
  setenv("LOCKSTEP_MAX_INPUT_MB", "2", 1);
  const std::string message = importError(big);
  const std::string includes = writeModel("includes.xml", "<mujoco><include file=\"big.xml\"/></mujoco>");
  const std::string included = importError(includes);
  unsetenv("LOCKSTEP_MAX_INPUT_MB");
  for (const std::string& m : {message, included}) {
    EXPECT_NE(m.find("big.xml: the file is 3145764 bytes, over the limit of 2 MiB for input files"), std::string::npos) << m;
    EXPECT_EQ(m.find("includes.xml"), std::string::npos) << m;  // the file that is too large is named
  }
}

class MjcfHostileCli : public CliTest {};

// Item 15: a FIFO named as an MJCF file is refused (`lockstep info fifo.xml` blocked forever).
TEST_F(MjcfHostileCli, FifoIsRefused) {
  const fs::path fifo = dir_ / "fifo.xml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const CliResult r = run("info " + fifo.string(), "timeout 20");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(fifo.string() + ": cannot open the file (not a regular file)"), std::string::npos) << r.err;
}

// Item 10 from the command line: refused before the run, so nothing is half done.
TEST_F(MjcfHostileCli, NonUtf8NamesAreRefusedBeforeARun) {
  const std::string xml = write("latin1.xml", "<mujoco><worldbody><body name=\"caf\xe9\"><joint/><geom size=\".1\"/></body></worldbody></mujoco>");
  const std::string npz = (dir_ / "run.npz").string(), html = (dir_ / "run.html").string();
  const CliResult r = run("simulate " + xml + " --worlds 2 --steps 10 --out " + npz + " --view " + html);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("body 'caf\\xe9': name: not UTF-8"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(npz));
  EXPECT_FALSE(fs::exists(html));
}

}  // namespace
}  // namespace lockstep::test
