// Everything a viewer draws of a scene, body by body: the robot file's visual shapes with their
// meshes read (Assimp), the contact elements' spheres and half-spaces, and for a body that has no
// visual shape (scene files' "bodies", a mesh that cannot be found) its inertia box and a rod from
// its joint to its center of mass. Used by the browser viewer (html_viewer.h) and the off-screen
// frames (frames.h); docs/viewer.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/io/scene.h"
#include "lockstep/io/visual_shape.h"

namespace lockstep {

struct VisualOptions {
  // Folders that "package://PKG/PATH" and relative mesh names are looked up in (as DIR/PKG/PATH,
  // then DIR/PATH), after the robot file's own folder; then the folders of LOCKSTEP_MESH_PATH and
  // ROS_PACKAGE_PATH.
  std::vector<std::string> meshPaths;
  // Draw the ground contacts' spheres (except on bodies that MJCF geoms draw) and the sphere
  // contacts' spheres.
  bool contactShapes = true;
  // The most triangles of all meshes together; more is refused naming the largest mesh.
  std::int64_t maxTriangles = 4'000'000;
};

enum class ShapeRole { Visual, Contact, Inertia };

struct DrawnShape {
  VisualShape shape;  // meshes have their vertices and triangles
  int body = -1;      // index into Model::bodies(); -1: Ground
  ShapeRole role = ShapeRole::Visual;
};

struct SceneVisuals {
  std::vector<std::string> bodies;  // the model's body names, by index
  std::vector<DrawnShape> shapes;
  std::vector<std::string> warnings;  // one per mesh that could not be read, naming it and why
};

// Throws InputError for a mesh file that exists but cannot be read, naming it and Assimp's reason,
// and for meshes beyond options.maxTriangles.
SceneVisuals sceneVisuals(const Scene& scene, const VisualOptions& options = {});

// Reads a mesh file (STL, OBJ, Collada, ... whatever Assimp reads) into vertices and triangles,
// scaled along x, y, z. Throws InputError naming the file and the reason.
void readMesh(const std::string& path, const Vec3d& scale, std::vector<float>& vertices,
              std::vector<std::int32_t>& triangles);

// How far the moving bodies' shapes reach from their bodies' origins (the largest, in m; 0
// without shapes): what viewers space worlds and frame the camera by.
double shapeReach(const SceneVisuals& visuals);

// The box of uniform density with the body's mass and central inertia (half-sizes, along the
// inertia's principal axes, placed at the center of mass): what MuJoCo draws as "inertia".
// Zero size for a massless body.
VisualShape inertiaBox(const MassProperties& mass);

}  // namespace lockstep
