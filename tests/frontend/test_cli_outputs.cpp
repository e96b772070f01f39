// The `lockstep` executable's outputs that fail, fill the disk or are interrupted, and summaries
// that name the world (split from test_cli.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "npz_reader.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;

class CliOutputs : public CliTest {};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The names in a folder, but for the runner's stdout.txt and stderr.txt.
std::vector<std::string> filesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != "stdout.txt" && name != "stderr.txt") names.push_back(name);
  }
  return names;
}

// A write that fails part-way (a file size limit, as a full disk would) stops the run at that
// frame, names the file and the system's reason, and leaves no file, partial or staged.
TEST_F(CliOutputs, AFailedWriteStopsTheRunAtOnceAndLeavesNoFile) {
  // Beyond the limit a write fails with EFBIG ("File too large") instead of ending the program.
  const std::string limited = "trap '' XFSZ; ulimit -f 16;";
  for (const char* name : {"run.csv", "run.npz"}) {
    const fs::path out = dir_ / name;
    const CliResult r = run("simulate --worlds 16 --steps 200 --record-every 1 --device cpu --out " + out.string(),
                            limited);
    EXPECT_EQ(r.status, 1) << name << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "lockstep: error: " + out.string() + ": ")) << r.err;
    EXPECT_TRUE(contains(r.err, "File too large")) << r.err;
    // At a frame well before the last (201).
    const std::size_t at = r.err.find("writing frame ");
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_LT(std::stoi(r.err.substr(at + 14)), 100) << r.err;
    EXPECT_FALSE(contains(r.out, "wall time")) << r.out;
    EXPECT_TRUE(filesIn(dir_).empty()) << name << ": " << filesIn(dir_).front();
  }
}

// A recording larger than the free space of its folder's file system is refused before the run,
// with both numbers; so is one that names nothing or something the model does not have.
TEST_F(CliOutputs, RecordingsThatCannotFitOrHoldNothingAreRefusedBeforeTheRun) {
  const fs::path out = dir_ / "huge.npz";
  const CliResult big = run("simulate --worlds 100000 --steps 100000000 --record-every 1 --record all --device cpu "
                            "--out " + out.string());
  EXPECT_EQ(big.status, 1) << big.err;
  for (const char* part : {"--out: '", "huge.npz' needs about ", " PiB (", "while it is written", "' has ", " free; record fewer"})
    EXPECT_TRUE(contains(big.err, part)) << part << "\n" << big.err;
  EXPECT_TRUE(filesIn(dir_).empty());
  const std::string chain = kRoot + "/scenes/chain-7.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--record ''", "--record: names no quantity; give names separated by commas (leave --record out for the default set)"},
      {"--record ' , '", "--record: empty quantity name in ' , '"},
      {"--record bushing.X_FM", "--record: 'bushing.X_FM' has nothing to record: the model has no bushings"},
      {"--record q,ground.force", "--record: 'ground.force' has nothing to record: the model has no ground contacts"},
  };
  for (const auto& [args, message] : cases) {
    const CliResult r = run("simulate " + chain + " --worlds 2 --steps 2 --device cpu --out " + (dir_ / "r.csv").string() +
                            " " + args);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_TRUE(filesIn(dir_).empty()) << args;
  }
}

// Ctrl-C while recording: the run stops between two steps, says so, removes its unfinished file
// and exits with 130, as a shell reports a program that SIGINT ended.
TEST_F(CliOutputs, InterruptedRecordingLeavesNoFileAndExits130) {
  for (const char* name : {"run.csv", "run.npz"}) {
    const fs::path out = dir_ / name, partial = dir_ / (std::string(name) + ".partial");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::freopen((dir_ / "stdout.txt").c_str(), "w", stdout);
      std::freopen((dir_ / "stderr.txt").c_str(), "w", stderr);
      execl(LOCKSTEP_CLI, LOCKSTEP_CLI, "simulate", "--worlds", "64", "--steps", "1000000", "--record-every", "1000",
            "--device", "cpu", "--out", out.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Once the file is begun (the run is recording), interrupt it.
    for (int i = 0; i < 600 && !fs::exists(partial); ++i) usleep(100000);
    ASSERT_TRUE(fs::exists(partial)) << name;
    usleep(200000);
    kill(pid, SIGINT);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << name;
    EXPECT_EQ(WEXITSTATUS(status), 130) << name;
    const std::string err = readText(dir_ / "stderr.txt");
    EXPECT_TRUE(contains(err, "lockstep: interrupted by SIGINT (Ctrl-C): stopped after step ")) << err;
    EXPECT_TRUE(contains(err, " of 1000000; " + out.string() + " is not written")) << err;
    EXPECT_TRUE(filesIn(dir_).empty()) << name << ": " << filesIn(dir_).front();
  }
}

// A world driven far from its energy (a ball thrown into the ground at 1e9 m/s) is named in the
// summary: as the world of the largest drift, and among those whose energy changed by more than its
// size at the start.
TEST_F(CliOutputs, SummaryNamesTheWorldOfTheWorstEnergyDrift) {
  const std::string scene = write("ball.json", R"({
    "bodies": [{"name": "ball", "mobilizer": "translation", "mass": 1, "inertia": [0.004, 0.004, 0.004, 0, 0, 0]}],
    "ground": {"stiffness": 1e7, "dissipation": 0.5, "contact_spheres": [{"body": "ball", "radius": 0.1}]},
    "initial_state": {"q": [0, 0, 0.1]},
    "per_world": [{"worlds": 2, "initial_state": {"u": [0, 0, -1e9]}}]})");
  const CliResult r = run("simulate " + scene + " --worlds 4 --steps 20 --dt 1e-3 --device cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "relative (world 2), ")) << r.out;
  EXPECT_TRUE(contains(r.out, " J absolute (world 2)")) << r.out;
  EXPECT_TRUE(contains(r.out, "energy        1 healthy worlds whose energy changed by more than its size at the start "
                              "(|KE| + |PE| + |z|); worlds 2\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "flagged       0 worlds")) << r.out;
}

// A recording without frames is refused by `plot` before any folder is made.
TEST_F(CliOutputs, PlotOfARecordingWithoutFramesMakesNoFolder) {
  const fs::path npz = dir_ / "empty.npz";
  std::string npy = "\x93NUMPY";
  npy += '\x01';
  npy += '\x00';
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  npy += static_cast<char>(dict.size());
  npy += '\x00';
  npy += dict;
  int error = 0;
  zip_t* z = zip_open(npz.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(z, nullptr);
  zip_source_t* s = zip_source_buffer(z, npy.data(), npy.size(), 0);
  ASSERT_GE(zip_file_add(z, "time.npy", s, 0), 0);
  ASSERT_EQ(zip_close(z), 0);
  const CliResult r = run("plot " + npz.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, npz.string() + ": the recording holds no frames (its 'time' array is empty): nothing to plot"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "empty-plots"));
}

}  // namespace
}  // namespace lockstep::test
