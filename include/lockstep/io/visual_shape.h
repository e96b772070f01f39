// What a body looks like: the visual shapes that robot files attach to bodies (URDF <visual>,
// MJCF geoms), placed on the Lockstep body that carries them. Viewers draw them (docs/viewer.md);
// the physics never reads them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/physics/math.h"

namespace lockstep {

enum class ShapeKind { Box, Sphere, Cylinder, Capsule, Ellipsoid, Mesh, Plane };

// "box", "sphere", ... as viewers and messages name them.
const char* shapeKindName(ShapeKind kind);

struct VisualShape {
  std::string body;  // the Lockstep body carrying it, or "ground"
  ShapeKind kind = ShapeKind::Box;
  Transform<double> X_BS = Transform<double>::identity();  // the shape's frame S on the body; cylinders and capsules lie along z
  // Box: half-sizes; Sphere: the radius in x; Cylinder, Capsule: radius, half-length; Ellipsoid:
  // semi-axes; Mesh: the scale along S's axes; Plane (z is its normal): half-sizes in x and y,
  // 0 for unbounded.
  Vec3<double> size = Vec3<double>::zero();
  std::array<double, 4> rgba = {{0.7, 0.7, 0.7, 1.0}};
  // Mesh: the file as the robot file names it ("package://...", relative or absolute) and the
  // folder relative names resolve against; empty when the triangles came with the shape (MJCF).
  std::string meshFile, meshBase;
  // Mesh: vertices (x y z, in S, scaled) and triangles (three vertex indices each), once loaded.
  std::vector<float> vertices;
  std::vector<std::int32_t> triangles;
  std::string source;  // what it came from, for messages: "link 'base' visual 0", "geom 'torso'"
};

}  // namespace lockstep
