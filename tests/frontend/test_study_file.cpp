// Study files and `lockstep study`: the shipped study loads, the command's statistics equal the
// same study run in process, and malformed studies are answered with the file, path and reason.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/io/scene_apply.h"
#include "lockstep/io/study_file.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;

class StudyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockstep_study_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  int run(const std::string& args, std::string* err = nullptr) {
    const std::string errFile = (dir_ / "stderr.txt").string();
    const int raw = std::system((std::string(LOCKSTEP_CLI) + " " + args + " >/dev/null 2>" + errFile).c_str());
    if (err) *err = read(errFile);
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::string loadError(const std::string& path) {
    try {
      loadStudyFile(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(StudyFiles, TheShippedStudyLoads) {
  const StudyFile f = loadStudyFile(kRoot + "/studies/chain-7-seed-stiffness.json");
  EXPECT_EQ(f.scene.name, "chain-7-seed");
  EXPECT_EQ(f.spec.worlds, 4096);
  EXPECT_EQ(f.spec.vary.size(), 3u);
  EXPECT_EQ(f.spec.vary[0].distribution, Distribution::LogNormal);
  EXPECT_EQ(f.spec.vary[2].max, 1.5);
  EXPECT_EQ(f.spec.outputs.front(), "q.joint7");
  EXPECT_EQ(f.precision, "double");
}

TEST_F(StudyFiles, CommandStatisticsEqualTheSameStudyInProcess) {
  const std::string study = write("s.json", R"({
    "scene": ")" + kRoot + R"(/scenes/chain-7.json", "worlds": 64, "steps": 30, "seed": 5,
    "vary": [{"parameter": "q.joint1", "distribution": "uniform", "low": 0.1, "high": 0.5},
             {"parameter": "body.link7.mass", "distribution": "lognormal", "mu": 0.0, "sigma": 0.2}],
    "outputs": ["q.joint7", "energy.kinetic"], "quantiles": [0.5], "histogram_bins": 8})");
  const std::string prefix = (dir_ / "out").string();
  ASSERT_EQ(run("study " + study + " --device cpu --out " + prefix), 0);
  const StudyFile f = loadStudyFile(study);
  const StudyResult r = runStudy<double>(f.scene.model, f.spec, Backend::Cpu, {},
                                         [&](Batch<double>& b, std::int64_t first) { applySceneFrom(f.scene, b, first); });
  std::istringstream csv(read(prefix + ".csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "output,count,mean,stddev,min,max,standard_error,ci95_half_width,q0.5");
  for (const OutputStats& s : r.outputs) {
    std::getline(csv, line);
    std::istringstream row(line);
    std::string name, cell;
    std::getline(row, name, ',');
    EXPECT_EQ(name, s.name);
    std::vector<double> v;
    while (std::getline(row, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 8u);
    EXPECT_EQ(v[0], double(s.count));
    EXPECT_EQ(v[1], s.mean);  // written with 17 digits: the same double
    EXPECT_EQ(v[2], s.stddev);
    EXPECT_EQ(v[3], s.min);
    EXPECT_EQ(v[4], s.max);
    EXPECT_EQ(v[5], s.standardError);
    EXPECT_EQ(v[6], s.ciHalfWidth);
    EXPECT_EQ(v[7], s.quantiles[0]);
  }
  EXPECT_NE(read(prefix + ".json").find("\"flagged_worlds\": 0"), std::string::npos);
  EXPECT_EQ(read(prefix + ".png").substr(1, 3), "PNG");
}

TEST_F(StudyFiles, ASceneFileMayCarryItsStudy) {
  std::string scene = read(kRoot + "/scenes/chain-7.json");
  scene.insert(scene.rfind('}'), R"(, "study": {"worlds": 8, "steps": 5, "outputs": ["time"]})");
  const StudyFile f = loadStudyFile(write("scene-with-study.json", scene));
  EXPECT_EQ(f.spec.worlds, 8);
  EXPECT_EQ(f.spec.outputs, std::vector<std::string>{"time"});
  EXPECT_EQ(f.scene.model->numBodies(), 7);
}

TEST_F(StudyFiles, MalformedStudiesAreAnsweredWithFilePathAndReason) {
  const std::string scene = "\"scene\": \"" + kRoot + "/scenes/chain-7.json\"";
  std::string e = loadError(write("a.json", "{" + scene + R"(, "vary": [{"parameter": "body.link9.mass",
      "distribution": "uniform", "low": 1, "high": 2}], "outputs": ["time"]})"));
  EXPECT_NE(e.find("a.json: vary[0].parameter:"), std::string::npos) << e;
  EXPECT_NE(e.find("body.link9.mass"), std::string::npos) << e;
  e = loadError(write("b.json", "{" + scene + R"(, "vary": [{"parameter": "q.joint1", "distribution": "gauss",
      "mean": 0, "sd": 1}], "outputs": ["time"]})"));
  EXPECT_NE(e.find("b.json: vary[0].distribution: unknown distribution 'gauss'"), std::string::npos) << e;
  e = loadError(write("c.json", "{" + scene + R"(, "outputs": ["q.joint99"]})"));
  EXPECT_NE(e.find("c.json: outputs[0]:"), std::string::npos) << e;
  e = loadError(write("d.json", "{" + scene + R"(, "vary": [{"parameter": "q.joint1", "distribution": "uniform",
      "low": 2, "high": 1}], "outputs": ["time"]})"));
  EXPECT_NE(e.find("d.json: vary[0].high: must be >= low"), std::string::npos) << e;
  e = loadError(write("e.json", "{" + scene + R"(})"));
  EXPECT_NE(e.find("e.json: top level: missing required key 'outputs'"), std::string::npos) << e;
  e = loadError(write("f.json", R"({"scene": "missing.json", "outputs": ["time"]})"));
  EXPECT_NE(e.find("missing.json"), std::string::npos) << e;
  std::string err;
  EXPECT_EQ(run("study " + (dir_ / "a.json").string(), &err), 1);
  EXPECT_NE(err.find("lockstep: error: "), std::string::npos) << err;
  EXPECT_NE(err.find("vary[0].parameter"), std::string::npos) << err;
}

// A bad outputs[0] is reported at outputs[0] (each variation is probed with outputs[0]); a parameter
// varied twice is refused at the later variation, naming the earlier.
TEST_F(StudyFiles, BadOutputsAndRepeatedParametersAreReportedWhereTheyStand) {
  const std::string scene = "\"scene\": \"" + kRoot + "/scenes/chain-7.json\"";
  std::string e = loadError(write("o.json", "{" + scene + R"(, "vary": [{"parameter": "q.joint1",
      "distribution": "uniform", "low": 0, "high": 1}], "outputs": ["q.joint99"]})"));
  EXPECT_NE(e.find("o.json: outputs[0]:"), std::string::npos) << e;
  EXPECT_EQ(e.find("vary[0]"), std::string::npos) << e;
  e = loadError(write("twice.json", "{" + scene + R"(, "vary": [
      {"parameter": "body.link1.mass", "distribution": "uniform", "low": 1, "high": 2},
      {"parameter": "q.joint1", "distribution": "uniform", "low": 0, "high": 1},
      {"parameter": "body.link1.mass", "distribution": "normal", "mean": 1, "sd": 0.1}], "outputs": ["q.joint1"]})"));
  EXPECT_NE(e.find("twice.json: vary[2].parameter: 'body.link1.mass' is already varied by vary[0]"), std::string::npos)
      << e;
}

// A study whose every world fails writes what it can: the counts (CSV, JSON with the reason) and,
// with --outcomes, every world's outcome and status; no plots; it says so and exits with 1.
TEST_F(StudyFiles, AStudyWithNoHealthyWorldWritesItsCountsAndSaysSo) {
  // Initial angles beyond float's range: every world is flagged before it runs.
  const std::string study = write("dead.json", "{\"scene\": \"" + kRoot + R"(/scenes/chain-7.json", "worlds": 20,
      "steps": 5, "precision": "float", "vary": [{"parameter": "q.joint1", "distribution": "uniform",
      "low": 1e300, "high": 2e300}], "outputs": ["q.joint2"]})");
  const fs::path out = dir_ / "r";
  std::string err;
  EXPECT_EQ(run("study " + study + " --device cpu --outcomes --out " + out.string(), &err), 1);
  EXPECT_NE(err.find("lockstep: error: no healthy world: all 20 worlds were flagged (the first: "), std::string::npos)
      << err;
  const std::string json = read(dir_ / "r.json");
  EXPECT_NE(json.find("\"flagged_worlds\": 20"), std::string::npos) << json;
  EXPECT_NE(json.find("\"count\": 0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"mean\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"reason\": \"no healthy world: all 20 worlds were flagged\""), std::string::npos) << json;
  EXPECT_TRUE(fs::exists(dir_ / "r.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "r.npz"));
  EXPECT_FALSE(fs::exists(dir_ / "r.png"));
  EXPECT_FALSE(fs::exists(dir_ / "r-sensitivity.png"));
}

TEST_F(StudyFiles, UntilAndSensitivityAreReadAndCheckedWithTheirPath) {
  const std::string scene = "\"scene\": \"" + kRoot + "/scenes/chain-7.json\"";
  const std::string vary = R"("vary": [{"parameter": "q.joint1", "distribution": "uniform", "low": 0, "high": 1}])";
  const StudyFile f = loadStudyFile(write("u.json", "{" + scene + ", " + vary + R"(, "worlds": 50,
      "outputs": ["q.joint1", "time"], "until": {"output": "q.joint1", "ci_half_width": 0.01, "max_worlds": 5000,
      "every": 25}})"));
  EXPECT_EQ(f.spec.until.output, "q.joint1");
  EXPECT_EQ(f.spec.until.ciHalfWidth, 0.01);
  EXPECT_EQ(f.spec.until.maxWorlds, 5000);
  EXPECT_EQ(f.spec.until.every, 25);
  const StudyFile g = loadStudyFile(write("s.json", "{" + scene + ", " + vary + R"(, "outputs": ["time"],
      "sensitivity": "sobol", "bootstrap_resamples": 200})"));
  EXPECT_EQ(g.spec.sensitivity, Sensitivity::Sobol);
  EXPECT_EQ(g.spec.bootstrapResamples, 200);
  std::string e = loadError(write("a.json", "{" + scene + ", " + vary + R"(, "outputs": ["time"],
      "until": {"output": "q.joint2", "ci_half_width": 0.01, "max_worlds": 5000}})"));
  EXPECT_NE(e.find("a.json: until.output: 'q.joint2' is not one of the study's outputs"), std::string::npos) << e;
  e = loadError(write("b.json", "{" + scene + ", " + vary + R"(, "worlds": 100, "outputs": ["time"],
      "until": {"output": "time", "ci_half_width": 0.01, "max_worlds": 50}})"));
  EXPECT_NE(e.find("b.json: until.max_worlds: must be at least the study's worlds (100)"), std::string::npos) << e;
  e = loadError(write("c.json", "{" + scene + ", " + vary + R"(, "outputs": ["time"], "sensitivity": "sobel"})"));
  EXPECT_NE(e.find("c.json: sensitivity: must be \"sobol\", \"derivative\" or \"none\" (did you mean 'sobol'?)"),
            std::string::npos) << e;
  e = loadError(write("d.json", "{" + scene + R"(, "outputs": ["time"], "sensitivity": "sobol"})"));
  EXPECT_NE(e.find("d.json: sensitivity: a Sobol study needs at least one variation"), std::string::npos) << e;
  const StudyFile h = loadStudyFile(write("t.json", "{" + scene + ", " + vary + R"(, "outputs": ["time"],
      "sensitivity": "derivative"})"));
  EXPECT_EQ(h.spec.sensitivity, Sensitivity::Derivative);
  e = loadError(write("f.json", "{" + scene + R"(, "outputs": ["time"], "sensitivity": "derivative"})"));
  EXPECT_NE(e.find("f.json: sensitivity: a derivative study needs at least one variation"), std::string::npos) << e;
  e = loadError(write("e.json", "{" + scene + ", " + vary + R"(, "outputs": ["time"], "until": {"output": "time",
      "ci_half_width": -1, "max_worlds": 5000}})"));
  EXPECT_NE(e.find("e.json: until.ci_half_width:"), std::string::npos) << e;
}

}  // namespace
}  // namespace lockstep::test
