// The `lockstep` executable end to end: help, summary, CSV and NPZ output read back and compared
// with the same run done in process, `info`, and one clear error for each bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bad_inputs.h"
#include "lockstep/backends/device.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "cli_runner.h"
#include "npz_reader.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;

class Cli : public CliTest {};

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
                           "integrator    rk4", "precision     double", "wall time", "throughput", "energy drift",
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
                           "nz 3", "bushing.dissipated", "joint stops   0", "actuators     0", "linear bushing 'bushing': ground -> link7",
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
      {"simulate " + chain + " --worlds 0", "--worlds: '0' is out of range: give a whole number from 1 to 1000000000000000"},
      {"simulate " + chain + " --out result.txt", "--out: the file name must end in .csv or .npz"},
      {"simulate " + chain + " --record-every 5", "--record-every requires --out or --view"},
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

// ---- options, sizes, outputs, initial states and reports (issue 16; issue 12's small things) ----

#include "lockstep/study/throughput.h"

namespace lockstep::test {
namespace {

// Writes `text` to `path`.
void writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

TEST_F(Cli, NumericOptionsAreParsedWholeAndTheirRangesSaidInPlainNumbers) {
  const std::string chain = kRoot + "/scenes/chain-7.json";
  const std::string study = kRoot + "/studies/chain-7-seed-stiffness.json";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"simulate " + chain + " --worlds 0", "--worlds: '0' is out of range: give a whole number from 1 to 1000000000000000"},
      {"simulate " + chain + " --worlds 1e16", "--worlds: '1e16' is out of range"},
      {"simulate " + chain + " --worlds 1.5e15", "--worlds: '1.5e15' is out of range"},
      {"simulate " + chain + " --worlds 1e12x", "--worlds: '1e12x' is not a whole number"},
      {"simulate " + chain + " --worlds 2.5", "--worlds: '2.5' is not a whole number"},
      {"simulate " + chain + " --worlds 0x10", "--worlds: '0x10' is not a whole number"},
      {"simulate " + chain + " --steps=-1", "--steps: '-1' is out of range: give a whole number from 0 to 2147483647"},
      {"simulate " + chain + " --steps 99999999999999999999999", "--steps: '99999999999999999999999' is out of range"},
      {"simulate " + chain + " --dt nan", "--dt: 'nan' is not a number: give a finite number > 0"},
      {"simulate " + chain + " --dt inf", "--dt: 'inf' is not a number"},
      {"simulate " + chain + " --dt 1e400", "--dt: '1e400' is not a finite number"},
      {"simulate " + chain + " --dt 0", "--dt: '0' is out of range: give a finite number > 0"},
      {"simulate " + chain + " --dt=-0.001", "--dt: '-0.001' is out of range"},
      {"simulate " + chain + " --dt 0.001s", "--dt: '0.001s' is not a number"},
      {"simulate " + chain + " --threads 0", "--threads: '0' is out of range: give a whole number from 1 to 2147483647"},
      {"simulate " + chain + " --out x.csv --record-every 0", "--record-every: '0' is out of range"},
      {"study " + study + " --worlds 0", "--worlds: '0' is out of range"},
      {"study " + study + " --seed=-5", "--seed: '-5' is out of range: give a whole number >= 0"},
      {"study " + study + " --steps 1e3.5", "--steps: '1e3.5' is not a whole number"},
      {"bench " + chain + " --worlds 1e16", "--worlds: '1e16' is out of range"},
      {"study " + study + " --seed 1e17", "--seed: '1e17' is beyond 2^53, where notation with an exponent is not exact"},
      {"bench " + chain + " --worlds 4,two", "--worlds: 'two' is not a whole number"},
      {"bench " + chain + " --repetitions 0", "--repetitions: '0' is out of range"},
  };
  for (const Case& c : cases) {
    const CliResult r = run(c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "179769")) << c.args << "\n" << r.err;  // no 309-digit bound
    EXPECT_EQ(r.out, "") << c.args;
  }
  // Scientific notation that is a whole number is that number.
  const CliResult r = run("simulate " + chain + " --worlds 2e0 --steps 1e1 --dt 5e-4 --device cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "worlds        2\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "steps         10 x dt 0.0005 s")) << r.out;
}

TEST_F(Cli, TooManyWorldsAreRefusedBeforeAnythingIsAllocatedSayingHowManyFit) {
  const std::string chain = kRoot + "/scenes/chain-7.json";
  const std::string study = kRoot + "/studies/chain-7-seed-stiffness.json";
  std::string huge = readText(study);  // a study file that asks for 2^40 worlds
  huge.replace(huge.find("\"../scenes/"), 11, "\"" + kRoot + "/scenes/");
  huge.replace(huge.find("\"worlds\": 4096"), 14, "\"worlds\": 1099511627776");
  writeText(dir_ / "huge.json", huge);
  for (const std::string& args :
       {"simulate " + chain + " --worlds 1e12 --device cpu", std::string("simulate --worlds 1000000000000 --precision float --device cpu"),
        std::string("study ") + study + " --worlds 1099511627776 --device cpu --out " + (dir_ / "s").string(),
        "study " + (dir_ / "huge.json").string() + " --device cpu --out " + (dir_ / "s").string()}) {
    const auto t0 = std::chrono::steady_clock::now();
    const CliResult r = run(args);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_TRUE(contains(r.err, "lockstep: error: ")) << r.err;
    EXPECT_TRUE(contains(r.err, " worlds in ")) << r.err;
    EXPECT_TRUE(contains(r.err, "GiB of host memory")) << r.err;
    EXPECT_TRUE(contains(r.err, "worlds fit (use --worlds)")) << r.err;
    EXPECT_FALSE(contains(r.err, "bad_alloc")) << r.err;
    EXPECT_LT(seconds, 20) << args;
  }
  // bench reads the whole number (it used to read "1" of "1e12") and refuses a count asked for with
  // --worlds that does not fit (it used to skip it and exit 0), with the memory reason.
  const CliResult b = run("bench " + chain + " --worlds 1e12 --device cpu --repetitions 1");
  EXPECT_EQ(b.status, 1) << b.out;
  EXPECT_TRUE(contains(b.err, "lockstep: error: --worlds: chain-7 float 1000000000000 worlds: needs ")) << b.err;
  EXPECT_TRUE(contains(b.err, " GiB of host memory")) << b.err;
  EXPECT_TRUE(contains(b.err, " worlds fit")) << b.err;
  EXPECT_FALSE(contains(b.out, "chain-7                cpu")) << b.out;  // no row was measured
}

TEST(BatchMemory, SaturatesInsteadOfOverflowing) {
  const Scene scene = loadBuiltinScene();
  const Model& m = *scene.model;
  const std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t worlds : {std::int64_t(1) << 40, std::int64_t(1) << 62, kMax}) {
    const BatchMemory cpu = batchMemory(m, Precision::Double, worlds, Backend::Cpu, 2);
    const BatchMemory gpu = batchMemory(m, Precision::Float, worlds, Backend::Cuda, 2);
    EXPECT_GE(cpu.hostBytes, worlds > (std::int64_t(1) << 40) ? kMax : worlds) << worlds;
    EXPECT_GE(gpu.deviceBytes, worlds > (std::int64_t(1) << 40) ? kMax : worlds) << worlds;
    EXPECT_FALSE(whyBatchDoesNotFit(cpu, MemoryAvailable{std::int64_t(1) << 40, 0}).empty()) << worlds;
  }
  // How many fit: the count whose need is just within 90% of what is available.
  const MemoryAvailable have{std::int64_t(1) << 30, 0};
  const std::int64_t n = worldsThatFit(m, Precision::Double, Backend::Cpu, 2, have);
  ASSERT_GT(n, 0);
  EXPECT_TRUE(whyBatchDoesNotFit(batchMemory(m, Precision::Double, n, Backend::Cpu, 2), have).empty());
  EXPECT_FALSE(whyBatchDoesNotFit(batchMemory(m, Precision::Double, n + 1, Backend::Cpu, 2), have).empty());
  EXPECT_EQ(worldsThatFit(m, Precision::Double, Backend::Cpu, 2, MemoryAvailable{1000, 0}), 0);
}

TEST_F(Cli, ThreadsAreCappedAtCoresAndWorlds) {
  const CliResult r = run("simulate " + kRoot + "/scenes/chain-7.json --worlds 1 --steps 2 --device cpu --threads 2147483647");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lockstep: warning: --threads 2147483647 lowered to 1 (1 worlds)")) << r.err;
  EXPECT_TRUE(contains(r.out, "device        CPU, 1 threads")) << r.out;
}

TEST_F(Cli, UnwritableOutputsAreRefusedBeforeTheRun) {
  const std::string study = kRoot + "/studies/chain-7-seed-stiffness.json";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"study " + study + " --device cpu --out /nonexistent/x",
       "--out: cannot write '/nonexistent/x.csv': the folder '/nonexistent' does not exist"},
      {"simulate --worlds 2 --steps 1 --device cpu --out /nonexistent/x.npz",
       "--out: cannot write '/nonexistent/x.npz': the folder '/nonexistent' does not exist"},
      {"simulate --worlds 2 --steps 1 --device cpu --out " + dir_.string() + "/.npz", ""},
  };
  fs::create_directories(dir_ / "folder.csv");
  const std::vector<Case> more = {
      {"simulate --worlds 2 --steps 1 --device cpu --out " + (dir_ / "folder.csv").string(), "is a folder, not a file name"}};
  for (const std::vector<Case>* list : {&cases, &more}) {
    for (const Case& c : *list) {
      if (c.message.empty()) continue;
      const CliResult r = run(c.args);
      EXPECT_EQ(r.status, 1) << c.args;
      EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
      EXPECT_FALSE(contains(r.out, "wall time")) << c.args << "\n" << r.out;  // nothing ran
    }
  }
}

// PLplot without its drivers (the GPU machine's pack carries the library, not its drivers folder)
// would end the process ("plSelectDev: Too many tries", "No device drivers found", "Unable to load
// driver": exit 1 after the statistics). A study there writes its CSV and JSON, says why the PNGs
// are missing and exits 0: a drivers folder with no driver, one without cairo, and one whose cairo
// driver does not load (PLplot's plexit, answered by the exit handler).
TEST_F(Cli, AStudyWithoutPlplotDriversWritesItsNumbersSaysWhyAndSucceeds) {
  const std::string study = kRoot + "/studies/chain-7-seed-stiffness.json";
  fs::create_directories(dir_ / "none");
  fs::create_directories(dir_ / "nocairo");
  writeText(dir_ / "nocairo" / "null.driver_info", "null:Null device:-1:null:42:null\n");
  fs::create_directories(dir_ / "badcairo");
  writeText(dir_ / "badcairo" / "cairo.driver_info", "pngcairo:Cairo PNG Driver:0:cairo:105:pngcairo\n");
  writeText(dir_ / "badcairo" / "cairo.so", "not a shared library\n");
  struct Case {
    std::string folder, why;
  };
  for (const Case& c : {Case{"none", "PLplot finds no device driver: No device drivers found"},
                        Case{"nocairo", "PLplot has no pngcairo device"},
                        Case{"badcairo", "PLplot could not start its pngcairo device: Unable to load driver"}}) {
    const std::string out = (dir_ / c.folder / "s").string();
    const CliResult r = run("study " + study + " --worlds 64 --steps 20 --device cpu --out " + out + " </dev/null",
                            "PLPLOT_DRV_DIR=" + (dir_ / c.folder).string());
    EXPECT_EQ(r.status, 0) << c.folder << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "wrote         " + out + ".csv, " + out + ".json; no plots: " + c.why)) << r.out;
    EXPECT_TRUE(contains(r.err, "the PNG plots were not written: " + c.why)) << r.err;
    EXPECT_FALSE(contains(r.out + r.err, "Program aborted")) << c.folder;
    EXPECT_TRUE(fs::exists(out + ".csv") && fs::exists(out + ".json")) << c.folder;
    EXPECT_FALSE(fs::exists(out + ".png") || fs::exists(out + "-sensitivity.png")) << c.folder;
    for (const char* partial : {".csv.partial", ".json.partial", ".png.partial", "-sensitivity.png.partial"})
      EXPECT_FALSE(fs::exists(out + partial)) << c.folder << " " << partial;
  }
}

// A world whose initial u is finite in double but not in float (1e300) is flagged before the
// first step; the summary names it, the file's status says it at frame 0, the others are unchanged.
TEST_F(Cli, InitialStatesNotFiniteInThePrecisionFlagTheirWorldsOnly) {
  std::string scene = readText(kRoot + "/tests/data/scenes/per_world.json");
  const std::string base = dir_ / "base.json", bad = dir_ / "bad.json";
  writeText(base, scene);
  const std::string from = "{\"worlds\": [1], \"gravity\": [0, -1.62, 0], \"damping\": {\"joint2\": 0.5}}";
  ASSERT_NE(scene.find(from), std::string::npos);
  scene.replace(scene.find(from), from.size(),
                from + ",\n    {\"worlds\": [1], \"initial_state\": {\"joints\": {\"joint1\": {\"u\": 1e300}}}}");
  writeText(bad, scene);
  const std::string common = " --precision float --device cpu --steps 10 --record-every 5 --threads 1 --out ";
  const CliResult r = run("simulate " + bad + common + (dir_ / "bad.npz").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "flagged       1 worlds (all of them in the output's status)")) << r.out;
  EXPECT_TRUE(contains(r.out, "1: initial q or u not finite in this precision; worlds 1\n")) << r.out;
  const CliResult ok = run("simulate " + base + common + (dir_ / "base.npz").string());
  ASSERT_EQ(ok.status, 0) << ok.err;

  const auto flaggedRun = readNpz((dir_ / "bad.npz").string()), healthyRun = readNpz((dir_ / "base.npz").string());
  const std::vector<std::int32_t> status = flaggedRun.at("status").int32s();
  ASSERT_EQ(status.size(), 3u * 3u);  // frames 0, 5, 10 of 3 worlds
  for (int f = 0; f < 3; ++f) {
    EXPECT_EQ(status[f * 3 + 0], 0);
    EXPECT_EQ(status[f * 3 + 1], kStatusInvalidInitialState) << "frame " << f;
    EXPECT_EQ(status[f * 3 + 2], 0);
  }
  const std::vector<double> q = flaggedRun.at("q").doubles(), q0 = healthyRun.at("q").doubles();
  const int nq = static_cast<int>(q.size() / 9);
  for (int f = 0; f < 3; ++f)
    for (int w : {0, 2})
      for (int i = 0; i < nq; ++i) EXPECT_EQ(q[(f * 3 + w) * nq + i], q0[(f * 3 + w) * nq + i]) << f << " " << w;
  // In double, 1e300 is finite: nothing is flagged at the start.
  const CliResult d = run("simulate " + bad + " --precision double --device cpu --steps 0");
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_FALSE(contains(d.out, "initial q or u")) << d.out;
}

TEST_F(Cli, IdenticalRunsWriteIdenticalNpzBytesWithAFixedEntryTime) {
  const std::string common = "simulate --worlds 4 --steps 3 --device cpu --threads 1 --out ";
  const fs::path a = dir_ / "a.npz", b = dir_ / "b.npz";
  ASSERT_EQ(run(common + a.string()).status, 0);
  ASSERT_EQ(run(common + b.string()).status, 0);
  const std::string bytesA = readText(a), bytesB = readText(b);
  EXPECT_EQ(bytesA, bytesB);
  // Every local file header ("PK\3\4") says 1980-01-01 00:00 (DOS time 0, date 0x21), not today.
  int entries = 0;
  for (std::size_t at = bytesA.find("PK\x03\x04"); at != std::string::npos; at = bytesA.find("PK\x03\x04", at + 4)) {
    ASSERT_LE(at + 14, bytesA.size());
    const auto u16 = [&](std::size_t i) { return unsigned(std::uint8_t(bytesA[i])) | unsigned(std::uint8_t(bytesA[i + 1])) << 8; };
    EXPECT_EQ(u16(at + 10), 0u);
    EXPECT_EQ(u16(at + 12), 0x21u);
    ++entries;
  }
  EXPECT_GE(entries, 8);
}

TEST_F(Cli, VersionHelpDefaultsAndStudyNamesSayTheTruth) {
  const CliResult v = run("--version");
  EXPECT_EQ(v.status, 0);
  for (const char* part : {"lockstep 0.", "CUDA architectures: sm_", "CPU SIMD packs: ", " float or ",
                           " double worlds per pack", "precisions: float, double (default double)"})
    EXPECT_TRUE(contains(v.out, part)) << part << "\n" << v.out;
  const CliResult h = run("--help");
  EXPECT_FALSE(contains(h.out, "shorter run")) << h.out;
  EXPECT_TRUE(contains(h.out, "4096 worlds for 1000 steps in double precision")) << h.out;
  // One default precision: double, in simulate as in study.
  const CliResult s = run("simulate --worlds 2 --steps 1 --device cpu");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_TRUE(contains(s.out, "precision     double")) << s.out;
  EXPECT_TRUE(contains(run("simulate --help").out, "--precision TEXT:{float,double}=double"));
  // A bad study parameter name points to `lockstep info` and the study format, not to a header.
  std::string study = readText(kRoot + "/studies/chain-7-seed-stiffness.json");
  study.replace(study.find("\"../scenes/"), 11, "\"" + kRoot + "/scenes/");
  study.replace(study.find("spring.spring.stiffness"), 23, "spring.spring.stiffnes");
  writeText(dir_ / "bad_study.json", study);
  const CliResult b = run("study " + (dir_ / "bad_study.json").string() + " --device cpu --worlds 2 --steps 1 --out " +
                          (dir_ / "s").string());
  EXPECT_EQ(b.status, 1);
  EXPECT_TRUE(contains(b.err, "'spring.spring.stiffnes' does not name anything in the model (see the names "
                              "`lockstep info` lists and docs/study-format.md)"))
      << b.err;
  EXPECT_FALSE(contains(b.err, "include/lockstep")) << b.err;
}

}  // namespace
}  // namespace lockstep::test
