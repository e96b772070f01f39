// MuJoCo's names of its objects and enums, as the MJCF import's messages and sensor map spell them.
// Private to host/io/.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

namespace lockstep {

// An object's name, or `fallback` when it has none.
inline std::string nameOf(const mjModel* m, mjtObj type, int id, const std::string& fallback) {
  const char* name = mj_id2name(m, type, id);
  return name && *name ? std::string(name) : fallback;
}

inline const char* jointTypeName(int type) {
  switch (type) {
    case mjJNT_FREE: return "free";
    case mjJNT_BALL: return "ball";
    case mjJNT_SLIDE: return "slide";
    case mjJNT_HINGE: return "hinge";
  }
  return "unknown";
}

inline const char* geomTypeName(int type) {
  switch (type) {
    case mjGEOM_PLANE: return "plane";
    case mjGEOM_HFIELD: return "hfield";
    case mjGEOM_SPHERE: return "sphere";
    case mjGEOM_CAPSULE: return "capsule";
    case mjGEOM_ELLIPSOID: return "ellipsoid";
    case mjGEOM_CYLINDER: return "cylinder";
    case mjGEOM_BOX: return "box";
    case mjGEOM_MESH: return "mesh";
  }
  return "other";
}

inline const char* sensorTypeName(int type) {
  switch (type) {
    case mjSENS_TOUCH: return "touch";
    case mjSENS_ACCELEROMETER: return "accelerometer";
    case mjSENS_VELOCIMETER: return "velocimeter";
    case mjSENS_GYRO: return "gyro";
    case mjSENS_FORCE: return "force";
    case mjSENS_TORQUE: return "torque";
    case mjSENS_MAGNETOMETER: return "magnetometer";
    case mjSENS_RANGEFINDER: return "rangefinder";
    case mjSENS_JOINTPOS: return "jointpos";
    case mjSENS_JOINTVEL: return "jointvel";
    case mjSENS_TENDONPOS: return "tendonpos";
    case mjSENS_TENDONVEL: return "tendonvel";
    case mjSENS_ACTUATORPOS: return "actuatorpos";
    case mjSENS_ACTUATORVEL: return "actuatorvel";
    case mjSENS_ACTUATORFRC: return "actuatorfrc";
    case mjSENS_BALLQUAT: return "ballquat";
    case mjSENS_BALLANGVEL: return "ballangvel";
    case mjSENS_FRAMEPOS: return "framepos";
    case mjSENS_FRAMEQUAT: return "framequat";
    case mjSENS_FRAMEXAXIS: return "framexaxis";
    case mjSENS_FRAMEYAXIS: return "frameyaxis";
    case mjSENS_FRAMEZAXIS: return "framezaxis";
    case mjSENS_FRAMELINVEL: return "framelinvel";
    case mjSENS_FRAMEANGVEL: return "frameangvel";
    case mjSENS_FRAMELINACC: return "framelinacc";
    case mjSENS_FRAMEANGACC: return "frameangacc";
    case mjSENS_SUBTREECOM: return "subtreecom";
    case mjSENS_SUBTREELINVEL: return "subtreelinvel";
    case mjSENS_SUBTREEANGMOM: return "subtreeangmom";
    case mjSENS_CLOCK: return "clock";
  }
  return "other";
}

}  // namespace lockstep
