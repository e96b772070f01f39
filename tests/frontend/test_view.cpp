// The viewer (lockstep/view/): visual shapes placed as the robot files say (MJCF geoms against
// MuJoCo's own geom poses, URDF visuals on the bodies that carry their links), meshes read by
// Assimp, inertia boxes with the body's inertia, the web page, off-screen frames that follow the
// poses, and `lockstep view`, `lockstep render` and `simulate --view` end to end. The page opened
// in a browser is tested from Python (python/tests/test_viewer.py, headless Chromium).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "cli_runner.h"
#include "lockstep/engine/batch.h"
#include "lockstep/engine/fields.h"
#include "npz_reader.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/view/frames.h"
#include "lockstep/view/html_viewer.h"
#include "lockstep/view/visuals.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;

const std::string kSource = LOCKSTEP_SOURCE_DIR;

std::string writeFile(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// Every geom MuJoCo draws lands where MuJoCo puts it: the carrier's pose times X_BS equals MuJoCo's
// geom_xpos and geom_xmat at the same state.
TEST(Visuals, MjcfGeomsAreWhereMujocoPutsThem) {
  for (const char* file : {"ant.xml", "humanoid.xml", "hopper.xml", "reacher.xml"}) {
    const std::string path = kSource + "/models/mjcf/" + file;
    const MjcfImport mjcf = importMjcfFile(path);
    char error[1000] = "";
    mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
    ASSERT_TRUE(m) << error;
    mjData* d = mj_makeData(m);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> small(-0.3, 0.3);
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + (m->jnt_type[0] == mjJNT_FREE && i >= 3 && i < 7 ? 0 : small(rng));
    mj_normalizeQuat(m, d->qpos);
    mj_kinematics(m, d);
    Batch<double> batch(mjcf.model, 1, Backend::Cpu);
    batch.setQ(0, qFromMujoco(mjcf, d->qpos));
    batch.evaluate();
    int drawn = 0;
    for (int g = 0; g < m->ngeom; ++g) drawn += m->geom_group[g] <= 2 && m->geom_rgba[4 * g + 3] > 0;
    ASSERT_EQ(static_cast<int>(mjcf.visuals.size()), drawn) << file;
    int g = 0;
    for (const VisualShape& v : mjcf.visuals) {
      while (!(m->geom_group[g] <= 2 && m->geom_rgba[4 * g + 3] > 0)) ++g;
      const int b = mjcf.model->bodyIndex(v.body);
      const Transformd X_GB = b < 0 ? Transformd::identity() : batch.bodyPose(0, b);
      const Transformd X_GS = X_GB * v.X_BS;
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(X_GS.p[k], d->geom_xpos[3 * g + k], 1e-12) << file << " " << v.source;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          EXPECT_NEAR(X_GS.R.R.m[r][c], d->geom_xmat[9 * g + 3 * r + c], 1e-12) << file << " " << v.source;
      for (int k = 0; k < 3; ++k) EXPECT_EQ(v.size[k], m->geom_size[3 * g + k]) << v.source;
      ++g;
    }
    mj_deleteData(d);
    mj_deleteModel(m);
  }
}

class VisualFiles : public CliTest {};

// URDF visuals ride on the body that carries their link (a welded link's on its parent's body),
// with their origin, size and colour; a mesh is read with Assimp and scaled; a missing mesh is one
// warning and leaves its body to its inertia box.
TEST_F(VisualFiles, UrdfVisualsMeshesAndMissingMeshes) {
  writeFile(dir_ / "tetra.stl",
            "solid t\n"
            "facet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 1 0 0\nendloop\nendfacet\n"
            "facet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 0 1\nendloop\nendfacet\n"
            "facet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 1\nvertex 0 1 0\nendloop\nendfacet\n"
            "facet normal 1 1 1\nouter loop\nvertex 1 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\n"
            "endsolid t\n");
  const std::string urdf = writeFile(dir_ / "robot.urdf", R"(<robot name="r">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.1"/><geometry><box size="0.2 0.4 0.6"/></geometry><material name="red"/></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://pkg/meshes/tetra.stl" scale="2 3 4"/></geometry></visual></link>
  <link name="tip"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.5 0 0"/><geometry><cylinder radius="0.05" length="0.3"/></geometry></visual></link>
  <link name="lost"><inertial><mass value="2"/><inertia ixx="1" iyy="2" izz="2.5" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://pkg/meshes/absent.stl"/></geometry></visual></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0 0 0.7"/></joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="lost"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>)");
  const Scene scene = loadSceneFile(urdf);
  ASSERT_EQ(scene.visuals.size(), 4u);
  const VisualShape* base = nullptr;
  const VisualShape* tip = nullptr;
  for (const VisualShape& v : scene.visuals) {
    if (v.kind == ShapeKind::Cylinder) tip = &v;
    if (v.kind == ShapeKind::Box) base = &v;
  }
  ASSERT_TRUE(base && tip);
  EXPECT_EQ(base->body, "base");
  EXPECT_EQ(base->size[2], 0.3);
  EXPECT_EQ(base->X_BS.p[2], 0.1);
  EXPECT_EQ(base->rgba[0], 1.0);
  EXPECT_EQ(base->rgba[1], 0.0);
  EXPECT_EQ(tip->body, "arm");  // welded into its parent's body
  EXPECT_NEAR(tip->X_BS.p[0], 0.5, 1e-15);
  EXPECT_NEAR(tip->X_BS.p[2], 0.7, 1e-15);

  fs::create_directories(dir_ / "share" / "pkg" / "meshes");
  fs::copy_file(dir_ / "tetra.stl", dir_ / "share" / "pkg" / "meshes" / "tetra.stl");
  VisualOptions options;
  options.meshPaths = {(dir_ / "share").string()};
  const SceneVisuals v = sceneVisuals(scene, options);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("absent.stl"), std::string::npos) << v.warnings[0];
  const DrawnShape* mesh = nullptr;
  std::set<int> inertiaBodies;
  for (const DrawnShape& d : v.shapes) {
    if (d.shape.kind == ShapeKind::Mesh) mesh = &d;
    if (d.role == ShapeRole::Inertia && d.shape.kind == ShapeKind::Box) inertiaBodies.insert(d.body);
  }
  ASSERT_TRUE(mesh);
  EXPECT_EQ(mesh->shape.triangles.size(), 12u);
  float largest[3] = {0, 0, 0};
  for (std::size_t i = 0; i < mesh->shape.vertices.size(); ++i)
    largest[i % 3] = std::max(largest[i % 3], mesh->shape.vertices[i]);
  EXPECT_EQ(largest[0], 2.0f);  // scaled 2, 3, 4
  EXPECT_EQ(largest[1], 3.0f);
  EXPECT_EQ(largest[2], 4.0f);
  EXPECT_EQ(inertiaBodies, std::set<int>{scene.model->bodyIndex("lost")});

  // Without the mesh path both meshes are missing: one warning counts them.
  const SceneVisuals bare = sceneVisuals(scene);
  ASSERT_EQ(bare.warnings.size(), 1u);
  EXPECT_EQ(bare.warnings[0].rfind("2 mesh files not found", 0), 0u) << bare.warnings[0];
  // LOCKSTEP_MESH_PATH is searched as --mesh-path is: only the absent mesh is missing.
  setenv("LOCKSTEP_MESH_PATH", (dir_ / "share").c_str(), 1);
  const SceneVisuals fromEnvironment = sceneVisuals(scene);
  unsetenv("LOCKSTEP_MESH_PATH");
  ASSERT_EQ(fromEnvironment.warnings.size(), 1u);
  EXPECT_EQ(fromEnvironment.warnings[0].rfind("1 mesh file not found", 0), 0u) << fromEnvironment.warnings[0];
  // A mesh that is not one: refused naming the file.
  writeFile(dir_ / "share" / "pkg" / "meshes" / "tetra.stl", "this is not a mesh");
  try {
    sceneVisuals(scene, options);
    ADD_FAILURE() << "a broken mesh was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tetra.stl"), std::string::npos) << e.what();
  }
}

// The inertia box of a body has the body's mass and central inertia: a box of half-sizes a, b, c
// along the principal axes, at the center of mass.
TEST(Visuals, TheInertiaBoxHasTheBodysInertia) {
  MassProperties mp;
  mp.mass = 2.5;
  mp.com = {{0.1, -0.2, 0.3}};
  mp.inertia = {0.3, 0.5, 0.6, 0.05, -0.02, 0.04};
  const VisualShape box = inertiaBox(mp);
  const Vec3d& h = box.size;
  const SymMat33d diagonal = SymMat33d::diagonal(mp.mass / 3 * (h[1] * h[1] + h[2] * h[2]),
                                                 mp.mass / 3 * (h[0] * h[0] + h[2] * h[2]),
                                                 mp.mass / 3 * (h[0] * h[0] + h[1] * h[1]));
  const SymMat33d back = reexpressSym(box.X_BS.R.R, diagonal);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(back(i, j), mp.inertia(i, j), 1e-12) << i << j;
  for (int k = 0; k < 3; ++k) EXPECT_EQ(box.X_BS.p[k], mp.com[k]);
}

// Bodies with collision geoms (the compliant law's contacts) are drawn as their geoms, without an
// inertia box inside them; without contact shapes, as their inertia boxes.
TEST(Visuals, BodiesWithCollisionGeomsAreDrawnAsThem) {
  const Scene scene = loadSceneFile(kSource + "/scenes/balls-in-a-box.json");
  const int nb = scene.model->numBodies();
  auto count = [&](const SceneVisuals& v, ShapeRole role) {
    std::set<int> bodies;
    for (const DrawnShape& d : v.shapes)
      if (d.role == role && d.body >= 0) bodies.insert(d.body);
    return bodies.size();
  };
  const SceneVisuals v = sceneVisuals(scene);
  EXPECT_EQ(count(v, ShapeRole::Inertia), 0u);
  EXPECT_EQ(count(v, ShapeRole::Contact), static_cast<std::size_t>(nb));
  VisualOptions bare;
  bare.contactShapes = false;
  EXPECT_EQ(count(sceneVisuals(scene, bare), ShapeRole::Inertia), static_cast<std::size_t>(nb));
}

// The page holds three.js, the player and the recording; a recording of another scene is refused.
TEST(Viewer, ThePageHoldsThreeJsThePlayerAndTheRecording) {
  const Scene scene = loadSceneFile(kSource + "/scenes/double_pendulum.json");
  const SceneVisuals v = sceneVisuals(scene);
  ViewerFrames f;
  f.time = {0, 0.5};
  f.worlds = {0};
  f.poses.assign(2 * 7 * v.bodies.size(), 0.0f);
  const std::string html = viewerHtml(v, f, {"double pendulum", false});
  EXPECT_NE(html.find("OrbitControls"), std::string::npos);
  EXPECT_NE(html.find("lockstep-data"), std::string::npos);
  EXPECT_NE(html.find("\"time\":[0.0,0.5]"), std::string::npos);
  EXPECT_EQ(html.find("</script>\n<script>\n</script>"), std::string::npos);
  f.poses.pop_back();
  EXPECT_THROW(viewerHtml(v, f, {}), std::runtime_error);
}

// Off-screen frames: not uniform, and a different pose gives a different picture; one world alone
// and the same world beside another are drawn from the same MJCF shapes.
TEST(Frames, APictureFollowsThePoses) {
  const Scene scene = loadSceneFile(kSource + "/scenes/double_pendulum.json");
  const SceneVisuals v = sceneVisuals(scene);
  FrameRenderer r(v, 160, 120);
  Batch<double> batch(scene.model, 2, Backend::Cpu);
  applyScene(scene, batch);
  batch.setQ(1, std::vector<double>{1.2, -0.8});
  batch.evaluate();
  auto posesOf = [&](std::int64_t w) {
    std::vector<double> p;
    for (int b = 0; b < scene.model->numBodies(); ++b) {
      const Transformd X = batch.bodyPose(w, b);
      double q[4];
      X.R.toQuaternion(q);
      for (double x : {X.p[0], X.p[1], X.p[2], q[0], q[1], q[2], q[3]}) p.push_back(x);
    }
    return p;
  };
  RenderCamera camera;  // fixed, so that only the bodies move
  camera.automatic = false;
  camera.lookAt = {{0, 0, 0}};
  camera.distance = 4;
  const std::vector<std::uint8_t> a = r.render(posesOf(0).data(), camera), b = r.render(posesOf(1).data(), camera);
  ASSERT_EQ(a.size(), 160u * 120u * 3u);
  EXPECT_NE(a, b);
  EXPECT_NE(std::set<std::uint8_t>(a.begin(), a.end()).size(), 1u);
  EXPECT_EQ(a, r.render(posesOf(0).data(), camera));  // the same pose, the same picture
  EXPECT_NE(r.mjcf().find("mocap=\"true\""), std::string::npos);
}

class ViewCommand : public CliTest {};

TEST_F(ViewCommand, SimulateViewAndRenderWriteTheirFiles) {
  const std::string scene = kSource + "/scenes/solo12-stand.json";
  const std::string npz = (dir_ / "run.npz").string(), html = (dir_ / "run.html").string();
  CliResult r = run("simulate " + scene + " --worlds 4 --steps 200 --out " + npz +
                    " --record bodyPose,ground.force,ground.contact_point --view " + html);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(html));
  EXPECT_NE(r.out.find("view "), std::string::npos) << r.out;
  // The page from the recording, in a grid coloured by a recorded column.
  r = run("view " + npz + " --scene " + scene + " --grid 4 --color-by body.base_link.z --out " + (dir_ / "grid.html").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(readText(dir_ / "grid.html").find("\"color_by\":\"body.base_link.z\""), std::string::npos);
  // A picture and a video.
  r = run("render " + npz + " --scene " + scene + " --out " + (dir_ / "shot.png").string() + " --width 64 --height 48");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readText(dir_ / "shot.png").substr(1, 3), "PNG");
  r = run("render " + npz + " --scene " + scene + " --worlds 1,3 --out " + (dir_ / "run.mp4").string() +
          " --width 64 --height 48 --fps 100");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(11 frames"), std::string::npos) << r.out;  // 0.1 s at 100 frames per second
  EXPECT_FALSE(fs::exists(dir_ / "run.mp4.partial"));
  EXPECT_NE(r.out.find("drawn with OSMesa"), std::string::npos) << r.out;  // no GPU here: the CPU's OpenGL
  // EGL, as on a GPU, here on Mesa's software device: the same command, the same kind of picture.
  r = run("render " + npz + " --scene " + scene + " --out " + (dir_ / "egl.png").string() + " --width 64 --height 48",
          "LOCKSTEP_GL=egl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("drawn with EGL"), std::string::npos) << r.out;
  EXPECT_EQ(readText(dir_ / "egl.png").substr(1, 3), "PNG");
  r = run("render " + npz + " --scene " + scene + " --out " + (dir_ / "bad.png").string(), "LOCKSTEP_GL=vulkan");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("LOCKSTEP_GL=vulkan: give egl, osmesa or auto"), std::string::npos) << r.err;
}

// Under MuJoCo's law (an MJCF file's default) the arrows are the plane and pair contacts' points
// (softContact: the point and the force in Ground): the page simulate writes and the page view makes
// from the recording of the same frames hold the same arrows, one per soft contact point, some of
// them pressing (Ant's feet on the floor).
TEST_F(ViewCommand, SoftContactArrowsComeLiveAndFromTheRecording) {
  const std::string ant = kSource + "/models/mjcf/ant.xml";
  const std::string npz = (dir_ / "ant.npz").string(), live = (dir_ / "live.html").string();
  CliResult r = run("simulate " + ant + " --worlds 2 --steps 60 --record-every 20 --out " + npz +
                    " --record bodyPose,softContact --view " + live);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = (dir_ / "page.html").string();
  r = run("view " + npz + " --scene " + ant + " --worlds 0,1 --out " + page);
  ASSERT_EQ(r.status, 0) << r.err;
  const MjcfImport mjcf = importMjcfFile(ant);
  const std::string contacts = "\"contacts\":" + std::to_string(sizesOf(*mjcf.model).nSoftPoints) + ",";
  ASSERT_GT(sizesOf(*mjcf.model).nSoftPoints, 0);
  auto forces = [&](const std::string& html) {
    EXPECT_NE(html.find(contacts), std::string::npos) << contacts;
    const std::size_t at = html.find("\"contact_forces\":\"");
    EXPECT_NE(at, std::string::npos);
    return at == std::string::npos ? std::string() : html.substr(at, html.find('"', at + 18) - at);
  };
  const std::string a = forces(readText(live)), b = forces(readText(page));
  EXPECT_GT(a.size(), 100u);
  EXPECT_EQ(a, b);
  // The recording's forces in Ground: the same force as in the contact frame, and some pressing up.
  const std::map<std::string, NpyArray> arrays = readNpz(npz);
  ASSERT_TRUE(arrays.count("softContact"));
  const NpyArray& soft = arrays.at("softContact");  // [frames, worlds, components]
  ASSERT_EQ(soft.shape.size(), 3u);
  const std::int64_t points = sizesOf(*mjcf.model).nSoftPoints, width = soft.shape[2] / points;
  ASSERT_EQ(width, kSoftContactValues);
  const std::vector<double> values = soft.doubles();
  auto last = [&](std::int64_t c) { return values[((soft.shape[0] - 1) * soft.shape[1]) * soft.shape[2] + c]; };
  double up = 0;
  for (std::int64_t p = 0; p < points; ++p) {
    const double normal = last(p * width + 8);
    double inFrame = 0, inGround = 0;
    for (int k = 0; k < 3; ++k) {
      inFrame += std::pow(last(p * width + 8 + k), 2);
      inGround += std::pow(last(p * width + 11 + k), 2);
    }
    EXPECT_NEAR(std::sqrt(inFrame), std::sqrt(inGround), 1e-9 * (1 + std::sqrt(inFrame)));
    up = std::max(up, normal);
  }
  EXPECT_GT(up, 1.0);  // newtons: a foot on the floor
}

TEST_F(ViewCommand, WhatIsMissingIsSaid) {
  const std::string npz = (dir_ / "run.npz").string();
  ASSERT_EQ(run("simulate --worlds 2 --steps 10 --out " + npz).status, 0);
  CliResult r = run("view " + npz);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no body poses"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--record bodyPose"), std::string::npos) << r.err;
  ASSERT_EQ(run("simulate --worlds 2 --steps 10 --out " + npz + " --record bodyPose").status, 0);
  r = run("view " + npz + " --scene " + kSource + "/scenes/double_pendulum.json");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("give the scene the recording is of with --scene"), std::string::npos) << r.err;
  r = run("view " + npz + " --color-by nothing.of.the.kind");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--color-by nothing.of.the.kind"), std::string::npos) << r.err;
  r = run("render " + npz + " --out " + (dir_ / "x.avi").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(".mp4, .webm, .gif or .png"), std::string::npos) << r.err;
  EXPECT_TRUE(run("view " + npz + " --worlds 0,1 --out " + (dir_ / "ok.html").string()).status == 0);
}

}  // namespace
}  // namespace lockstep::test
