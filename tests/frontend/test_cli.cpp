// The `lockstep` executable end to end: help, summary, CSV and NPZ output read back and compared
// with the same run done in process, `info`, and one clear error for each bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bad_inputs.h"
#include "lockstep/device.h"
#include "lockstep/scene.h"
#include "npz_reader.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;

struct CliResult {
  int status = -1;
  std::string out, err;
};

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory per test, removed afterwards.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("lockstep_cli_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `lockstep ARGS` with stdout and stderr captured separately.
  CliResult run(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = std::string(LOCKSTEP_CLI) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int raw = std::system(command.c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readText(out);
    r.err = readText(err);
    return r;
  }

  fs::path dir_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(Cli, HelpOnEverySubcommand) {
  for (const char* args : {"--help", "simulate --help", "info --help", "study --help", "bench --help"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_TRUE(contains(r.out, "Usage:")) << args << "\n" << r.out;
  }
  for (const char* sub : {"simulate", "info", "study", "bench"}) EXPECT_TRUE(contains(run("--help").out, sub)) << sub;
  EXPECT_TRUE(contains(run("simulate --help").out, "--record-every"));
}

TEST_F(Cli, SimulateTheBuiltinSceneAndSummarize) {
  const CliResult r = run("simulate --worlds 64 --steps 20 --device cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line : {"scene         chain-7-seed (<built-in chain-7-seed>)",
                           "model         7 bodies, nq 7, nu 7; 1 bushings, 1 spring-dampers, 1 sphere contacts",
                           "device        CPU", "worlds        64", "steps         20 x dt 0.001 s = 0.02 s simulated",
                           "integrator    rk4", "precision     float", "wall time", "throughput", "energy drift",
                           "constraint    ", "m max |position error| of the enabled sphere contacts",
                           "flagged       0 worlds"})
    EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r.out;
  EXPECT_EQ(r.err, "");  // no progress line when stderr is not a terminal
}

// The frames of a CSV recording: [frame][world] -> the row's numbers after "frame,world".
struct Csv {
  std::vector<std::string> columns;
  std::vector<std::vector<std::vector<double>>> rows;
};

Csv readCsv(const fs::path& path) {
  Csv csv;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::stringstream header(line);
  for (std::string c; std::getline(header, c, ',');) csv.columns.push_back(c);
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    std::getline(row, cell, ',');
    const std::size_t frame = std::stoul(cell);
    std::getline(row, cell, ',');
    const std::size_t world = std::stoul(cell);
    if (csv.rows.size() <= frame) csv.rows.resize(frame + 1);
    EXPECT_EQ(csv.rows[frame].size(), world) << "rows out of order";
    std::vector<double> values;
    while (std::getline(row, cell, ',')) values.push_back(std::stod(cell));
    EXPECT_EQ(values.size() + 2, csv.columns.size());
    csv.rows[frame].push_back(values);
  }
  return csv;
}

TEST_F(Cli, CsvAndNpzHoldTheNumbersOfTheSameRunInProcess) {
  const std::string scenePath = kRoot + "/tests/data/scenes/per_world.json";
  const std::string common = scenePath + " --precision double --device cpu --steps 22 --record-every 5 --threads 1";
  const fs::path csvPath = dir_ / "run.csv", npzPath = dir_ / "run.npz";
  const CliResult a = run("simulate " + common + " --out " + csvPath.string());
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_TRUE(contains(a.out, "output        " + csvPath.string() + " (6 frames x 3 worlds)")) << a.out;
  const CliResult b = run("simulate " + common + " --out " + npzPath.string());
  ASSERT_EQ(b.status, 0) << b.err;

  // The same run in process: frames at steps 0, 5, 10, 15, 20 and 22.
  const Scene scene = loadSceneFile(scenePath);
  const Model& m = *scene.model;
  Batch<double> batch(scene.model, 3);
  applyScene(scene, batch);
  batch.evaluate();
  struct Expected {
    std::vector<std::vector<double>> row;  // [world] -> time, q, u, udot, KE, PE, z, status
  };
  std::vector<Expected> expected;
  auto record = [&] {
    Expected e;
    for (int w = 0; w < 3; ++w) {
      std::vector<double> r = {batch.time(w)};
      for (const auto& part : {batch.q(w), batch.u(w), batch.udot(w)}) r.insert(r.end(), part.begin(), part.end());
      r.push_back(batch.kineticEnergy(w));
      r.push_back(batch.potentialEnergy(w));
      const std::vector<double> z = batch.z(w);
      r.insert(r.end(), z.begin(), z.end());
      r.push_back(batch.status(w));
      e.row.push_back(r);
    }
    expected.push_back(e);
  };
  record();
  for (int steps : {5, 5, 5, 5, 2}) {
    batch.step(scene.simulation.dt, steps, scene.simulation.integrator);
    batch.evaluate();
    record();
  }

  const Csv csv = readCsv(csvPath);
  std::vector<std::string> columns = {"frame", "world", "time"};
  for (const auto& n : m.qNames()) columns.push_back("q:" + n);
  for (const auto& n : m.uNames()) columns.push_back("u:" + n);
  for (const auto& n : m.uNames()) columns.push_back("udot:" + n);
  columns.insert(columns.end(), {"kinetic_energy", "potential_energy"});
  for (const auto& n : m.zNames()) columns.push_back("z:" + n);
  columns.push_back("status");
  EXPECT_EQ(csv.columns, columns);
  EXPECT_TRUE(contains(readText(csvPath), "q:joint3.qw"));
  ASSERT_EQ(csv.rows.size(), 6u);
  for (std::size_t f = 0; f < 6; ++f) {
    ASSERT_EQ(csv.rows[f].size(), 3u);
    for (int w = 0; w < 3; ++w) EXPECT_EQ(csv.rows[f][w], expected[f].row[w]) << "frame " << f << " world " << w;
  }
  // Worlds really differ (per-world overrides came from the scene file).
  EXPECT_NE(csv.rows[5][0], csv.rows[5][1]);
  EXPECT_NE(csv.rows[5][0], csv.rows[5][2]);
  EXPECT_DOUBLE_EQ(csv.rows[5][0][0], 22 * 0.002);

  const auto npz = readNpz(npzPath.string());
  for (const char* name : {"time", "q", "u", "udot", "kinetic_energy", "potential_energy", "z", "status", "q_names",
                           "u_names", "z_names"})
    EXPECT_EQ(npz.count(name), 1u) << name;
  ASSERT_EQ(npz.size(), 11u);
  EXPECT_EQ(npz.at("q").shape, (std::vector<std::int64_t>{6, 3, m.nq()}));
  EXPECT_EQ(npz.at("udot").shape, (std::vector<std::int64_t>{6, 3, m.nu()}));
  EXPECT_EQ(npz.at("time").shape, (std::vector<std::int64_t>{6, 3}));
  EXPECT_EQ(npz.at("q_names").strings(), m.qNames());
  EXPECT_EQ(npz.at("u_names").strings(), m.uNames());
  EXPECT_EQ(npz.at("z_names").strings(), m.zNames());
  const std::vector<double> time = npz.at("time").doubles(), q = npz.at("q").doubles(), u = npz.at("u").doubles(),
                            udot = npz.at("udot").doubles(), ke = npz.at("kinetic_energy").doubles(),
                            pe = npz.at("potential_energy").doubles(), z = npz.at("z").doubles();
  const std::vector<std::int32_t> status = npz.at("status").int32s();
  const int nq = m.nq(), nu = m.nu(), nz = m.nz();
  for (int f = 0; f < 6; ++f) {
    for (int w = 0; w < 3; ++w) {
      // The NPZ row laid out as the CSV row: time, q, u, udot, KE, PE, z, status.
      const int fw = f * 3 + w;
      std::vector<double> r = {time[fw]};
      r.insert(r.end(), q.begin() + fw * nq, q.begin() + (fw + 1) * nq);
      r.insert(r.end(), u.begin() + fw * nu, u.begin() + (fw + 1) * nu);
      r.insert(r.end(), udot.begin() + fw * nu, udot.begin() + (fw + 1) * nu);
      r.push_back(ke[fw]);
      r.push_back(pe[fw]);
      r.insert(r.end(), z.begin() + fw * nz, z.begin() + (fw + 1) * nz);
      r.push_back(status[fw]);
      EXPECT_EQ(r, csv.rows[f][w]) << "frame " << f << " world " << w;
    }
  }
}

TEST_F(Cli, InfoDescribesTheScene) {
  const CliResult r = run("info " + kRoot + "/scenes/chain-7-seed.json");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"scene         chain-7-seed", "bodies        7", "link7", "pin", "nq 7", "joint1 joint2",
                           "nz 2", "bushing.dissipated", "linear bushing 'bushing': ground -> link7",
                           "spring-damper 'spring'", "sphere contact 'contact'", "constraints   1 (1 equations)",
                           "simulation defaults: dt 0.001 s, 1000 steps, rk4, 4096 worlds"})
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  const CliResult w = run("info " + kRoot + "/tests/data/scenes/per_world.json");
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_TRUE(contains(w.out, "per_world[1]: worlds (2): mass-properties u")) << w.out;
}

TEST_F(Cli, EveryBadInputIsOneErrorLineAndAFailingStatus) {
  for (const BadScene& bad : kBadScenes) {
    const std::string path = kRoot + "/tests/data/bad/" + bad.file;
    for (const std::string& command : {"info " + path, "simulate --steps 1 --worlds 1 --device cpu " + path}) {
      const CliResult r = run(command);
      EXPECT_EQ(r.status, 1) << command;
      EXPECT_EQ(r.err.rfind("lockstep: error: " + path + ": " + bad.message, 0), 0u) << command << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.out, "");
    }
  }
}

TEST_F(Cli, CommandLineMistakesSayWhatToDo) {
  const std::string chain = kRoot + "/scenes/chain-7.json";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"simulate " + chain + " --worlds 0", "--worlds: Value 0 not in range"},
      {"simulate " + chain + " --out result.txt", "--out: the file name must end in .csv or .npz"},
      {"simulate " + chain + " --record-every 5", "--record-every requires --out"},
      {"simulate " + chain + " --integrator rk45", "--integrator: rk45 not in {euler,rk4}"},
      {"simulate " + chain + " --bogus", "The following argument was not expected: --bogus"},
      {"simulate " + kRoot + "/no/such/scene.json", "lockstep: error: " + kRoot + "/no/such/scene.json: cannot open the file"},
      {"simulate " + kRoot + "/tests/data/scenes/per_world.json --worlds 2 --device cpu",
       "per_world[1].worlds: world 2 is outside the batch of 2 worlds; run at least 3 worlds"},
      {"info", "scene is required"},
      {"frobnicate", "The following argument was not expected: frobnicate"},
  };
  for (const Case& c : cases) {
    const CliResult r = run(c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
  }
  if (!queryDevice().available) {
    const CliResult r = run("simulate " + chain + " --device cuda");
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(contains(r.err, "the CUDA backend was requested but")) << r.err;
  }
}

TEST_F(Cli, RepairInertiaFlagLoadsAnInvalidUrdfWithAWarning) {
  const std::string urdf = kRoot + "/tests/data/bad/triangle_inertia.urdf";
  const CliResult r = run("info --repair-inertia " + urdf);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lockstep: warning: " + urdf + ": link 'arm': inertia repaired")) << r.err;
  EXPECT_TRUE(contains(r.out, "nq 1")) << r.out;
}

}  // namespace
}  // namespace lockstep::test

namespace lockstep::test {
namespace {

TEST_F(Cli, BenchPrintsTheThroughputTable) {
  const CliResult r = run("bench " + kRoot + "/scenes/chain-7.json --worlds 2,8 --precision float --repetitions 1 "
                          "--device cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("world-steps/s"), std::string::npos) << r.out;
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) rows += line.rfind("chain-7 ", 0) == 0;
  EXPECT_EQ(rows, 2) << r.out;
  EXPECT_EQ(run("bench --worlds two").status, 1);
}

}  // namespace
}  // namespace lockstep::test
