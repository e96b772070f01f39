// Hostile and huge inputs to the readers (issue 16): cyclic and very long URDF chains, deep XML and
// JSON nesting, wide per_world lists, files over the size limit, links that cannot move, inertias
// that are round-off noise, and the root joint of a bare URDF. Big inputs are generated here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "lockstep/io/scene.h"
#include "lockstep/io/urdf.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;

// The message of the InputError or ModelError that f throws ("" when it throws none).
std::string errorOf(const std::function<void()>& f) { return messageOf<InputError, ModelError>(f); }
#define EXPECT_ERROR_CONTAINS(statement, text) EXPECT_ERROR_CONTAINS_OF(statement, text, InputError, ModelError)

// A scratch directory per test, removed afterwards.
class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("lockstep_hostile_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  fs::path dir_;
};

// ---- URDF --------------------------------------------------------------------------------------

std::string link(const std::string& name, double mass = 1, double inertia = 0.01) {
  std::ostringstream os;
  os << "<link name=\"" << name << "\">";
  if (mass >= 0)
    os << "<inertial><mass value=\"" << mass << "\"/><inertia ixx=\"" << inertia << "\" iyy=\"" << inertia
       << "\" izz=\"" << inertia << "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>";
  return os.str() + "</link>";
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child) {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" +
         child + "\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 0 1\"/><limit effort=\"1\" lower=\"-1\" upper=\"1\" " +
         "velocity=\"1\"/></joint>";
}

std::string robot(const std::string& body) { return "<robot name=\"r\">" + body + "</robot>"; }

// A chain of n links on revolute joints. Link names decrease along the chain, so that urdfdom's
// map of links (sorted by name) holds the tip first: freeing the links in that order would free
// the whole chain from the root, one nested destructor call per link.
std::string chainUrdf(int n) {
  std::string body = link("l" + std::to_string(n));
  for (int i = n - 1; i >= 0; --i) {
    body += link("l" + std::to_string(i));
    body += joint("j" + std::to_string(i), "revolute", "l" + std::to_string(i + 1), "l" + std::to_string(i));
  }
  return robot(body);
}

TEST(HostileUrdf, LinkWithTwoParentJointsIsRefusedNamingBoth) {
  // base -> a -> b -> a: urdfdom lists 'a' among the children of both 'base' and 'b'.
  const std::string xml = robot(link("base") + link("a") + link("b") + joint("j1", "revolute", "base", "a") +
                                joint("j2", "revolute", "a", "b") + joint("j3", "revolute", "b", "a"));
  EXPECT_ERROR_CONTAINS(importUrdf(xml, "cycle.urdf"),
                        "cycle.urdf: link 'a': is the child of two joints, 'j1' and 'j3' (a URDF link has at most "
                        "one parent joint)");
  // Two parents that are not a cycle (a diamond) are refused the same way.
  const std::string diamond = robot(link("base") + link("a") + link("b") + link("c") +
                                    joint("ja", "revolute", "base", "a") + joint("jb", "revolute", "base", "b") +
                                    joint("jc1", "revolute", "a", "c") + joint("jc2", "fixed", "b", "c"));
  EXPECT_ERROR_CONTAINS(importUrdf(diamond, "diamond.urdf"), "link 'c': is the child of two joints, 'jc1' and 'jc2'");
}

TEST(HostileUrdf, ChainOf20000LinksLoads) {
  const int n = 20000;
  const UrdfImport robot = importUrdf(chainUrdf(n), "chain.urdf");
  ASSERT_EQ(robot.bodies.size(), static_cast<std::size_t>(n + 1));
  // Parents before children, the root first: l20000 (welded), l19999, ..., l0.
  EXPECT_EQ(robot.bodies.front().name, "l20000");
  EXPECT_EQ(robot.bodies.back().name, "l0");
  EXPECT_EQ(robot.bodies.back().parent, "l1");
  const std::shared_ptr<const Model> model = robot.buildModel();
  EXPECT_EQ(model->nq(), n);
  EXPECT_DOUBLE_EQ(model->totalMass(), n + 1.0);
}

TEST(HostileUrdf, ChainOf20000FixedJointsWeldsIntoOneBody) {
  const int n = 20000;
  std::string body = link("l0");
  for (int i = 1; i <= n; ++i)
    body += link("l" + std::to_string(i)) +
            joint("j" + std::to_string(i), "fixed", "l" + std::to_string(i - 1), "l" + std::to_string(i));
  const UrdfImport robot = importUrdf(lockstep::test::robot(body), "welded.urdf", {UrdfRootJoint::Free, false});
  ASSERT_EQ(robot.bodies.size(), 1u);
  EXPECT_DOUBLE_EQ(robot.bodies[0].mass.mass, n + 1.0);
  // The links are stacked 0.1 apart along z: the center of mass is halfway up.
  EXPECT_NEAR(robot.bodies[0].mass.com[2], 0.1 * n / 2, 1e-9 * n);
  EXPECT_EQ(robot.links.at("l" + std::to_string(n)).body, "l0");
}

TEST(HostileUrdf, DeepXmlNestingIsRefusedBeforeParsing) {
  // TinyXML, urdfdom's parser, descends one call per element: 200,000 levels overflow the stack.
  const int depth = 200000;
  std::string xml = "<robot name=\"r\">" + link("base");
  for (int i = 0; i < depth; ++i) xml += "<a x=\"1\">";
  for (int i = 0; i < depth; ++i) xml += "</a>";
  xml += "</robot>";
  EXPECT_ERROR_CONTAINS(importUrdf(xml, "deep.urdf"),
                        "deep.urdf: invalid URDF: XML elements nested deeper than 100 levels (the limit of URDF files)");
  // At the limit (robot > link > 98 levels) the file still reaches urdfdom (which ignores unknown
  // elements), and neither comments, CDATA, quoted '>' nor self-closing tags count as levels.
  std::string atLimit = "<robot name=\"r\"><link name=\"base\">";
  for (int i = 0; i < kMaxUrdfNestingDepth - 2; ++i) atLimit += "<a b=\"x>y\"><!-- <c><c> --><![CDATA[<c><c>]]><d/>";
  for (int i = 0; i < kMaxUrdfNestingDepth - 2; ++i) atLimit += "</a>";
  atLimit += "</link></robot>";
  EXPECT_EQ(errorOf([&] { importUrdf(atLimit, "limit.urdf"); }), "");
  // Stray end tags at the top level, which TinyXML skips, do not buy extra depth.
  std::string stray;
  for (int i = 0; i < 1000; ++i) stray += "</a>";
  for (int i = 0; i < 1000; ++i) stray += "<a>";
  EXPECT_ERROR_CONTAINS(importUrdf(stray, "stray.urdf"), "XML elements nested deeper than 100 levels");
}

TEST(HostileUrdf, MassFreeLeafLinkIsRefusedNamingIt) {
  // A mesh-only link (no <inertial>) at the end of a revolute joint cannot be accelerated.
  const std::string meshOnly =
      robot(link("base") + link("arm") + link("sensor", -1) + joint("shoulder", "revolute", "base", "arm") +
            joint("sensor_joint", "continuous", "arm", "sensor"));
  const UrdfImport imported = importUrdf(meshOnly, "mesh.urdf");
  EXPECT_ERROR_CONTAINS(imported.buildModel(),
                        "body 'sensor': mass: the body and every body outboard of it have no mass and no inertia, so "
                        "its pin mobilizer 'sensor_joint' has a singular joint inertia");
  // The same link on a fixed joint is welded into 'arm' and is fine; so is a massless link that
  // carries a massive one.
  const std::string welded = robot(link("base") + link("arm") + link("sensor", -1) +
                                   joint("shoulder", "revolute", "base", "arm") + joint("s", "fixed", "arm", "sensor"));
  EXPECT_EQ(errorOf([&] { importUrdf(welded, "welded.urdf").buildModel(); }), "");
  const std::string carrier = robot(link("base") + link("holder", 0, 0) + link("tool") +
                                    joint("j1", "revolute", "base", "holder") + joint("j2", "prismatic", "holder", "tool"));
  EXPECT_EQ(errorOf([&] { importUrdf(carrier, "carrier.urdf").buildModel(); }), "");
  // A zero-mass leaf with an inertia can turn on a pin, but not slide.
  const std::string slider = robot(link("base") + link("tip", 0, 0.01) + joint("slide", "prismatic", "base", "tip"));
  EXPECT_ERROR_CONTAINS(importUrdf(slider, "slider.urdf").buildModel(),
                        "body 'tip': mass: the body and every body outboard of it have no mass, so its slider "
                        "mobilizer 'slide' has a singular joint inertia");
  const std::string pin = robot(link("base") + link("tip", 0, 0.01) + joint("turn", "revolute", "base", "tip"));
  EXPECT_EQ(errorOf([&] { importUrdf(pin, "pin.urdf").buildModel(); }), "");
}

TEST_F(Hostile, MassFreeLeafLinkIsRefusedByTheSceneReaders) {
  const std::string urdf = write(
      "mesh.urdf", robot(link("base") + link("camera", -1) + joint("pan", "continuous", "base", "camera")));
  EXPECT_ERROR_CONTAINS(loadSceneFile(urdf), urdf + ": body 'camera': mass: the body and every body outboard");
  const std::string scene = R"({"bodies": [
      {"name": "a", "mobilizer": "pin", "mass": 1, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]},
      {"name": "b", "parent": "a", "mobilizer": "ball", "mass": 0, "inertia": [0, 0, 0, 0, 0, 0]}]})";
  EXPECT_ERROR_CONTAINS(parseScene(scene, "s.json", "."),
                        "s.json: body 'b': mass: the body and every body outboard of it have no mass and no inertia, "
                        "so its ball mobilizer 'b' has a singular joint inertia");
}

TEST(HostileUrdf, RoundOffInertiasAreAcceptedAndRealViolationsRefused) {
  // A CAD export's dummy link: inertia entries of about 1e-20 kg m^2 that violate the triangle
  // inequality (2e-21 + 1e-20 < 5e-20), next to links of 0.01 kg m^2.
  auto noisy = [](const std::string& name, const char* ixx, const char* iyy, const char* izz) {
    return std::string("<link name=\"") + name + "\"><inertial><mass value=\"1e-6\"/><inertia ixx=\"" + ixx +
           "\" iyy=\"" + iyy + "\" izz=\"" + izz + "\" ixy=\"3e-21\" ixz=\"0\" iyz=\"0\"/></inertial></link>";
  };
  const std::string xml = robot(link("base") + link("arm") + noisy("flange", "1e-20", "2e-21", "5e-20") +
                                joint("shoulder", "revolute", "base", "arm") + joint("f", "revolute", "arm", "flange"));
  UrdfImport imported;
  EXPECT_EQ(errorOf([&] { imported = importUrdf(xml, "cad.urdf"); }), "");
  EXPECT_EQ(errorOf([&] { imported.buildModel(); }), "");
  // The same inertia alone is all there is to judge it by: it is a real violation.
  const std::string alone = robot(noisy("flange", "1e-20", "2e-21", "5e-20"));
  EXPECT_ERROR_CONTAINS(importUrdf(alone, "alone.urdf"), "link 'flange': inertia: violates the triangle inequality");
  // A violation of 1e-12 kg m^2 next to 0.01 kg m^2 links is more than round-off.
  const std::string small = robot(link("base") + link("arm") + noisy("tip", "1e-12", "1e-12", "3e-12") +
                                  joint("shoulder", "revolute", "base", "arm") + joint("t", "revolute", "arm", "tip"));
  EXPECT_ERROR_CONTAINS(importUrdf(small, "small.urdf"), "link 'tip': inertia: violates the triangle inequality");
  // So is a negative principal moment beyond round-off.
  MassProperties m;
  m.mass = 1;
  m.inertia = SymMat33d{1e-12, 1e-12, -1e-12, 0, 0, 0};
  EXPECT_ERROR_CONTAINS(validateMassProperties(m, "body 'x'", 0.03), "body 'x': inertia: not positive semidefinite");
  m.inertia = SymMat33d{1e-20, 1e-20, -1e-20, 0, 0, 0};
  EXPECT_EQ(errorOf([&] { validateMassProperties(m, "body 'x'", 0.03); }), "");
  EXPECT_ERROR_CONTAINS(validateMassProperties(m, "body 'x'"), "not positive semidefinite");
}

TEST_F(Hostile, BareUrdfRootIsFixedOrFree) {
  const std::string urdf =
      write("arm.urdf", robot(link("base") + link("arm") + joint("shoulder", "revolute", "base", "arm")));
  EXPECT_EQ(loadSceneFile(urdf).model->body(0).mobilizer, MobilizerType::Weld);
  SceneOptions free;
  free.urdfRoot = UrdfRootJoint::Free;
  const Scene scene = loadSceneFile(urdf, free);
  EXPECT_EQ(scene.model->body(0).mobilizer, MobilizerType::Free);
  EXPECT_EQ(scene.model->body(0).jointName, "root");
  EXPECT_EQ(scene.model->nq(), 8);
  // A scene file says it in its "urdf" entry.
  const std::string json = write("s.json", R"({"urdf": {"path": "arm.urdf"}})");
  EXPECT_ERROR_CONTAINS(loadSceneFile(json, free), json + ": a root joint (--root) applies to a .urdf file");
  EXPECT_ERROR_CONTAINS(parseUrdfRootJoint("floating"), "must be \"fixed\" or \"free\" (got 'floating')");
}

// Runs `lockstep ARGS`; returns the exit status and what it printed (stdout then stderr).
std::pair<int, std::string> runCli(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "out.txt";
  const int raw = std::system((std::string(LOCKSTEP_CLI) + " " + args + " >" + out.string() + " 2>&1").c_str());
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, s.str()};
}

TEST_F(Hostile, CommandLineRootOption) {
  const std::string urdf =
      write("arm.urdf", robot(link("base") + link("arm") + joint("shoulder", "revolute", "base", "arm")));
  auto [status, out] = runCli(dir_, "info " + urdf + " --root free");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("free"), std::string::npos) << out;
  EXPECT_NE(out.find("root"), std::string::npos) << out;
  std::tie(status, out) = runCli(dir_, "info " + urdf);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("weld"), std::string::npos) << out;
  std::tie(status, out) = runCli(dir_, "simulate " + urdf + " --root free --worlds 2 --steps 5 --device cpu");
  EXPECT_EQ(status, 0) << out;
  std::tie(status, out) = runCli(dir_, "simulate " + urdf + " --root loose");
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--root"), std::string::npos) << out;
}

// ---- JSON --------------------------------------------------------------------------------------

const char* const kOneBody =
    R"("bodies": [{"name": "a", "mobilizer": "pin", "mass": 1, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]}])";

// A scene with n per_world entries.
std::string wideScene(int n) {
  std::string text = std::string("{") + kOneBody + R"(, "per_world": [)";
  for (int i = 0; i < n; ++i)
    text += std::string(i ? "," : "") + "\n{\"worlds\": " + std::to_string(i) + ", \"gravity\": [0, 0, -1]}";
  return text + "]}";
}

// The processor time this process spends parsing (not the wall time, which other work on the
// machine stretches).
double secondsToParse(const std::string& text) {
  const std::clock_t start = std::clock();
  const Scene scene = parseScene(text, "wide.json", ".");
  const double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_FALSE(scene.perWorld.empty());
  return seconds;
}

TEST(HostileJson, WidePerWorldParsesInLinearTime) {
  // nlohmann 3.11.2's callback parser rescans the enclosing array at the end of every object:
  // 100,000 entries took seconds (quadratic), and ten times as many as 10,000 took 100 times as
  // long. Now the ratio is about 10 (a bound of 40 leaves room for noise).
  const std::string small = wideScene(10000), large = wideScene(100000);
  double tSmall = 1e9;
  for (int i = 0; i < 3; ++i) tSmall = std::min(tSmall, secondsToParse(small));
  const double tLarge = secondsToParse(large);
  EXPECT_LT(tLarge, 40 * tSmall) << "10k entries: " << tSmall << " s, 100k entries: " << tLarge << " s";
  EXPECT_LT(tLarge, 2.0);
}

TEST(HostileJson, DuplicateKeysAreFoundAtAnyPlace) {
  std::string text = wideScene(50000);
  // A duplicate in the last entry, and one at the top level.
  text.insert(text.rfind("\"gravity\""), "\"worlds\": 7, ");
  EXPECT_ERROR_CONTAINS(parseScene(text, "dup.json", "."), "dup.json: invalid JSON: per_world[49999]: duplicate key 'worlds'");
  EXPECT_ERROR_CONTAINS(parseScene(R"({"name": "a", "name": "b"})", "top.json", "."),
                        "top.json: invalid JSON: top level: duplicate key 'name'");
  EXPECT_ERROR_CONTAINS(parseScene(R"({"a": [1, {"b": [[], {"c": 1, "c": 2}]}]})", "deep.json", "."),
                        "deep.json: invalid JSON: a[1].b[1]: duplicate key 'c'");
}

TEST(HostileJson, DeepNestingIsRefusedNamingTheLimit) {
  // 100,000 nested arrays reached 5 GB before (a full path per level); now the reader stops at
  // the limit.
  for (const char* open : {"[", "{\"k\":"}) {
    std::string text = "{\"name\": ";
    for (int i = 0; i < 100000; ++i) text += open;
    EXPECT_ERROR_CONTAINS(parseScene(text, "deep.json", "."),
                          "deep.json: invalid JSON: arrays and objects nested deeper than 100 levels (the limit of "
                          "input files), at name");
  }
  // At the limit the document is read, and the scene reader judges it.
  std::string text = "{\"name\": ";
  for (int i = 1; i < 100; ++i) text += "[";
  for (int i = 1; i < 100; ++i) text += "]";
  EXPECT_ERROR_CONTAINS(parseScene(text + "}", "limit.json", "."), "limit.json: name: must be a string (got an array)");
}

TEST(HostileJson, SyntaxErrorsKeepTheirPositions) {
  EXPECT_ERROR_CONTAINS(parseScene("{\"name\": \n  [1, 2,]}", "s.json", "."), "s.json: invalid JSON: parse error at line 2, column 9");
  EXPECT_ERROR_CONTAINS(parseScene("{\"gravity\": [0, 0, 1e999]}", "s.json", "."),
                        "s.json: invalid JSON: number overflow parsing '1e999' at line 1, column 20 (numbers must be "
                        "finite doubles)");
  EXPECT_ERROR_CONTAINS(parseScene("", "empty.json", "."), "empty.json: invalid JSON: parse error at line 1, column 1");
}

// ---- file size ---------------------------------------------------------------------------------

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST_F(Hostile, FilesOverTheSizeLimitAreRefusedBeforeReading) {
  // A sparse 64 GiB file: reading it would take minutes and more memory than the machine has.
  const fs::path huge = dir_ / "huge.json";
  std::ofstream(huge).put('{');
  fs::resize_file(huge, std::uintmax_t(64) << 30);
  EXPECT_ERROR_CONTAINS(loadSceneFile(huge.string()),
                        huge.string() + ": the file is 68719476736 bytes, over the limit of 256 MiB for input files "
                                        "(set LOCKSTEP_MAX_INPUT_MB to a larger number of MiB to read it)");
  const fs::path hugeUrdf = dir_ / "huge.urdf";
  std::ofstream(hugeUrdf).put('<');
  fs::resize_file(hugeUrdf, std::uintmax_t(64) << 30);
  EXPECT_ERROR_CONTAINS(importUrdfFile(hugeUrdf.string()), "over the limit of 256 MiB");

  // The limit is the environment's when it sets one.
  const std::string scene = write("wide.json", wideScene(30000));  // about 1.3 MB
  {
    const ScopedEnv limit("LOCKSTEP_MAX_INPUT_MB", "1");
    EXPECT_ERROR_CONTAINS(loadSceneFile(scene), "over the limit of 1 MiB for input files");
  }
  {
    const ScopedEnv limit("LOCKSTEP_MAX_INPUT_MB", "2");
    EXPECT_EQ(loadSceneFile(scene).perWorld.size(), 30000u);
  }
  for (const char* bad : {"0", "-1", "1.5", "lots", "99999999999999999999"}) {
    const ScopedEnv limit("LOCKSTEP_MAX_INPUT_MB", bad);
    EXPECT_ERROR_CONTAINS(loadSceneFile(scene), "LOCKSTEP_MAX_INPUT_MB: must be a whole number of MiB between 1 and ");
  }
}

}  // namespace
}  // namespace lockstep::test

// ---- outputs: the system's reason for a failed write ----------------------------------------------

#include "../../host/io/text_file.h"

namespace lockstep::test {
namespace {

// A full disk (/dev/full) is reported with the file and the system's reason, not "write failed".
TEST(HostileOutputs, AFullDiskIsReportedWithTheFileAndTheReason) {
  try {
    io::writeTextFile("/dev/full", std::string(1 << 16, 'x'));
    ADD_FAILURE() << "no error writing to /dev/full";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/full: cannot write: No space left on device");
  }
  try {
    io::writeTextFile("/nonexistent/s.json.partial", "{}");
    ADD_FAILURE() << "no error writing into a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/s.json.partial: cannot write: No such file or directory");
  }
}

}  // namespace
}  // namespace lockstep::test
