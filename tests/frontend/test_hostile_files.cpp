// Hostile and careless input to the command line's files (issue 38): .npz recordings that lie in
// their headers or disagree with each other, outputs that are FIFOs or devices, file names ffmpeg
// would read as protocols, patterns or options, frame rates and speeds out of reach, two outputs
// on one file, Ctrl-C during a long recording, and a study's draws as the colour of a page.
// Each test failed on 330fb27.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cli_runner.h"
#include "npz.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;

const std::string kSource = LOCKSTEP_SOURCE_DIR;
const std::string kChain7 = kSource + "/scenes/chain-7.json";  // 7 bodies

// A .npy member from its header's words and its data bytes, as a careless writer would make it.
std::string npy(const std::string& shape, const std::string& data, const std::string& descr = "<f8") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict + data;
}

std::string doubles(const std::vector<double>& v) { return {reinterpret_cast<const char*>(v.data()), 8 * v.size()}; }

std::string shapeOf(std::int64_t a, std::int64_t b, std::int64_t c = -1) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + (c >= 0 ? ", " + std::to_string(c) : "") + ")";
}

// time [frames, worlds] (0.01 apart, or `times`) and bodyPose [frames, worlds, 7 nb] at rest.
struct Recording {
  std::int64_t frames = 3, worlds = 2;
  int bodies = 7;
  std::vector<double> times;  // empty: 0, 0.01, ...
  std::map<std::string, std::string> extra;  // more members, as npy bytes

  std::map<std::string, std::string> members() const {
    std::vector<double> t, p;
    for (std::int64_t f = 0; f < frames; ++f)
      for (std::int64_t w = 0; w < worlds; ++w) {
        t.push_back(times.empty() ? 0.01 * f : times[f]);
        for (int b = 0; b < bodies; ++b)
          for (double x : {0.0, 0.0, 0.1 * b, 1.0, 0.0, 0.0, 0.0}) p.push_back(x);
      }
    std::map<std::string, std::string> m = {{"time", npy(shapeOf(frames, worlds), doubles(t))},
                                            {"bodyPose", npy(shapeOf(frames, worlds, 7 * bodies), doubles(p))}};
    for (const auto& [k, v] : extra) m[k] = v;
    return m;
  }
};

class HostileFiles : public CliTest {
 protected:
  std::string npz(const std::string& name, const std::map<std::string, std::string>& members) {
    const std::string path = (dir_ / name).string();
    cli::NpzArchive archive(path, path);
    for (const auto& [k, v] : members) archive.add(k, v);
    archive.close();
    return path;
  }
  std::string npz(const std::string& name, const Recording& r) { return npz(name, r.members()); }
  // `lockstep view` and `lockstep render` of a recording of chain-7; both must fail with `message`.
  void bothRefuse(const std::string& file, const std::string& message) {
    for (const char* command : {"view", "render"}) {
      const std::string out = (dir_ / (std::string(command) + (command[0] == 'v' ? ".html" : ".png"))).string();
      const CliResult r = run(std::string(command) + " " + file + " --scene " + kChain7 + " --out " + out);
      EXPECT_EQ(r.status, 1) << command << " " << file << ": " << r.err;
      EXPECT_NE(r.err.find(message), std::string::npos) << command << ": " << r.err;
      EXPECT_FALSE(fs::exists(out)) << out;
    }
  }
};

// Item 2: a recording of no frames (view and render crashed, SIGSEGV).
TEST_F(HostileFiles, RecordingWithoutFramesIsRefused) {
  Recording r;
  r.frames = 0;
  bothRefuse(npz("empty.npz", r), "empty.npz: the recording holds no frames (bodyPose is (0, 2, 49) of <f8)");
}

// Item 3: headers whose shape is negative, overflows, or claims more than the member holds
// (SIGSEGV, or gigabytes allocated for a file of a few hundred bytes).
TEST_F(HostileFiles, NpyHeadersAreCheckedAgainstTheirBytes) {
  const struct {
    std::string shape, message;
  } cases[] = {
      {"(-1, 2)", "time.npy: shape '(-1, 2)': dimension 0 is negative"},
      {"(2, -3)", "time.npy: shape '(2, -3)': dimension 1 is negative"},
      {"(4294967296, 4294967296, 4294967296)", "time.npy: shape '(4294967296, 4294967296, 4294967296)': its elements are too many"},
      {"(536870912, 2)", "time.npy: its shape '(536870912, 2)' of <f8 needs 8589934592 bytes of data, and it holds 48"},
      {"(99999999999999999999, 1)", "dimension 0 is too large"},
      {"(abc, 2)", "time.npy: shape '(abc, 2)': dimension 0 is not a whole number"},  // item 20: was "stoll"
  };
  Recording rec;
  for (const auto& c : cases) {
    std::map<std::string, std::string> m = rec.members();
    m["time"] = npy(c.shape, doubles(std::vector<double>(6, 0.0)));
    bothRefuse(npz("bad.npz", m), c.message);
  }
  // Element types and string widths the reader does not take, and a header longer than the member.
  std::map<std::string, std::string> m = rec.members();
  m["bodyPose_names"] = npy("(1,)", "", "<U0");
  bothRefuse(npz("u0.npz", m), "bodyPose_names.npy: strings of width 0");
  m = rec.members();
  m["time"] = npy("(3, 2)", doubles(std::vector<double>(6, 0.0)), "<f4");
  bothRefuse(npz("f4.npz", m), "time.npy: element type '<f4'");
  m = rec.members();
  m["time"] = m["time"].substr(0, 40);
  bothRefuse(npz("cut.npz", m), "cut.npz: time.npy: its .npy header says ");
}

// Item 3: an archive entry whose header claims gigabytes from a few hundred bytes is refused
// before anything is allocated (run with 3 GB of address space: a 4 GB string fails).
TEST_F(HostileFiles, ArchiveEntriesClaimingMoreThanTheyHoldAreRefused) {
  const std::string file = npz("claims.npz", Recording().members());
  std::string bytes = readText(file);
  for (const std::uint32_t claim : {0xF0000000u, 0x0F000000u}) {  // over the input limit (256 MiB), and under it
    std::string forged = bytes;
    const auto patch = [&](std::size_t at) {
      for (int k = 0; k < 4; ++k) forged[at + k] = static_cast<char>((claim >> (8 * k)) & 0xff);
    };
    for (std::size_t at = 0; (at = forged.find("PK\x03\x04", at)) != std::string::npos; at += 4) patch(at + 22);
    for (std::size_t at = 0; (at = forged.find("PK\x01\x02", at)) != std::string::npos; at += 4) patch(at + 24);
    std::ofstream(file, std::ios::binary) << forged;
    const CliResult r = run("view " + file + " --scene " + kChain7 + " --out " + (dir_ / "v.html").string(), "ulimit -v 3000000;");
    EXPECT_EQ(r.status, 1);
    const std::string expected = claim == 0xF0000000u
                                     ? "claims.npz: bodyPose.npy: 4026531840 bytes, over the limit of 256 MiB for input files"
                                     : "claims.npz: bodyPose.npy: its entry claims 251658240 bytes from ";
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    if (claim != 0xF0000000u) {
      EXPECT_NE(r.err.find("the archive is damaged"), std::string::npos) << r.err;
    }
  }
}

// Item 3: a member over LOCKSTEP_MAX_INPUT_MB is refused before it is read.
TEST_F(HostileFiles, NpzMembersOverTheInputLimitAreRefused) {
  Recording rec;
  rec.frames = 20000;  // bodyPose: 20000 x 2 x 49 doubles, 15 MiB
  const std::string file = npz("big.npz", rec);
  const CliResult r = run("view " + file + " --scene " + kChain7 + " --out " + (dir_ / "v.html").string(),
                          "LOCKSTEP_MAX_INPUT_MB=2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("big.npz: bodyPose.npy: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" bytes, over the limit of 2 MiB for input files"), std::string::npos) << r.err;
}

// Item 20: members that disagree are named with the real mismatch.
TEST_F(HostileFiles, MismatchedMembersAreNamed) {
  Recording rec;
  std::map<std::string, std::string> m = rec.members();
  m["time"] = npy(shapeOf(2, 2), doubles({0, 0, 0.01, 0.01}));
  bothRefuse(npz("frames.npz", m), "frames.npz: 'time' holds 2 frames and 'bodyPose' 3: the arrays do not belong together");
  rec.bodies = 6;
  bothRefuse(npz("bodies.npz", rec), "bodies.npz: its body poses hold 42 values per world (6 bodies), and the scene");
  m = Recording().members();
  m["bodyPose"] = npy(shapeOf(3, 2), doubles(std::vector<double>(6, 0.0)));
  bothRefuse(npz("dims.npz", m), "dims.npz: bodyPose.npy: must be an array of numbers of shape [frames, worlds, 7 x bodies], not (3, 2) of <f8");
}

// Item 8: times that are not finite or decrease; a speed or rate that makes no video.
TEST_F(HostileFiles, TimesAndSpeedsThatMakeNoVideoAreRefused) {
  Recording rec;
  rec.times = {0, NAN, 0.02};
  bothRefuse(npz("nan.npz", rec), "nan.npz: time.npy: the time of frame 1 is nan: times must be finite");
  rec.times = {0, INFINITY, 0.02};
  bothRefuse(npz("inf.npz", rec), "time.npy: the time of frame 1 is inf: times must be finite");
  rec.times = {0, 0.02, 0.01};
  bothRefuse(npz("back.npz", rec), "time.npy: the time of frame 2 (0.01) is before that of frame 1 (0.02)");
  const std::string good = npz("good.npz", Recording());
  const std::string mp4 = (dir_ / "v.mp4").string();
  CliResult r = run("render " + good + " --scene " + kChain7 + " --speed 1e-300 --width 32 --height 32 --out " + mp4);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--speed 1e-300 and --fps 30: the 0.02 s recorded would take 6e+299 frames, over the limit"),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(mp4));
}

// Item 22: --fps is checked against what ffmpeg takes and sent so that ffmpeg reads it.
TEST_F(HostileFiles, FrameRatesOutOfReachAreRefusedAndSmallOnesWork) {
  const std::string good = npz("good.npz", Recording());
  const std::string gif = (dir_ / "v.gif").string();
  CliResult r = run("render " + good + " --scene " + kChain7 + " --fps 1e-7 --width 32 --height 32 --out " + gif);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--fps: '1e-7' is out of range: give a finite number >= 0.01 and <= 1000"), std::string::npos) << r.err;
  r = run("render " + good + " --scene " + kChain7 + " --fps 0.0123456789 --speed 1e-5 --width 32 --height 32 --out " + gif);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + gif + " (25 frames"), std::string::npos) << r.out;  // 0.02 s at 1e-5 s a second: 2000 s at 0.0123 frames per second
}

// Item 4: --color-by of a recorded column whose names outnumber its values, for worlds it lacks
// (the page held bytes read past the array: "color_values":[4.67e-310]).
TEST_F(HostileFiles, ColorByReadsOnlyWhatTheRecordingHolds) {
  Recording rec;
  rec.worlds = 4;
  rec.extra["x"] = npy(shapeOf(3, 4, 1), doubles(std::vector<double>(12, 1.0)));
  rec.extra["x_names"] = npy("(3,)", std::string("a\0\0\0b\0\0\0c\0\0\0", 12), "<U1");
  rec.extra["y"] = npy(shapeOf(3, 2, 1), doubles(std::vector<double>(6, 1.0)));
  rec.extra["y_names"] = npy("(1,)", std::string("d\0\0\0", 4), "<U1");
  const std::string file = npz("color.npz", rec);
  const std::string html = (dir_ / "v.html").string();
  CliResult r = run("view " + file + " --scene " + kChain7 + " --worlds 3 --color-by c --out " + html);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("color.npz: x.npy: must be an array of numbers of shape [frames >= 1, worlds, 3]"), std::string::npos) << r.err;
  r = run("view " + file + " --scene " + kChain7 + " --worlds 3 --color-by d --out " + html);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("color.npz: y.npy: holds 2 worlds; world 3 is shown (--color-by d)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(html));
  // Outcomes whose names outnumber their columns.
  const std::string outcomes =
      npz("outcomes.npz", {{"outputs", npy("(4, 1)", doubles({1, 2, 3, 4}))},
                           {"output_names", npy("(2,)", std::string("p\0\0\0q\0\0\0", 8), "<U1")}});
  r = run("view " + file + " --scene " + kChain7 + " --worlds 3 --color-by q --outcomes " + outcomes + " --out " + html);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("outcomes.npz: outputs.npy: must be an array of numbers of shape [worlds, 2]"), std::string::npos) << r.err;
  r = run("view " + file + " --scene " + kChain7 + " --worlds 3 --color-by a --out " + html);  // a good column
  EXPECT_EQ(r.status, 1);  // x has 3 names for 1 component: refused whichever name is asked
}

// Item 13: output names that ffmpeg would take as a protocol, a pattern or an option are files.
TEST_F(HostileFiles, RenderWritesTheFileNamedWhateverItsName) {
  const std::string good = npz("good.npz", Recording());
  for (const std::string name : {"pipe:1.gif", "file:x.png", "frame%d.png", "-y.mp4"}) {
    const CliResult r = run("render " + good + " --scene " + kChain7 + " --width 32 --height 32 --out=" + name, "cd " + dir_.string() + " &&");
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out.rfind("wrote " + name + " (", 0), 0u) << name << ": " << r.out;  // nothing else on stdout
    EXPECT_TRUE(fs::is_regular_file(dir_ / name)) << name;
    EXPECT_GT(fs::file_size(dir_ / name), 100u) << name;
    EXPECT_FALSE(fs::exists(dir_ / (name + ".partial"))) << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "frame1.png"));
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

// Item 14: a FIFO or device given as an output is refused, not replaced by a regular file.
TEST_F(HostileFiles, SpecialFilesAreNotReplaced) {
  const std::string good = npz("good.npz", Recording());
  const fs::path fifo = dir_ / "fifo.npz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const std::string cases[] = {
      "simulate " + kChain7 + " --worlds 2 --steps 5 --out " + fifo.string(),
      "simulate " + kChain7 + " --worlds 2 --steps 5 --view " + fifo.string(),
      "view " + good + " --scene " + kChain7 + " --out " + fifo.string(),
      "render " + good + " --scene " + kChain7 + " --width 32 --height 32 --out " + (dir_ / "fifo.png").string(),
  };
  ASSERT_EQ(mkfifo((dir_ / "fifo.png").c_str(), 0644), 0);
  for (const std::string& c : cases) {
    const CliResult r = run(c);
    EXPECT_EQ(r.status, 1) << c;
    EXPECT_NE(r.err.find("is a FIFO, not a regular file"), std::string::npos) << c << ": " << r.err;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo.png"));
}

// Item 9: --view and --out on one file (the recording overwrote the page, and the summary said
// "view F").
TEST_F(HostileFiles, ViewAndOutOnOneFileAreRefused) {
  const std::string f = (dir_ / "run.npz").string();
  const CliResult r = run("simulate " + kChain7 + " --worlds 2 --steps 5 --out " + f + " --view " + dir_.string() + "/./run.npz");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("name the same file: give each its own"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(f));
}

// Item 19: Ctrl-C while recording stops within a fraction of a second however long 1% of the run
// is, and the message names each unwritten file.
TEST_F(HostileFiles, InterruptStopsARecordingRunPromptly) {
  const std::string npzFile = (dir_ / "i.npz").string(), html = (dir_ / "i.html").string();
  // 1% of 2e9 steps takes minutes; frames only at the start, the middle and the end.
  const std::string command = std::string(LOCKSTEP_CLI) + " simulate " + kChain7 +
                              " --worlds 4 --threads 1 --steps 2e9 --record-every 1e9 --out " + npzFile + " --view " + html +
                              " >" + (dir_ / "o.txt").string() + " 2>" + (dir_ / "e.txt").string();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  kill(child, SIGINT);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  ASSERT_EQ(done, child) << "still running 20 s after Ctrl-C";
  EXPECT_LT(took, 5.0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130);
  const std::string err = readText(dir_ / "e.txt");
  EXPECT_NE(err.find(npzFile + " and " + html + " are not written"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(npzFile));
  EXPECT_FALSE(fs::exists(npzFile + ".partial"));
  EXPECT_FALSE(fs::exists(html));
}

// Item 21: with --study, --color-by takes a study's draw, also one that is no per-world parameter.
TEST_F(HostileFiles, StudyDrawsColourThePage) {
  const std::string html = (dir_ / "s.html").string();
  const CliResult r = run("simulate --study " + kSource + "/studies/chain-7-derivative.json --worlds 3 --steps 5 --view " +
                          html + " --color-by q.joint1");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = readText(html);
  EXPECT_NE(page.find("\"color_by\":\"q.joint1\""), std::string::npos);
  const std::size_t at = page.find("\"color_values\":[");
  ASSERT_NE(at, std::string::npos);
  // Three draws of N(0.3, 0.05), not the scene's q.
  const double first = std::stod(page.substr(at + 16));
  EXPECT_GT(first, 0.05);
  EXPECT_LT(first, 0.55);
  EXPECT_NE(first, 0.3);
}

// Item 18: render draws the grids it accepts (256 worlds: MuJoCo's "Stack overflow" in the model
// of every world's bodies, whose compile time and stack grew with their square).
TEST_F(HostileFiles, RenderDrawsLargeGrids) {
  Recording rec;
  rec.worlds = 400;
  rec.frames = 1;
  const std::string file = npz("grid.npz", rec), png = (dir_ / "grid.png").string();
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run("render " + file + " --scene " + kChain7 + " --grid 400 --width 64 --height 48 --out " + png);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("400 worlds"), std::string::npos) << r.out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
  EXPECT_EQ(readText(png).substr(1, 3), "PNG");
}

// Also: a state that diverges within a step is said to (it read "singular joint inertia in the
// articulated-body sweep"), with the step and what to try: Gymnasium's Ant under the compliant law
// at 10 ms with RK4. (Under MuJoCo's law, an MJCF file's default, it takes 10 ms: the next test.)
TEST_F(HostileFiles, ADivergedStateIsSaidToBeOne) {
  const CliResult r = run("simulate " + kSource +
                          "/models/mjcf/ant.xml --contact-law compliant --worlds 2 --steps 5000 --dt 0.01 --integrator rk4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("flagged       2 worlds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2: the state diverged within a step of 0.01 s (rk4): the articulated-body sweep met a singular "
                       "joint inertia at a state the step reached, not at the world's last state; try a smaller step (dt)"),
            std::string::npos) << r.out;
}

// An MJCF file on its own takes MuJoCo's law, at the file's timestep with its integrator: Gymnasium's
// Ant runs its 10 ms RK4 steps (the issue's example, which diverged under the compliant law) with
// no world flagged; --contact-law says which law, and only for an MJCF file.
TEST_F(HostileFiles, AnMjcfFileTakesMujocosLawAtItsOwnStep) {
  const CliResult r = run("simulate " + kSource + "/models/mjcf/ant.xml --worlds 4 --steps 2000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("flagged       0 worlds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dt 0.01"), std::string::npos) << r.out;
  const CliResult info = run("info " + kSource + "/models/mjcf/ant.xml");
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("plane contacts"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("ground contacts ("), std::string::npos) << info.out;
  const CliResult compliant = run("info " + kSource + "/models/mjcf/ant.xml --contact-law compliant");
  ASSERT_EQ(compliant.status, 0) << compliant.err;
  EXPECT_NE(compliant.out.find("ground contacts"), std::string::npos) << compliant.out;
  const CliResult scene = run("info " + kSource + "/scenes/ant.json --contact-law mujoco");
  EXPECT_NE(scene.status, 0);
  EXPECT_NE(scene.err.find("a scene file sets \"contact_law\" in its \"mjcf\" entry"), std::string::npos) << scene.err;
  const CliResult bad = run("info " + kSource + "/models/mjcf/ant.xml --contact-law soft");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--contact-law"), std::string::npos) << bad.err;
}

// Also: a derivative study counts its Jacobians and sensitivities (here 26 KB a world beside the
// batch's 12 KB) when it sizes its chunks; it used to plan as many worlds as a plain study.
TEST_F(HostileFiles, DerivativeStudiesSizeTheirChunksWithTheirDerivatives) {
  const std::string study = R"({"scene": ")" + kSource + R"(/scenes/humanoid.json", "worlds": 2, "steps": 1, "dt": 0.001,
    "precision": "double", "seed": 1, SENSITIVITY
    "vary": [{"parameter": "body.torso.mass", "distribution": "uniform", "low": 8, "high": 9}],
    "outputs": ["q.abdomen_y"]})";
  std::int64_t chunk[2];
  for (int derivative = 0; derivative < 2; ++derivative) {
    std::string text = study;
    text.replace(text.find("SENSITIVITY"), 11, derivative ? R"("sensitivity": "derivative",)" : "");
    const std::string file = write(derivative ? "d.json" : "p.json", text);
    const CliResult r = run("study " + file + " --out " + (dir_ / (derivative ? "out-d" : "out-p")).string());
    ASSERT_EQ(r.status, 0) << r.err;
    const std::size_t at = r.out.find("chunks of at most ");
    ASSERT_NE(at, std::string::npos) << r.out;
    chunk[derivative] = std::stoll(r.out.substr(at + 18));
  }
  EXPECT_LT(chunk[1], chunk[0] * 0.5) << chunk[1] << " of " << chunk[0];  // 12 / (12 + 26) of it
  EXPECT_GT(chunk[1], chunk[0] * 0.2) << chunk[1] << " of " << chunk[0];
}

}  // namespace
}  // namespace lockstep::test
