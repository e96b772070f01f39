// `lockstep simulate [SCENE]` and the default run of `lockstep` alone.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "commands.h"
#include "lockstep/backends/device.h"
#include "options.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/study_file.h"
#include "lockstep/view/html_viewer.h"
#include "progress.h"
#include "recording.h"

namespace lockstep::cli {

namespace {

// Options as given on the command line; 0 or empty means "the scene's default".
struct SimulateOptions {
  std::string scene;  // empty: the built-in scene
  std::int64_t worlds = 0;
  int steps = -1;
  double dt = 0;
  std::string integrator;
  std::string precision = "double";
  std::string device = "auto";
  int recordEvery = 0;
  std::string out;
  std::optional<std::string> record;  // --record LIST; none: the scene's simulation.record, else the default layout
  int threads = 0;
  bool repairInertia = false;
  std::string root;  // --root fixed|free, for a .urdf file
  std::string contactLaw;  // --contact-law mujoco|compliant, for an MJCF (.xml) file
  std::string study;  // --study FILE: the scene and per-world draws of a study file
  std::string view;   // --view FILE.html
  std::string viewWorlds;
  bool ghosts = false;
  std::string colorBy;
  std::vector<std::string> meshPaths;
};

// Everything a run needs, resolved from the scene and the options.
struct RunPlan {
  std::int64_t worlds;
  int steps;
  double dt;
  Integrator integrator;
  Backend backend;
  int recordEvery;  // 0: no recording
  std::string out;
  RecordingLayout layout;  // what a recording holds
  int threads;  // CPU backend threads (capped at cores and worlds)
  const StudySpec* study = nullptr;  // its draws are set in every world
  std::string view;                  // the page to write (--view); empty: none
  std::vector<std::int64_t> viewWorlds;
  std::string colorBy;  // a per-world parameter the page colours the worlds by
  ViewerOptions viewer;
  SceneVisuals visuals;
};

// The shown worlds' body poses and contact forces at the batch's host copy (after evaluate() and
// download()), appended to the page's frames: the ground contacts', then the soft contact points'
// (plane and pair contacts under MuJoCo's law: softContact's point and force in Ground, zero where
// a point does not touch).
template <class T>
void addViewerFrame(Batch<T>& batch, const RunPlan& plan, ViewerFrames& f) {
  const Model& model = batch.model();
  f.time.push_back(batch.time(plan.viewWorlds.front()));
  for (std::int64_t w : plan.viewWorlds) {
    for (int b = 0; b < model.numBodies(); ++b) {
      const Transformd X = batch.bodyPose(w, b);
      double q[4];
      X.R.toQuaternion(q);
      for (double x : {X.p[0], X.p[1], X.p[2], q[0], q[1], q[2], q[3]}) f.poses.push_back(static_cast<float>(x));
    }
    const int ground = static_cast<int>(model.groundContacts().size());
    for (int c = 0; c < ground; ++c) {
      const auto g = batch.groundContact(w, c);
      for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(g.p_GP[k]));
      for (int k = 0; k < 3; ++k) f.contactForces.push_back(static_cast<float>(g.forceOnSphere[k]));
    }
    if (f.contacts == ground) continue;
    const FieldView soft = batch.field("softContact", MemorySpace::Host);
    auto at = [&](std::int64_t c) {
      return static_cast<float>(static_cast<const T*>(soft.data)[w * soft.worldStride + c * soft.componentStride]);
    };
    for (std::int64_t p = 0; p < batch.sizes().nSoftPoints; ++p) {  // pos (values 2-4), force in Ground (values 11-13)
      for (int k = 0; k < 3; ++k) f.contactForces.push_back(at(p * kSoftContactValues + 2 + k));
      for (int k = 0; k < 3; ++k) f.contactForces.push_back(at(p * kSoftContactValues + 11 + k));
    }
  }
}

// The value --color-by shows for world w: the study's draw when it names a variation of --study
// (a draw need not be a per-world parameter: q.joint1), else the per-world parameter.
template <class T>
double colorValue(const Batch<T>& batch, const RunPlan& plan, std::int64_t w) {
  if (plan.study)
    for (std::size_t i = 0; i < plan.study->vary.size(); ++i)
      if (plan.study->vary[i].parameter == plan.colorBy) return studyDraw(*plan.study, static_cast<int>(i), w);
  return batch.parameter(w, plan.colorBy);
}

// "a.npz is not written", "a.npz and a.html are not written" (empty names left out).
std::string notWritten(const std::vector<std::string>& files) {
  std::vector<std::string> named;
  for (const std::string& f : files)
    if (!f.empty()) named.push_back(f);
  if (named.empty()) return "nothing is written";
  std::string s = named[0];
  for (std::size_t i = 1; i < named.size(); ++i) s += (i + 1 == named.size() ? " and " : ", ") + named[i];
  return s + (named.size() == 1 ? " is" : " are") + " not written";
}

// While recording, the longest stretch of steps without a look at Ctrl-C.
constexpr double kInterruptCheckSeconds = 0.1;

const char* integratorName(Integrator i) { return i == Integrator::RK4 ? "rk4" : "euler"; }

// Frames are recorded at step 0, every recordEvery steps, and at the last step.
int frameCount(int steps, int every) { return steps / every + 1 + (steps % every ? 1 : 0); }

// The energy bookkeeping of one world after evaluate(): E = KE + PE + dissipated energy - work of the
// actions and actuators (the z states), which stays constant in exact arithmetic (without applied
// body forces), and |KE| + |PE| + |z| as its scale.
template <class T>
std::pair<double, double> energy(const Batch<T>& batch, std::int64_t w) {
  const double ke = batch.kineticEnergy(w), pe = batch.potentialEnergy(w);
  double e = ke + pe, scale = std::abs(ke) + std::abs(pe);
  for (double z : batch.z(w)) {
    e += z;
    scale += std::abs(z);
  }
  return {e, scale};
}

std::string deviceDescription(Backend backend, int threads) {
  char buf[256];
  if (backend == Backend::Cuda) {
    const DeviceInfo d = queryDevice();
    std::snprintf(buf, sizeof(buf), "%s (CUDA, compute capability %d.%d, %d SMs)", d.name.c_str(), d.computeMajor,
                  d.computeMinor, d.multiprocessors);
  } else {
    const DeviceInfo d = queryDevice();
    std::snprintf(buf, sizeof(buf), "CPU, %d threads%s%s", threads, d.available ? "" : " (no GPU: ",
                  d.available ? "" : (d.reason + ")").c_str());
  }
  return buf;
}

template <class T>
int run(const Scene& scene, const RunPlan& plan, const char* precision) {
  const Model& model = *scene.model;
  Batch<T> batch(scene.model, plan.worlds, plan.backend, CpuOptions{plan.threads});
  applyScene(scene, batch);
  if (plan.study)  // the study's draws, world by world, as `lockstep study` sets them
    for (std::int64_t w = 0; w < plan.worlds; ++w)
      for (std::size_t i = 0; i < plan.study->vary.size(); ++i)
        setNamedParameter(batch, w, plan.study->vary[i].parameter, studyDraw(*plan.study, static_cast<int>(i), w));
  batch.upload();
  // Initial states that violate the sphere contacts (chain-7-seed's does) are projected onto them
  // first, as Simbody assembles; a world that cannot be assembled is flagged.
  if (!model.contacts().empty()) batch.assemble();
  batch.evaluate();
  batch.download();
  const std::int64_t W = plan.worlds;
  std::vector<std::pair<double, double>> e0(W);
  for (std::int64_t w = 0; w < W; ++w) e0[w] = energy(batch, w);

  std::unique_ptr<Recording> recording;
  int frames = 0;
  ViewerFrames viewed;
  viewed.worlds = plan.viewWorlds;
  if (!plan.colorBy.empty()) {
    viewed.colorBy = plan.colorBy;
    for (std::int64_t w : plan.viewWorlds) viewed.colorValues.push_back(colorValue(batch, plan, w));
  }
  viewed.contacts = static_cast<int>(model.groundContacts().size()) + batch.sizes().nSoftPoints;
  auto recordFrame = [&] {
    if (recording) recording->write(readFrame(batch, plan.layout));
    if (!plan.view.empty()) addViewerFrame(batch, plan, viewed);
  };
  if (plan.recordEvery > 0) {
    // Ctrl-C stops the run between two steps and removes the unfinished file (options.h).
    catchInterrupts();
    frames = frameCount(plan.steps, plan.recordEvery);
    if (!plan.out.empty()) recording = Recording::open(plan.out, model, plan.layout, W, frames);
    recordFrame();
  }

  // Step in segments that end where a frame is recorded or the progress line is updated, and, while
  // recording, at least every kInterruptCheckSeconds, where an interrupt is looked for (the segment's
  // length follows the measured time per step).
  Progress progress(plan.steps);
  const int progressEvery = progress.enabled() || plan.recordEvery > 0 ? std::max(1, plan.steps / 100) : plan.steps;
  double wall = 0;
  bool evaluated = true;  // udot and energies are those of the current state
  int segment = plan.recordEvery > 0 ? 1 : progressEvery;  // steps between two looks at interrupts
  for (int done = 0; done < plan.steps;) {
    int next = std::min({plan.steps, done + progressEvery, done + segment});
    if (plan.recordEvery > 0) next = std::min(next, (done / plan.recordEvery + 1) * plan.recordEvery);
    const auto t0 = std::chrono::steady_clock::now();
    batch.step(plan.dt, next - done, plan.integrator);
    batch.download();  // waits for the device
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    wall += took;
    if (plan.recordEvery > 0) {
      const double perStep = took / (next - done);
      segment = perStep > 0 ? static_cast<int>(std::clamp(kInterruptCheckSeconds / perStep, 1.0, double(progressEvery)))
                            : progressEvery;
    }
    done = next;
    evaluated = false;
    if (plan.recordEvery > 0 && (done % plan.recordEvery == 0 || done == plan.steps)) {
      batch.evaluate();
      batch.download();
      evaluated = true;
      recordFrame();
    }
    progress.update(done, wall);
    if (const int signal = interruptSignal())
      throw Interrupted(signal, "stopped after step " + std::to_string(done) + " of " + std::to_string(plan.steps) + "; " +
                                    notWritten({plan.out, plan.view}));
  }
  progress.finish();
  if (!evaluated) {
    batch.evaluate();
    batch.download();
  }
  if (!plan.view.empty()) {
    if (const int signal = interruptSignal())
      throw Interrupted(signal, "stopped after the last step; " + plan.view + " is not written");
    writeViewerHtml(plan.view, plan.visuals, viewed, plan.viewer);
  }
  if (recording) {
    if (const int signal = interruptSignal())
      throw Interrupted(signal, "stopped after the last step; " + plan.out + " is not written");
    recording->finish();
    // A signal while the archive was written: the file is whole and kept; the run stops here.
    if (const int signal = interruptSignal())
      throw Interrupted(signal, plan.out + " is written; the summary is not printed");
  }

  // Energy drift over the healthy worlds, and the worlds of the largest; flagged worlds grouped by
  // reason. Healthy worlds whose energy balance is not finite, or changed by more than the energy's
  // own scale at the start, are named too: nothing the integrator's error explains.
  double relative = 0, absolute = 0, constraintError = 0;
  std::int64_t healthy = 0, worstRelative = -1, worstAbsolute = -1;
  std::map<std::string, std::vector<std::int64_t>> flagged;  // why (describeWorldStatus) -> worlds
  std::vector<std::int64_t> notFinite, implausible;
  for (std::int64_t w = 0; w < W; ++w) {
    const std::int32_t status = batch.status(w);
    if (status != kStatusOk) {
      flagged[batch.describeWorldStatus(w)].push_back(w);
      continue;
    }
    ++healthy;
    const double change = std::abs(energy(batch, w).first - e0[w].first);
    if (!std::isfinite(change)) {
      notFinite.push_back(w);
    } else {
      if (worstAbsolute < 0 || change > absolute) {
        absolute = change;
        worstAbsolute = w;
      }
      if (e0[w].second > 0 && (worstRelative < 0 || change / e0[w].second > relative)) {
        relative = change / e0[w].second;
        worstRelative = w;
      }
      if (change > e0[w].second && e0[w].second > 0) implausible.push_back(w);
    }
    if (!model.contacts().empty()) constraintError = std::max(constraintError, batch.constraintError(w));
  }

  std::printf("scene         %s (%s)\n", scene.name.c_str(), scene.source.c_str());
  std::printf("model         %d bodies, nq %d, nu %d; %zu bushings, %zu spring-dampers, %zu sphere contacts\n",
              model.numBodies(), model.nq(), model.nu(), model.bushings().size(), model.springs().size(),
              model.contacts().size());
  std::printf("device        %s\n", deviceDescription(plan.backend, plan.threads).c_str());
  std::printf("worlds        %lld\n", static_cast<long long>(W));
  std::printf("steps         %d x dt %g s = %g s simulated\n", plan.steps, plan.dt, plan.steps * plan.dt);
  std::printf("integrator    %s\n", integratorName(plan.integrator));
  std::printf("precision     %s\n", precision);
  std::printf("wall time     %.3f s (stepping only)\n", wall);
  if (wall > 0) std::printf("throughput    %.3g world-steps/s\n", double(W) * plan.steps / wall);
  if (worstAbsolute >= 0) {
    const std::string relativeWorld = worstRelative >= 0 ? " (world " + std::to_string(worstRelative) + ")" : "";
    std::printf("energy drift  %.3g relative%s, %.3g J absolute (world %lld) (max over %lld healthy worlds of |change| in "
                "KE + PE%s)\n",
                relative, relativeWorld.c_str(), absolute, static_cast<long long>(worstAbsolute),
                static_cast<long long>(healthy - static_cast<std::int64_t>(notFinite.size())),
                model.nz() ? " + dissipated energy - actuator work" : "");
  }
  if (!notFinite.empty())
    std::printf("energy        %lld healthy worlds whose energy is not a finite number; worlds %s\n",
                static_cast<long long>(notFinite.size()), firstWorlds(notFinite).c_str());
  // The soft constraints (MuJoCo's law, and the compliant law's implicit step) do work (their damping,
  // MuJoCo's reference acceleration, the implicit step's dissipation) that the balance does not
  // hold: a change is no sign of a wrong step there.
  const bool soft = !model.planeContacts().empty() || !model.pairContacts().empty() || !model.softLimits().empty();
  if (soft && worstAbsolute >= 0)
    std::printf("energy        the balance leaves out the work of the soft constraints (MuJoCo's law or the compliant "
                "law's implicit step: %zu plane contacts, %zu pair contacts, %zu limits): a change is expected\n",
                model.planeContacts().size(), model.pairContacts().size(), model.softLimits().size());
  if (!implausible.empty() && !soft)
    std::printf("energy        %lld healthy worlds whose energy changed by more than its size at the start "
                "(|KE| + |PE| + |z|); worlds %s\n",
                static_cast<long long>(implausible.size()), firstWorlds(implausible).c_str());
  if (!model.contacts().empty() && healthy > 0) {
    std::printf("constraint    %.3g m max |position error| of the enabled sphere contacts at the end (over %lld healthy worlds)\n",
                constraintError, static_cast<long long>(healthy));
  }
  std::int64_t nFlagged = 0;
  for (const auto& f : flagged) nFlagged += static_cast<std::int64_t>(f.second.size());
  std::printf("flagged       %lld worlds%s\n", static_cast<long long>(nFlagged),
              nFlagged && recording ? " (all of them in the output's status)" : "");
  for (const auto& [why, worlds] : flagged)
    std::printf("              %lld: %s; worlds %s\n", static_cast<long long>(worlds.size()), why.c_str(),
                firstWorlds(worlds).c_str());
  if (recording) std::printf("output        %s (%d frames x %lld worlds)\n", plan.out.c_str(), frames, static_cast<long long>(W));
  if (!plan.view.empty())
    std::printf("view          %s (%d frames x %zu worlds; open it in a browser)\n", plan.view.c_str(), frames,
                plan.viewWorlds.size());
  return 0;
}

// What --out records: the quantities of --record, else those of the scene's simulation.record,
// else the default layout (time, q, u, udot, energies, z, status).
RecordingLayout recordingLayout(const Scene& scene, const SimulateOptions& o) {
  const Model& model = *scene.model;
  if (o.record) return recordLayout(model, splitRecordList(*o.record, "--record"), "--record");
  if (!scene.simulation.record.empty())
    return recordLayout(model, scene.simulation.record, scene.source + ": simulation.record");
  return defaultLayout(model);
}

int simulate(const SimulateOptions& o) {
  SceneOptions sceneOptions;
  sceneOptions.repairInertia = o.repairInertia;
  if (!o.root.empty()) sceneOptions.urdfRoot = parseUrdfRootJoint(o.root);
  if (!o.contactLaw.empty()) sceneOptions.mjcfLaw = parseMjcfContactLaw(o.contactLaw);
  if (o.scene.empty() && sceneOptions.urdfRoot) throw InputError("--root: applies to a .urdf file given as the scene");
  if (o.scene.empty() && sceneOptions.mjcfLaw)
    throw InputError("--contact-law: applies to an MJCF (.xml) file given as the scene");
  if (!o.study.empty() && !o.scene.empty())
    throw InputError("--study: the study file names its scene; give no scene besides it");
  std::optional<StudyFile> study;
  if (!o.study.empty()) study = loadStudyFile(o.study, sceneOptions);
  const Scene scene = study ? study->scene : o.scene.empty() ? loadBuiltinScene() : loadSceneFile(o.scene, sceneOptions);
  for (const std::string& w : scene.warnings) std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());

  RunPlan plan;
  plan.worlds = o.worlds > 0 ? o.worlds : scene.simulation.worlds;
  plan.steps = o.steps >= 0 ? o.steps : scene.simulation.steps;
  plan.dt = o.dt > 0 ? o.dt : scene.simulation.dt;
  plan.integrator = o.integrator.empty() ? scene.simulation.integrator
                                         : (o.integrator == "rk4" ? Integrator::RK4 : Integrator::SemiImplicitEuler);
  plan.backend = resolveBackend(parseDeviceChoice(o.device));
  plan.threads = cappedCpuThreads(o.threads, plan.worlds);
  if (study) {
    plan.study = &study->spec;
    if (o.worlds <= 0) plan.worlds = study->spec.worlds;
    if (o.steps < 0) plan.steps = study->spec.steps;
    if (!(o.dt > 0)) plan.dt = study->spec.dt;
    if (o.integrator.empty()) plan.integrator = study->spec.integrator;
  }
  plan.out = o.out;
  if (!o.out.empty() && !o.view.empty()) {
    // One file for both would be written twice, the recording over the page.
    namespace fs = std::filesystem;
    std::error_code e1, e2;
    const fs::path out = fs::weakly_canonical(o.out, e1), view = fs::weakly_canonical(o.view, e2);
    if (!e1 && !e2 && out == view)
      throw InputError("--view " + o.view + " and --out " + o.out + " name the same file: give each its own");
  }
  plan.layout = recordingLayout(scene, o);
  // Recording: every --record-every steps, by default about 100 frames (200 for a page alone).
  const bool recorded = !o.out.empty() || !o.view.empty();
  if (o.recordEvery > 0 && !recorded)
    throw InputError("--record-every requires --out or --view (it sets how often they record)");
  plan.recordEvery = !recorded ? 0
                               : (o.recordEvery > 0 ? o.recordEvery : std::max(1, plan.steps / (o.out.empty() ? 200 : 100)));
  if (!o.view.empty()) {
    checkWritable("--view", o.view);
    plan.view = o.view;
    if (!o.viewWorlds.empty())
      plan.viewWorlds = parseWholeNumberList("--view-worlds", o.viewWorlds, 0, plan.worlds - 1);
    else
      for (std::int64_t w = 0; w < std::min<std::int64_t>(plan.worlds, 16); ++w) plan.viewWorlds.push_back(w);
    VisualOptions vo;
    vo.meshPaths = o.meshPaths;
    plan.visuals = sceneVisuals(scene, vo);
    for (const std::string& w : plan.visuals.warnings) std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());
    plan.viewer.title = scene.name;
    if (!o.colorBy.empty()) {
      const bool drawn = study && std::any_of(study->spec.vary.begin(), study->spec.vary.end(),
                                              [&](const Variation& v) { return v.parameter == o.colorBy; });
      if (!drawn && !findPublicName(*scene.model, parameterFields(), o.colorBy))
        throw InputError("--color-by " + o.colorBy + ": not a per-world parameter of the scene (`lockstep info SCENE` lists them)" +
                         (study ? std::string(" nor a variation of the study") : std::string()));
      plan.colorBy = o.colorBy;
    }
    plan.viewer.ghosts = o.ghosts;
    threeJsSource();  // three.js is there, before the run
  }
  // Refuse what cannot finish before running: an output that cannot be written or would not fit on
  // its disk, too many worlds.
  if (!plan.out.empty()) {
    checkWritable("--out", plan.out);
    checkRecordingFits("--out", plan.out,
                       recordingSize(plan.out, *scene.model, plan.layout, plan.worlds,
                                     frameCount(plan.steps, plan.recordEvery)));
  }
  const Precision precision = parsePrecision(o.precision);
  checkMemory(*scene.model, precision, plan.worlds, plan.backend, plan.threads);
  return withPrecision(precision, [&](auto t) { return run<decltype(t)>(scene, plan, precisionName(precision)); });
}

}  // namespace

Command addSimulateCommand(CLI::App& parent) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* app = parent.add_subcommand("simulate", "Run a scene on many worlds, print a summary, optionally record");
  app->add_option("scene", o->scene, "Scene file (JSON, docs/scene-format.md); default: the built-in chain-7-seed");
  addWholeNumber(*app, "--worlds", o->worlds, 1, kMaxWorlds, "Number of worlds (default: the scene's, else 1)");
  addWholeNumber(*app, "--steps", o->steps, 0, kMaxInt, "Number of steps (default: the scene's, else 1000)");
  addPositiveNumber(*app, "--dt", o->dt, "Step size in seconds (default: the scene's, else 0.001)");
  app->add_option("--integrator", o->integrator, "euler (semi-implicit) or rk4 (default: the scene's, else rk4)")
      ->check(CLI::IsMember({"euler", "rk4"}));
  app->add_option("--precision", o->precision, "float or double (float is faster)")
      ->capture_default_str()
      ->check(CLI::IsMember(precisionNames()));
  app->add_option("--device", o->device, "cpu, cuda or auto (CUDA when a GPU is present)")
      ->capture_default_str()
      ->check(CLI::IsMember(deviceChoiceNames()));
  CLI::Option* out =
      app->add_option("--out", o->out, "Write recorded frames to FILE: .csv (one row per world per frame) or .npz")
          ->check(CLI::Validator(
              [](std::string& path) {
                return isRecordingPath(path) ? std::string() : "the file name must end in .csv or .npz";
              },
              "FILE.csv|FILE.npz"));
  addWholeNumber(*app, "--record-every", o->recordEvery, 1, kMaxInt,
                 "Record a frame every N steps, for --out and --view (default: about 100 frames)");
  app->add_option_function<std::string>(
         "--record", [o](const std::string& list) { o->record = list; },
                  "Quantities to record, comma-separated (q,u,bodyPose,bushing.X_FM,...; all: every one); "
                  "`lockstep info SCENE` lists them (default: the scene's simulation.record, else time, q, u, udot, "
                  "energies, z, status)")
      ->needs(out);
  addWholeNumber(*app, "--threads", o->threads, 1, kMaxInt, "CPU threads (default and most: all cores, one per world)");
  app->add_flag("--repair-inertia", o->repairInertia,
                "Replace physically invalid URDF inertias by the nearest valid ones (with a warning per link)");
  app->add_option("--root", o->root, "For a .urdf file: weld its root link to Ground (fixed, the default) or free it")
      ->check(CLI::IsMember({"fixed", "free"}));
  app->add_option("--contact-law", o->contactLaw,
                  "For an MJCF (.xml) file: MuJoCo's contacts and limits at the file's timestep (mujoco, the default) or "
                  "compliant contacts and joint stops (docs/mjcf.md, \"Contact laws\")")
      ->check(CLI::IsMember({"mujoco", "compliant"}));
  app->add_option("--study", o->study,
                  "A study file (docs/study-format.md): run its scene with its per-world draws, as `lockstep study` does "
                  "(its worlds, steps and dt unless given)");
  CLI::Option* view = app->add_option(
      "--view", o->view, "Also write a web page that plays the run in 3D (FILE.html; docs/viewer.md)");
  app->add_option("--view-worlds", o->viewWorlds, "Worlds the page shows, comma-separated (default: the first 16)")
      ->needs(view);
  app->add_flag("--ghosts", o->ghosts, "On the page, overlay the worlds translucently instead of side by side")->needs(view);
  app->add_option("--color-by", o->colorBy,
                  "On the page, colour each world by a per-world parameter (body.link7.mass; with --study, its draws)")
      ->needs(view);
  app->add_option("--mesh-path", o->meshPaths, "A folder to look for the robot's mesh files in (repeatable)")->needs(view);
  return {app, [o] { return simulate(*o); }};
}

int runDefault() {
  // The scene's full run (1000 steps of 4096 worlds) on the GPU or on the CPU: a few seconds on
  // two cores with the CPU backend's packs of worlds.
  return simulate(SimulateOptions{});
}

}  // namespace lockstep::cli
