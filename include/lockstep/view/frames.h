// Frames of a scene's worlds as pictures, drawn off-screen without a display: MuJoCo's renderer
// (Debian's libmujoco) fed a model of mocap bodies that carry the scene's visual shapes
// (visuals.h), on EGL with a GPU, else on OSMesa (Debian's libosmesa6, on the CPU). Used by
// `lockstep render` and Python's Batch.render(); docs/viewer.md says why this renderer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/view/visuals.h"

namespace lockstep {

// Where the camera looks from. Automatic: at the middle of the shown worlds' body origins, from
// `distance` or, when it is 0, a distance that frames them; else at lookAt from `distance` (0: 3 m).
// Azimuth and elevation are used either way. render() refuses values that are not finite.
struct RenderCamera {
  bool automatic = true;
  Vec3d lookAt = Vec3d::zero();
  double distance = 0;      // m; >= 0
  double azimuth = 135;     // degrees about z (MuJoCo's convention)
  double elevation = -20;   // degrees
};

class FrameRenderer {
 public:
  // Draws `worlds` worlds of the scene side by side on a grid `spacing` apart (0: from the
  // shapes' reach), width x height pixels. Throws std::runtime_error when OSMesa cannot make a
  // context or MuJoCo refuses the model (naming the shape).
  FrameRenderer(const SceneVisuals& visuals, int width, int height, int worlds = 1, double spacing = 0);
  ~FrameRenderer();
  FrameRenderer(const FrameRenderer&) = delete;
  FrameRenderer& operator=(const FrameRenderer&) = delete;

  // poses: [world][body][7], x y z qw qx qy qz (bodyPose). Returns height x width x 3 bytes (RGB,
  // the top row first). Safe to call from several threads (one frame is drawn at a time).
  std::vector<std::uint8_t> render(const double* poses, const RenderCamera& camera = {});

  int width() const { return width_; }
  int height() const { return height_; }
  int worlds() const { return worlds_; }
  int bodies() const { return bodies_; }
  // The OpenGL every renderer of the process draws with, chosen at the first: EGL on a GPU device
  // when one initializes, else OSMesa; LOCKSTEP_GL=egl (any EGL device, Mesa's software one too)
  // or osmesa decides. Throws std::runtime_error for another LOCKSTEP_GL, or egl without a device.
  static std::string context();
  // The MJCF text of the model drawn (for tests and for reading it into MuJoCo elsewhere).
  const std::string& mjcf() const { return mjcf_; }

 private:
  struct Gl;
  std::unique_ptr<Gl> gl_;
  int width_, height_, worlds_, bodies_;
  double spacing_;
  std::string mjcf_;
};

// The MJCF FrameRenderer draws: one world of mocap bodies (one per body, then one per shape fixed
// on Ground other than a plane), and the ground's planes on the world body (geom group 3) sized for
// `worlds` worlds `spacing` apart. Each frame places the mocap bodies at each world in turn and
// gathers every world's geoms into one scene, so that the model stays one world's size (MuJoCo's
// compiler takes time and stack growing with the square of the bodies) whatever the worlds shown.
std::string visualsMjcf(const SceneVisuals& visuals, int width, int height, int worlds, double spacing);

}  // namespace lockstep
