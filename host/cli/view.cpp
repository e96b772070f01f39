// `lockstep view RUN.npz`: the recording as a web page that plays it (three.js, self-contained);
// `lockstep render RUN.npz`: the recording as a video or a picture (MuJoCo's renderer on OSMesa,
// ffmpeg). Both read the body poses a recording holds (simulate --record bodyPose), the scene it
// is of, and optionally a value per world to colour the worlds by. docs/viewer.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "commands.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "../io/message_text.h"
#include "lockstep/view/frames.h"
#include "lockstep/view/html_viewer.h"
#include "lockstep/view/video.h"
#include "npz.h"
#include "options.h"

namespace lockstep::cli {

namespace {

// The most frames a video takes (a day at 30 frames per second would be 2.6 million).
constexpr std::int64_t kMaxVideoFrames = 1'000'000;
// --fps: what ffmpeg's frame rates allow (a rate is a fraction of 32-bit numbers; MPEG-4 and GIF
// GIF's frame delay is at most 655 s), and at most 1000 frames per second.
constexpr double kMinFps = 0.01, kMaxFps = 1000;

struct PlaybackOptions {
  std::string file;
  std::string scene;  // empty: the built-in scene
  std::string root;
  std::string contactLaw;
  std::string worlds;
  std::int64_t grid = 0;
  bool ghosts = false;
  std::string colorBy, outcomes;
  int every = 1;
  std::vector<std::string> meshPaths;
  bool contacts = true;
  std::string out;
  // render
  int width = 640, height = 480;
  double fps = 30, speed = 1;
  double at = -1;  // .png: the time of the picture
};

// The named array of an npz file; throws naming what is missing.
const NpyArray& member(const std::map<std::string, NpyArray>& arrays, const std::string& name, const std::string& file,
                    const std::string& hint) {
  auto it = arrays.find(name);
  if (it == arrays.end()) throw std::runtime_error(file + ": no '" + name + "' array" + hint);
  return it->second;
}

// "(11, 2, 49) of <f8", for messages.
std::string shapeText(const NpyArray& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
  return s + (a.shape.size() == 1 ? ",)" : ")") + " of " + a.descr;
}

// The values a colour may come from, for the shown worlds: a study's outputs or parameters
// (--outcomes), a per-world parameter of the scene, or a recorded column's last value.
std::vector<double> colorValues(const PlaybackOptions& o, const Scene& scene, const std::map<std::string, NpyArray>& arrays,
                                const std::vector<std::int64_t>& worlds) {
  const std::string& name = o.colorBy;
  std::vector<double> out;
  if (!o.outcomes.empty()) {
    const std::map<std::string, NpyArray> study = readNpz(o.outcomes);
    for (const auto& [values, names] : {std::pair<std::string, std::string>{"outputs", "output_names"}, {"parameters", "parameter_names"}}) {
      auto v = study.find(values), n = study.find(names);
      if (v == study.end() || n == study.end()) continue;
      const NpyArray& a = v->second;
      if (!n->second.text()) n->second.fail("holds " + n->second.descr + " values, not names");
      const std::vector<std::string> list = n->second.strings();
      const auto k = std::find(list.begin(), list.end(), name);
      if (k == list.end()) continue;
      // [worlds, columns], one column per name.
      const std::int64_t columns = a.shape.size() == 2 ? a.shape[1] : 1;
      if (!a.numeric() || a.shape.empty() || a.shape.size() > 2 || columns != static_cast<std::int64_t>(list.size()))
        a.fail("must be an array of numbers of shape [worlds, " + std::to_string(list.size()) + "] (one column per name of " +
               names + "), not " + shapeText(a));
      for (std::int64_t w : worlds) {
        if (w >= a.shape[0])
          throw std::runtime_error("--outcomes: " + o.outcomes + " has " + std::to_string(a.shape[0]) +
                                   " worlds; world " + std::to_string(w) + " is shown");
        out.push_back(a.flat(w * columns + (k - list.begin())));
      }
      return out;
    }
  }
  if (findPublicName(*scene.model, parameterFields(), name)) {
    Batch<double> batch(scene.model, *std::max_element(worlds.begin(), worlds.end()) + 1, Backend::Cpu);
    applyScene(scene, batch);
    for (std::int64_t w : worlds) out.push_back(batch.parameter(w, name));
    return out;
  }
  for (const auto& [member, a] : arrays) {
    auto names = arrays.find(member + "_names");
    if (names == arrays.end() || !names->second.text() || a.shape.size() < 2) continue;
    const std::vector<std::string> list = names->second.strings();
    const auto k = std::find(list.begin(), list.end(), name);
    if (k == list.end() && !(member == name && a.width() == 1)) continue;
    // A recorded column: [frames, worlds, components], one component per name, every shown world.
    if (!a.numeric() || a.shape.size() > 3 || a.frames() < 1 || a.width() != static_cast<std::int64_t>(list.size()))
      a.fail("must be an array of numbers of shape [frames >= 1, worlds, " + std::to_string(list.size()) +
             "] (one component per name of " + member + "_names), not " + shapeText(a) + "; --color-by " + name +
             " cannot read it");
    const std::int64_t c = k == list.end() ? 0 : k - list.begin();
    for (std::int64_t w : worlds) {
      if (w >= a.worlds())
        a.fail("holds " + std::to_string(a.worlds()) + " worlds; world " + std::to_string(w) + " is shown (--color-by " + name + ")");
      out.push_back(a.at(a.frames() - 1, w, c));
    }
    return out;
  }
  throw std::runtime_error("--color-by " + name + ": not an output or parameter of --outcomes" +
                           (o.outcomes.empty() ? std::string(" (none given)") : " " + o.outcomes) +
                           ", a per-world parameter of the scene (`lockstep info SCENE` lists them) or a recorded column");
}

struct Playback {
  Scene scene;
  SceneVisuals visuals;
  ViewerFrames frames;
};

Playback loadPlayback(const PlaybackOptions& o) {
  const std::map<std::string, NpyArray> arrays = readNpz(o.file);
  const std::string record = "; record it with `lockstep simulate SCENE --out " + o.file +
                             " --record bodyPose` (or write the page at once with `simulate --view FILE.html`)";
  const NpyArray& time = member(arrays, "time", o.file, "; is it a recording of lockstep simulate?");
  const NpyArray& poses = member(arrays, "bodyPose", o.file, ": the recording has no body poses" + record);
  SceneOptions sceneOptions;
  if (!o.root.empty()) sceneOptions.urdfRoot = parseUrdfRootJoint(o.root);
  if (!o.contactLaw.empty()) sceneOptions.mjcfLaw = parseMjcfContactLaw(o.contactLaw);
  Playback p{o.scene.empty() ? loadBuiltinScene() : loadSceneFile(o.scene, sceneOptions), {}, {}};
  const int nb = p.scene.model->numBodies();
  // time [frames, worlds], bodyPose [frames, worlds, 7 per body]: at least one frame of one world.
  if (!time.numeric() || time.shape.empty() || time.shape.size() > 2)
    time.fail("must be an array of numbers of shape [frames, worlds], not " + shapeText(time));
  if (!poses.numeric() || poses.shape.size() != 3)
    poses.fail("must be an array of numbers of shape [frames, worlds, 7 x bodies], not " + shapeText(poses));
  if (poses.frames() == 0 || poses.worlds() == 0)
    throw std::runtime_error(o.file + ": the recording holds no frames (bodyPose is " + shapeText(poses) + "): nothing to show");
  if (time.frames() != poses.frames())
    throw std::runtime_error(o.file + ": 'time' holds " + std::to_string(time.frames()) + " frames and 'bodyPose' " +
                             std::to_string(poses.frames()) + ": the arrays do not belong together");
  if (poses.width() != 7 * nb)
    throw std::runtime_error(o.file + ": its body poses hold " + std::to_string(poses.width()) + " values per world (" +
                             (poses.width() % 7 ? "not 7 per body" : std::to_string(poses.width() / 7) + " bodies") +
                             "), and the scene " + p.scene.source + " has " + std::to_string(nb) + " bodies (" +
                             std::to_string(7 * nb) + " values): give the scene the recording is of with --scene");
  // The frames' times: finite and never decreasing, as a recording's are.
  for (std::int64_t i = 0; i < time.frames(); ++i) {
    const double t = time.flat(i * time.worlds());
    if (!std::isfinite(t))
      time.fail("the time of frame " + std::to_string(i) + " is " + io::numberText(t) + ": times must be finite");
    if (i > 0 && t < time.flat((i - 1) * time.worlds()))
      time.fail("the time of frame " + std::to_string(i) + " (" + io::numberText(t) + ") is before that of frame " +
                std::to_string(i - 1) + " (" + io::numberText(time.flat((i - 1) * time.worlds())) +
                "): times must not decrease");
  }
  VisualOptions vo;
  vo.meshPaths = o.meshPaths;
  p.visuals = sceneVisuals(p.scene, vo);
  for (const std::string& w : p.scene.warnings) std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());
  for (const std::string& w : p.visuals.warnings) std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());

  const std::int64_t recorded = poses.worlds();
  ViewerFrames& f = p.frames;
  if (!o.worlds.empty()) f.worlds = parseWholeNumberList("--worlds", o.worlds, 0, recorded - 1);
  else for (std::int64_t w = 0; w < std::min(std::max<std::int64_t>(o.grid, 1), recorded); ++w) f.worlds.push_back(w);
  std::vector<std::int64_t> shown;
  for (std::int64_t i = 0; i < time.frames(); i += o.every) shown.push_back(i);
  if (shown.back() != time.frames() - 1) shown.push_back(time.frames() - 1);
  const NpyArray* force = nullptr;
  const NpyArray* point = nullptr;
  const int nc = static_cast<int>(p.scene.model->groundContacts().size());
  if (o.contacts && nc > 0 && arrays.count("ground.force") && arrays.count("ground.contact_point")) {
    force = &arrays.at("ground.force");
    point = &arrays.at("ground.contact_point");
    // Drawn only when they are the recording's: of its frames and worlds, 3 values per contact.
    for (const NpyArray* a : {force, point})
      if (!a->numeric() || a->shape.size() != 3 || a->frames() != poses.frames() || a->worlds() != recorded ||
          a->width() != 3 * nc)
        force = point = nullptr;
  }
  // The soft contact points (MuJoCo's law): softContact's point and force in Ground, when recorded.
  const std::int64_t ns = sizesOf(*p.scene.model).nSoftPoints;
  const NpyArray* soft = nullptr;
  if (o.contacts && ns > 0 && arrays.count("softContact")) {
    soft = &arrays.at("softContact");
    if (!soft->numeric() || soft->shape.size() != 3 || soft->frames() != poses.frames() || soft->worlds() != recorded ||
        soft->width() != ns * kSoftContactValues)
      soft = nullptr;
  }
  const int ground = force ? nc : 0;
  f.contacts = ground + (soft ? static_cast<int>(ns) : 0);
  for (std::int64_t i : shown) {
    f.time.push_back(time.flat(i * time.worlds()));
    for (std::int64_t w : f.worlds) {
      for (int c = 0; c < 7 * nb; ++c) f.poses.push_back(static_cast<float>(poses.at(i, w, c)));
      for (int c = 0; c < ground; ++c) {
        for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(point->at(i, w, 3 * c + k)));
        for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(force->at(i, w, 3 * c + k)));
      }
      for (std::int64_t c = 0; soft && c < ns; ++c) {  // a point's pos (values 2-4), its force in Ground (values 11-13)
        const std::int64_t at = c * kSoftContactValues;
        for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(soft->at(i, w, at + 2 + k)));
        for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(soft->at(i, w, at + 11 + k)));
      }
    }
  }
  if (!o.colorBy.empty()) {
    f.colorBy = o.colorBy;
    f.colorValues = colorValues(o, p.scene, arrays, f.worlds);
  }
  return p;
}

std::string withExtension(const std::string& file, const std::string& extension) {
  const std::string stem = file.size() > 4 && file.compare(file.size() - 4, 4, ".npz") == 0 ? file.substr(0, file.size() - 4) : file;
  return stem + extension;
}

int view(const PlaybackOptions& o) {
  const std::string out = o.out.empty() ? withExtension(o.file, ".html") : o.out;
  checkWritable("--out", out);
  const Playback p = loadPlayback(o);
  ViewerOptions vo;
  vo.title = p.scene.name;
  vo.ghosts = o.ghosts;
  writeViewerHtml(out, p.visuals, p.frames, vo);
  std::printf("wrote %s (%zu frames of %zu worlds, %zu bodies)\n", out.c_str(), p.frames.time.size(),
              p.frames.worlds.size(), p.visuals.bodies.size());
  return 0;
}

int render(const PlaybackOptions& o) {
  const std::string out = o.out.empty() ? withExtension(o.file, ".mp4") : o.out;
  if (!VideoWriter::writes(out)) throw std::runtime_error("--out " + out + ": the file name must end in .mp4, .webm, .gif or .png");
  checkWritable("--out", out);
  const Playback p = loadPlayback(o);
  const ViewerFrames& f = p.frames;
  const std::size_t nw = f.worlds.size(), nb = p.visuals.bodies.size();
  FrameRenderer renderer(p.visuals, o.width, o.height, static_cast<int>(nw));
  const bool picture = out.size() > 4 && out.compare(out.size() - 4, 4, ".png") == 0;
  VideoWriter video(out, o.width, o.height, o.fps);
  std::vector<double> poses(nw * nb * 7);
  auto frameAt = [&](double t) {  // the last recorded frame at or before t
    const auto it = std::upper_bound(f.time.begin(), f.time.end(), t);
    return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, it - f.time.begin() - 1));
  };
  const double t0 = f.time.front(), t1 = f.time.back();
  // The video's frames: one per 1/fps seconds of video, each speed/fps simulated seconds apart.
  const double span = (t1 - t0) * o.fps / o.speed;
  if (!picture && !(span < kMaxVideoFrames))
    throw std::runtime_error("--speed " + io::numberText(o.speed) + " and --fps " + io::numberText(o.fps) + ": the " +
                             io::numberText(t1 - t0) + " s recorded would take " + io::numberText(span) +
                             " frames, over the limit of " + std::to_string(kMaxVideoFrames) +
                             ": give a larger --speed or a lower --fps");
  const std::int64_t count = picture ? 1 : static_cast<std::int64_t>(std::floor(span + 1e-9)) + 1;
  catchInterrupts();
  for (std::int64_t i = 0; i < count; ++i) {
    const double t = picture ? (o.at >= 0 ? t0 + o.at : t1) : t0 + i * o.speed / o.fps;
    const std::size_t k = frameAt(t);
    for (std::size_t j = 0; j < poses.size(); ++j) poses[j] = f.poses[k * poses.size() + j];
    video.write(renderer.render(poses.data()).data());
    if (const int signal = interruptSignal()) throw Interrupted(signal, "stopped; " + out + " is not written");
  }
  if (video.frames() < 1) throw std::runtime_error("--out " + out + ": no frame was drawn; nothing is written");
  video.finish();
  std::printf("wrote %s (%d frame%s, %dx%d, %zu world%s; drawn with %s)\n", out.c_str(), video.frames(),
              video.frames() == 1 ? "" : "s", o.width, o.height, nw, nw == 1 ? "" : "s", FrameRenderer::context().c_str());
  return 0;
}

void addPlaybackOptions(CLI::App& app, PlaybackOptions& o) {
  app.add_option("file", o.file, "A .npz recording of lockstep simulate with body poses (--record bodyPose)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--scene", o.scene, "The scene the recording is of (default: the built-in chain-7-seed)");
  app.add_option("--root", o.root, "For a .urdf scene: fixed or free, as it was simulated")
      ->check(CLI::IsMember({"fixed", "free"}));
  app.add_option("--contact-law", o.contactLaw, "For an MJCF (.xml) scene: mujoco or compliant, as it was simulated")
      ->check(CLI::IsMember({"mujoco", "compliant"}));
  CLI::Option* worlds = app.add_option("--worlds", o.worlds, "Worlds to show, comma-separated (default: 0)");
  addWholeNumber(app, "--grid", o.grid, 1, 4096, "Show the first N worlds side by side")->excludes(worlds);
  app.add_option("--color-by", o.colorBy,
                 "Colour each world by a value: a study's output or parameter (--outcomes), a per-world parameter of "
                 "the scene (body.link7.mass), or a recorded column's last value");
  app.add_option("--outcomes", o.outcomes, "A study's outcomes (lockstep study --outcomes: PREFIX.npz) for --color-by")
      ->check(CLI::ExistingFile);
  addWholeNumber(app, "--every", o.every, 1, kMaxInt, "Use every Nth recorded frame");
  app.add_option("--mesh-path", o.meshPaths,
                 "A folder to look for mesh files in (package://PKG/PATH as DIR/PKG/PATH or DIR/PATH); repeatable; "
                 "LOCKSTEP_MESH_PATH and ROS_PACKAGE_PATH are searched too");
}

}  // namespace

Command addViewCommand(CLI::App& parent) {
  auto o = std::make_shared<PlaybackOptions>();
  CLI::App* app = parent.add_subcommand(
      "view", "Write a web page (one self-contained HTML file) that plays a recording in 3D");
  addPlaybackOptions(*app, *o);
  app->add_flag("--ghosts", o->ghosts, "Overlay the worlds translucently instead of side by side");
  app->add_flag("!--no-contacts", o->contacts, "Leave out the contact force arrows");
  app->add_option("--out", o->out, "The page to write (default: FILE with .html)");
  return {app, [o] { return view(*o); }};
}

Command addRenderCommand(CLI::App& parent) {
  auto o = std::make_shared<PlaybackOptions>();
  CLI::App* app = parent.add_subcommand(
      "render", "Render a recording off-screen (no display, no GPU) into a video (.mp4, .webm, .gif) or a picture (.png)");
  addPlaybackOptions(*app, *o);
  app->add_option("--out", o->out, "The file to write: .mp4, .webm, .gif or .png (default: FILE with .mp4)");
  addWholeNumber(*app, "--width", o->width, 16, 8192, "Width in pixels (default 640)");
  addWholeNumber(*app, "--height", o->height, 16, 8192, "Height in pixels (default 480)");
  app->add_option_function<std::string>(
         "--fps", [o](const std::string& t) { o->fps = parseRealNumber("--fps", t, kMinFps, false, kMaxFps); },
         "Frames per second of the video, from 0.01 to 1000 (default 30)")
      ->type_name("FLOAT");
  addPositiveNumber(*app, "--speed", o->speed, "Simulated seconds per second of video (default 1)");
  app->add_option_function<std::string>(
      "--time", [o](const std::string& t) { o->at = parseRealNumber("--time", t, 0, false, 1e300); },
      "For a .png: the time of the picture, from the recording's start (default: its end)");
  return {app, [o] { return render(*o); }};
}

}  // namespace lockstep::cli
