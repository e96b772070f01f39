// Running the built `lockstep` program from a test: a scratch directory per test, the program's
// exit status and what it printed on stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lockstep::test {

inline std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CliResult {
  int status = -1;
  std::string out, err;
};

// A scratch directory per test (named after the suite and the test), removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("lockstep_" + std::string(info->test_suite_name()) + "_" + std::to_string(getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `lockstep ARGS` with stdout and stderr captured separately; with a launcher, `LAUNCHER
  // lockstep ARGS` (an mpirun command line, or environment assignments for the shell).
  CliResult run(const std::string& args, const std::string& launcher = "") {
    const std::filesystem::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = (launcher.empty() ? "" : launcher + " ") + std::string(LOCKSTEP_CLI) + " " + args +
                                " >" + out.string() + " 2>" + err.string();
    const int raw = std::system(command.c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readText(out);
    r.err = readText(err);
    return r;
  }

  // Writes a file into the scratch directory; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
};

}  // namespace lockstep::test
