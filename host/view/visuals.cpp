#include "lockstep/view/visuals.h"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

namespace lockstep {

namespace fs = std::filesystem;

const char* shapeKindName(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::Box: return "box";
    case ShapeKind::Sphere: return "sphere";
    case ShapeKind::Cylinder: return "cylinder";
    case ShapeKind::Capsule: return "capsule";
    case ShapeKind::Ellipsoid: return "ellipsoid";
    case ShapeKind::Mesh: return "mesh";
    case ShapeKind::Plane: return "plane";
  }
  return "?";
}

namespace {

std::vector<std::string> splitPath(const char* value) {
  std::vector<std::string> out;
  if (!value) return out;
  std::stringstream s(value);
  for (std::string dir; std::getline(s, dir, ':');)
    if (!dir.empty()) out.push_back(dir);
  return out;
}

// LOCKSTEP_MESH_PATH and ROS_PACKAGE_PATH, split at ':'.
std::vector<std::string> meshPathsFromEnvironment() {
  std::vector<std::string> out = splitPath(std::getenv("LOCKSTEP_MESH_PATH"));
  for (const std::string& d : splitPath(std::getenv("ROS_PACKAGE_PATH"))) out.push_back(d);
  return out;
}

// The files a mesh name may be, in the order they are tried.
std::vector<fs::path> meshCandidates(const VisualShape& s, const VisualOptions& o) {
  const std::string& name = s.meshFile;
  std::vector<fs::path> roots = {s.meshBase, fs::path(s.meshBase) / "..", fs::path(s.meshBase) / ".." / ".."};
  std::vector<std::string> folders = o.meshPaths;
  for (const std::string& d : meshPathsFromEnvironment()) folders.push_back(d);
  for (const std::string& d : folders) roots.push_back(d);
  std::vector<fs::path> out;
  if (name.rfind("file://", 0) == 0) return {fs::path(name.substr(7))};
  if (name.rfind("package://", 0) == 0) {
    const std::string rest = name.substr(10);
    const std::size_t slash = rest.find('/');
    const std::string package = rest.substr(0, slash), inPackage = slash == std::string::npos ? "" : rest.substr(slash + 1);
    for (const fs::path& r : roots) {
      out.push_back(r / package / inPackage);
      out.push_back(r / inPackage);
    }
    return out;
  }
  if (fs::path(name).is_absolute()) return {fs::path(name)};
  out.push_back(fs::path(s.meshBase) / name);
  for (const std::string& d : folders) out.push_back(fs::path(d) / name);
  return out;
}

// The rotation taking z onto the unit vector n.
Rotationd zOnto(const Vec3d& n) {
  const Eigen::Quaterniond q = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), Eigen::Vector3d(n[0], n[1], n[2]));
  return Rotationd::fromQuaternion(q.w(), q.x(), q.y(), q.z());
}

VisualShape sphereAt(const Vec3d& center, double radius, const std::string& source) {
  VisualShape s;
  s.kind = ShapeKind::Sphere;
  s.X_BS = {Rotationd::identity(), center};
  s.size = {{radius, 0, 0}};
  s.rgba = {{0.95, 0.55, 0.15, 1.0}};
  s.source = source;
  return s;
}

}  // namespace


void readMesh(const std::string& path, const Vec3d& scale, std::vector<float>& vertices,
              std::vector<std::int32_t>& triangles) {
  Assimp::Importer importer;
  // Keep the file's own axes (robot meshes are drawn in their link's frame, whatever the file's
  // up axis says); units are applied.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  const aiScene* scene = importer.ReadFile(
      path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices |
                aiProcess_SortByPType);
  if (!scene || !scene->mRootNode) throw InputError(path + ": cannot read the mesh: " + importer.GetErrorString());
  vertices.clear();
  triangles.clear();
  for (unsigned i = 0; i < scene->mNumMeshes; ++i) {
    const aiMesh& m = *scene->mMeshes[i];
    const auto first = static_cast<std::int32_t>(vertices.size() / 3);
    for (unsigned v = 0; v < m.mNumVertices; ++v)
      for (int k = 0; k < 3; ++k) vertices.push_back(static_cast<float>(m.mVertices[v][k] * scale[k]));
    for (unsigned f = 0; f < m.mNumFaces; ++f) {
      if (m.mFaces[f].mNumIndices != 3) continue;  // points and lines
      for (int k = 0; k < 3; ++k) triangles.push_back(first + static_cast<std::int32_t>(m.mFaces[f].mIndices[k]));
    }
  }
  for (float x : vertices)
    if (!std::isfinite(x)) throw InputError(path + ": the mesh has a vertex that is not a finite number");
  if (triangles.empty()) throw InputError(path + ": the mesh has no triangles");
}

double shapeReach(const SceneVisuals& visuals) {
  double reach = 0;
  for (const DrawnShape& s : visuals.shapes) {
    if (s.shape.kind == ShapeKind::Plane || s.body < 0) continue;
    double r = std::sqrt(dot(s.shape.X_BS.p, s.shape.X_BS.p));
    if (s.shape.kind == ShapeKind::Mesh) {
      double m = 0;
      for (std::size_t i = 0; i < s.shape.vertices.size(); i += 3)
        m = std::max<double>(m, std::hypot(s.shape.vertices[i], s.shape.vertices[i + 1], s.shape.vertices[i + 2]));
      r += m;
    } else {
      r += std::sqrt(dot(s.shape.size, s.shape.size));
    }
    reach = std::max(reach, std::min(r, 1e6));
  }
  return reach;
}

VisualShape inertiaBox(const MassProperties& mp) {
  VisualShape box;
  box.kind = ShapeKind::Box;
  box.rgba = {{0.55, 0.62, 0.75, 1.0}};
  if (!(mp.mass > 0)) return box;
  const SymMat33d& I = mp.inertia;
  Eigen::Matrix3d E;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) E(i, j) = I(i, j);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(E);
  Eigen::Matrix3d V = eig.eigenvectors();
  if (V.determinant() < 0) V.col(2) = -V.col(2);
  const Eigen::Vector3d p = eig.eigenvalues();
  Vec3d half;
  for (int k = 0; k < 3; ++k) {
    // A box of half-sizes a, b, c has I_x = m (b^2 + c^2) / 3.
    const double a2 = 1.5 / mp.mass * (p[(k + 1) % 3] + p[(k + 2) % 3] - p[k]);
    half[k] = std::sqrt(std::max(a2, 0.0));
  }
  const double largest = std::max({half[0], half[1], half[2]});
  for (int k = 0; k < 3; ++k) half[k] = std::max(half[k], largest > 0 ? 0.05 * largest : 0.02);
  Mat33<double> R;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R.m[i][j] = V(i, j);
  box.X_BS = {Rotationd{R}, mp.com};
  box.size = half;
  return box;
}

SceneVisuals sceneVisuals(const Scene& scene, const VisualOptions& options) {
  const Model& model = *scene.model;
  SceneVisuals out;
  for (const Body& b : model.bodies()) out.bodies.push_back(b.name);
  std::vector<bool> drawn(model.numBodies(), false);
  std::int64_t triangles = 0;
  std::vector<std::string> missing;
  for (const VisualShape& v : scene.visuals) {
    DrawnShape d{v, model.bodyIndex(v.body), ShapeRole::Visual};
    if (v.kind == ShapeKind::Mesh && v.vertices.empty()) {
      const std::vector<fs::path> candidates = meshCandidates(v, options);
      const auto found = std::find_if(candidates.begin(), candidates.end(),
                                      [](const fs::path& p) { std::error_code e; return fs::is_regular_file(p, e); });
      if (found == candidates.end()) {
        missing.push_back(v.source + ": " + v.meshFile);
        continue;
      }
      readMesh(found->lexically_normal().string(), v.size, d.shape.vertices, d.shape.triangles);
      d.shape.size = {{1, 1, 1}};
    }
    if (v.kind == ShapeKind::Mesh) {
      triangles += static_cast<std::int64_t>(d.shape.triangles.size() / 3);
      if (triangles > options.maxTriangles)
        throw InputError(v.source + ": the meshes have more than " + std::to_string(options.maxTriangles) +
                         " triangles in all; simplify them (this one: " + v.meshFile + ")");
    }
    if (d.body >= 0) drawn[d.body] = true;
    out.shapes.push_back(std::move(d));
  }
  if (!missing.empty())
    out.warnings.push_back(std::to_string(missing.size()) + " mesh file" + (missing.size() == 1 ? "" : "s") +
                           " not found (looked in the robot file's folder, its parents, --mesh-path, LOCKSTEP_MESH_PATH " +
                           "and ROS_PACKAGE_PATH); bodies without a shape are drawn as their inertia boxes. First: " +
                           missing.front());
  // A body with geoms of the compliant law's contacts (a scene's collision_geoms: a ball, a rod) is
  // drawn as them, below, where contact shapes are drawn.
  if (options.contactShapes) {
    auto shaped = [&](int b, SoftLawKind law) {
      if (b >= 0 && law == kLawCompliant) drawn[b] = true;
    };
    for (const PlaneContact& c : model.planeContacts()) shaped(c.body, c.desc.law);
    for (const PairContact& c : model.pairContacts()) {
      shaped(c.body1, c.desc.law);
      shaped(c.body2, c.desc.law);
    }
  }
  // Bodies without a visual shape: the inertia box, and a rod from the joint to the center of mass.
  for (int b = 0; b < model.numBodies(); ++b) {
    if (drawn[b]) continue;
    const Body& body = model.body(b);
    VisualShape box = inertiaBox(body.mass);
    box.source = "body '" + body.name + "': inertia box";
    if (body.mass.mass > 0) out.shapes.push_back({box, b, ShapeRole::Inertia});
    const Vec3d joint = body.X_BM.p, com = body.mass.com;
    const Vec3d d = com - joint;
    const double length = std::sqrt(dot(d, d));
    if (length > 1e-9) {
      VisualShape rod;
      rod.kind = ShapeKind::Capsule;
      rod.rgba = {{0.35, 0.38, 0.45, 1.0}};
      rod.X_BS = {zOnto(d * (1 / length)), (joint + com) * 0.5};
      rod.size = {{std::clamp(0.04 * length, 0.002, 0.02), length / 2, 0}};
      rod.source = "body '" + body.name + "': rod from its joint to its center of mass";
      out.shapes.push_back({rod, b, ShapeRole::Inertia});
    } else if (!(body.mass.mass > 0) || box.size[0] <= 0) {
      out.shapes.push_back({sphereAt(com, 0.02, "body '" + body.name + "': center of mass"), b, ShapeRole::Inertia});
    }
  }
  // The contact elements: their spheres, and each distinct half-space once.
  std::set<std::vector<double>> planes;
  for (const DrawnShape& s : out.shapes)
    if (s.shape.kind == ShapeKind::Plane) {
      const Vec3d n = s.shape.X_BS.R * Vec3d::unit(2);
      planes.insert({n[0], n[1], n[2], dot(n, s.shape.X_BS.p)});
    }
  // MJCF geoms already draw what touches the ground (the contact spheres sit inside them).
  std::vector<bool> geomDrawn(model.numBodies(), false);
  for (const DrawnShape& s : out.shapes)
    if (s.body >= 0 && s.role == ShapeRole::Visual && s.shape.source.rfind("geom ", 0) == 0) geomDrawn[s.body] = true;
  auto addPlane = [&](const Vec3d& normal, const Vec3d& point, const std::string& source) {
    const Vec3d n = normal * (1 / std::sqrt(dot(normal, normal)));
    const std::vector<double> key = {n[0], n[1], n[2], dot(n, point)};
    for (const std::vector<double>& p : planes)
      if (std::abs(p[0] - key[0]) + std::abs(p[1] - key[1]) + std::abs(p[2] - key[2]) + std::abs(p[3] - key[3]) < 1e-9)
        return;
    planes.insert(key);
    VisualShape plane;
    plane.kind = ShapeKind::Plane;
    plane.X_BS = {zOnto(n), point};
    plane.rgba = {{0.82, 0.84, 0.86, 1.0}};
    plane.source = source + ": half-space";
    out.shapes.push_back({plane, -1, ShapeRole::Contact});
  };
  for (const GroundContact& g : model.groundContacts()) {
    const GroundContactDesc& c = g.desc;
    if (options.contactShapes && !geomDrawn[g.body])
      out.shapes.push_back({sphereAt(c.center, c.radius, "ground contact '" + c.name + "'"), g.body, ShapeRole::Contact});
    addPlane(c.planeNormal, c.planePoint, "ground contact '" + c.name + "'");
  }
  // The compliant law's plane and pair contacts (a scene's implicit step): their spheres and
  // capsules, each once, on bodies that no MJCF geom draws.
  std::set<std::vector<double>> contactGeoms;
  auto addGeom = [&](int body, PlaneContactShape shape, const Transformd& X_BG, const Vec3d& size,
                     const std::string& source) {
    if (!options.contactShapes || (body >= 0 && geomDrawn[body])) return;
    std::vector<double> key = {double(body), double(shape), size[0], size[1]};
    for (int i = 0; i < 3; ++i) {
      key.push_back(X_BG.p[i]);
      for (int j = 0; j < 3; ++j) key.push_back(X_BG.R(i, j));
    }
    if (!contactGeoms.insert(key).second) return;
    VisualShape v = sphereAt(X_BG.p, size[0], source);
    if (shape == kShapeCapsule) {
      v.kind = ShapeKind::Capsule;
      v.X_BS = X_BG;
      v.size = {{size[0], size[1], 0}};
    }
    out.shapes.push_back({v, body, ShapeRole::Contact});
  };
  for (const PlaneContact& c : model.planeContacts()) {
    if (c.desc.law != kLawCompliant) continue;
    addGeom(c.body, c.desc.shape, c.desc.X_BG, c.desc.size, "plane contact '" + c.desc.name + "'");
    addPlane(c.desc.planeNormal, c.desc.planePoint, "plane contact '" + c.desc.name + "'");
  }
  for (const PairContact& c : model.pairContacts()) {
    if (c.desc.law != kLawCompliant) continue;
    addGeom(c.body1, c.desc.shape1, c.desc.X_BG1, c.desc.size1, "pair contact '" + c.desc.name + "': first geom");
    addGeom(c.body2, c.desc.shape2, c.desc.X_BG2, c.desc.size2, "pair contact '" + c.desc.name + "': second geom");
  }
  if (options.contactShapes)
    for (const SphereContact& c : model.contacts()) {
      out.shapes.push_back({sphereAt(c.desc.centerOnF, c.desc.radiusOnF, "contact '" + c.desc.name + "' on F"), c.bodyF,
                            ShapeRole::Contact});
      out.shapes.push_back({sphereAt(c.desc.centerOnB, c.desc.radiusOnB, "contact '" + c.desc.name + "' on B"), c.bodyB,
                            ShapeRole::Contact});
    }
  return out;
}

}  // namespace lockstep
