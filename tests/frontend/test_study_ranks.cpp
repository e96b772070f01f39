// `lockstep study` in chunks and over MPI ranks: the same study gives the same files, byte for
// byte, in one process with any chunk size and under `mpirun -np 2` and `-np 3`; a rank that fails
// stops the job with a message naming it and leaves no file. The MPI cases skip when CMake found
// no MPI (LOCKSTEP_MPIEXEC is empty then); ctest runs them with Open MPI's permission to run as root.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/cli_runner.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;
const std::string kMpiexec = LOCKSTEP_MPIEXEC;

class StudyRanks : public CliTest {
 protected:
  // A small study of chain-7-seed with a sequential rule (three rounds: 120, then 90 and 90 more
  // worlds), so that rounds, ranks and chunks all meet.
  std::string study() {
    return write("s.json", R"({
      "scene": ")" + kRoot + R"(/scenes/chain-7-seed.json", "worlds": 120, "steps": 40, "seed": 9,
      "vary": [{"parameter": "body.link7.mass", "distribution": "uniform", "low": 0.5, "high": 1.5},
               {"parameter": "spring.spring.stiffness", "distribution": "lognormal", "mu": 5.3, "sigma": 0.2},
               {"parameter": "q.joint2", "distribution": "normal", "mean": 0.2, "sd": 0.05}],
      "outputs": ["q.joint7", "energy.total", "body.link7.x"],
      "until": {"output": "q.joint7", "ci_half_width": 1e-9, "max_worlds": 300, "every": 90},
      "histogram_bins": 12})");
  }

  // Runs the study under `launcher` ("" for one process) with `extra` options into folder `name`;
  // returns the folder.
  fs::path runStudy(const std::string& name, const std::string& launcher, const std::string& extra) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    const std::string args = "study " + study() + " --device cpu --outcomes --out " + (folder / "r").string() + " " + extra;
    const CliResult r = run(args, launcher);
    EXPECT_EQ(r.status, 0) << name << "\n" << r.out << r.err;
    return folder;
  }

  static std::string mpirun(int ranks, const std::string& env = "") {
    return kMpiexec + " --oversubscribe --bind-to none -np " + std::to_string(ranks) + (env.empty() ? "" : " -x " + env);
  }

  static std::vector<std::string> files(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  void expectSameFiles(const fs::path& a, const fs::path& b) {
    const std::vector<std::string> names = files(a);
    EXPECT_EQ(names, files(b)) << b;
    for (const std::string& n : names) EXPECT_TRUE(readText(a / n) == readText(b / n)) << n << " differs in " << b;
  }
};

TEST_F(StudyRanks, AnyChunkSizeWritesTheSameBytes) {
  const fs::path one = runStudy("one", "", "");
  EXPECT_EQ(files(one), (std::vector<std::string>{"r-sensitivity.png", "r.csv", "r.json", "r.npz", "r.png"}));
  EXPECT_NE(readText(one / "r.json").find("\"worlds_run\": 300"), std::string::npos) << readText(one / "r.json");
  expectSameFiles(one, runStudy("chunk1", "", "--chunk 1 --threads 1"));
  expectSameFiles(one, runStudy("chunk7", "", "--chunk 7"));
  // The comparison can fail: another seed changes the files.
  const fs::path other = runStudy("seed", "", "--seed 10");
  EXPECT_FALSE(readText(one / "r.csv") == readText(other / "r.csv"));
  EXPECT_FALSE(readText(one / "r.npz") == readText(other / "r.npz"));
}

TEST_F(StudyRanks, AnyNumberOfRanksWritesTheSameBytes) {
  if (kMpiexec.empty()) GTEST_SKIP() << "built without MPI";
  const fs::path one = runStudy("one", "", "");
  expectSameFiles(one, runStudy("np2", mpirun(2), "--threads 1"));
  expectSameFiles(one, runStudy("np3", mpirun(3), "--threads 1 --chunk 7"));
}

// Reduced on the ranks (--reduce ranks): rounds of 2100, 900, 900, 900 and 200 worlds split blocks of
// 1024 world indices between rounds, ranks and chunks; the files are the same bytes whatever the
// split, and count, mean, stddev, min, max, standard error, interval and histograms are the gathered
// run's, bit for bit (the quantiles come from the sketch there: within its relative error 0.005).
TEST_F(StudyRanks, ReducedOnTheRanksTheSameBytesAndTheGatheredMoments) {
  std::string text = readText(study());
  auto replace = [&](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  };
  replace("\"worlds\": 120", "\"worlds\": 2100");
  replace("\"steps\": 40", "\"steps\": 5");
  replace("\"max_worlds\": 300, \"every\": 90", "\"max_worlds\": 5000, \"every\": 900");
  const std::string file = write("big.json", text);
  auto runIt = [&](const std::string& name, const std::string& launcher, const std::string& extra) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    const std::string args = "study " + file + " --device cpu --out " + (folder / "r").string() + " " + extra;
    const CliResult r = run(args, launcher);
    EXPECT_EQ(r.status, 0) << name << "\n" << r.out << r.err;
    return folder;
  };
  const fs::path gathered = runIt("gathered", "", "");
  const fs::path one = runIt("one", "", "--reduce ranks");
  EXPECT_NE(readText(one / "r.json").find("\"worlds_run\": 5000"), std::string::npos);
  EXPECT_NE(readText(one / "r.json").find("\"quantile_method\": \"sketch"), std::string::npos);
  expectSameFiles(one, runIt("chunk77", "", "--reduce ranks --chunk 77"));
  if (!kMpiexec.empty()) {
    expectSameFiles(one, runIt("np2", mpirun(2), "--reduce ranks --threads 1 --chunk 500"));
    expectSameFiles(one, runIt("np3", mpirun(3), "--reduce ranks --threads 1 --chunk 77"));
  }
  // The gathered run: the same row up to the quantiles, the same histograms.
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const std::vector<std::string> a = lines(readText(gathered / "r.csv")), b = lines(readText(one / "r.csv"));
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(a[0], b[0]);
  for (std::size_t i = 1; i < a.size(); ++i) {
    std::size_t cut = 0;
    for (int commas = 0; commas < 8; ++commas) cut = a[i].find(',', cut) + 1;  // name .. ci95_half_width
    EXPECT_EQ(a[i].substr(0, cut), b[i].substr(0, cut));
    EXPECT_NE(a[i], b[i]);  // the quantiles differ: exact and sketched
  }
  auto histograms = [](const std::string& json) {
    std::vector<std::string> out;
    for (std::size_t at = json.find("\"histogram\""); at != std::string::npos; at = json.find("\"histogram\"", at + 1))
      out.push_back(json.substr(at, json.find(']', at) - at));
    return out;
  };
  EXPECT_EQ(histograms(readText(gathered / "r.json")).size(), 3u);
  EXPECT_EQ(histograms(readText(gathered / "r.json")), histograms(readText(one / "r.json")));
}

TEST_F(StudyRanks, AFailingRankStopsTheJobAndNothingIsWritten) {
  const fs::path folder = dir_ / "out";
  fs::create_directories(folder);
  const std::string args = "study " + study() + " --device cpu --outcomes --out " + (folder / "r").string();
  // One process: the reason alone.
  CliResult r = run(args, "LOCKSTEP_STUDY_FAIL_RANK=0");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("lockstep: error: failure injected by LOCKSTEP_STUDY_FAIL_RANK=0; no output was written"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(files(folder).empty());
  if (kMpiexec.empty()) GTEST_SKIP() << "built without MPI";
  r = run(args + " --threads 1", mpirun(2, "LOCKSTEP_STUDY_FAIL_RANK=1"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("lockstep: error: rank 1 of 2 failed: failure injected by LOCKSTEP_STUDY_FAIL_RANK=1; no "
                       "output was written"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(files(folder).empty());
  // An error every rank meets: one message, no rank named.
  r = run(args + " --threads 1 --worlds 1e6", mpirun(3));
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.find("rank "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lockstep: error: --worlds 1000000 is more than the study's until.max_worlds (300)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(files(folder).empty());
}

// --out naming the study file itself (PREFIX.json) is refused before the run, the file untouched.
TEST_F(StudyRanks, OutputsNeverReplaceTheStudyFile) {
  const std::string file = study();
  const std::string before = readText(file);
  const CliResult r = run("study " + file + " --device cpu --out " + (dir_ / "s").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is the study file itself: choose another prefix"), std::string::npos) << r.err;
  EXPECT_EQ(readText(file), before);
}

// `lockstep bench` under mpirun: every rank measures, rank 0 prints its table and the ranks' sum.
TEST_F(StudyRanks, BenchUnderMpirunSumsTheRanks) {
  if (kMpiexec.empty()) GTEST_SKIP() << "built without MPI";
  const CliResult r = run("bench --device cpu --worlds 8 --precision double --repetitions 1 --threads 1", mpirun(2));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 ranks measured at once"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chain-7-seed double 8 worlds per rank: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("scene "), r.out.rfind("scene ")) << "one table, from rank 0:\n" << r.out;
}

}  // namespace
}  // namespace lockstep::test
