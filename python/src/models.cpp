// lockstep._ext, models: the Model class (a scene and its model: names, sizes, the MJCF layout,
// MuJoCo's state map), scene loading and description, and the off-screen renderer.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ext.h"
#include "lockstep/engine/batch.h"
#include "lockstep/engine/fields.h"
#include "lockstep/engine/quantities.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene_description.h"
#include "lockstep/view/frames.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace lockstep::python {

namespace {

// ---- models -----------------------------------------------------------------------------------

// contactLaw: "" (the file's default), "mujoco" or "compliant" (an MJCF file read on its own).
PyModel loadScene(const std::string& path, bool repairInertia, const std::string& contactLaw) {
  SceneOptions o;
  o.repairInertia = repairInertia;
  if (!contactLaw.empty()) o.mjcfLaw = parseMjcfContactLaw(contactLaw);
  return {std::make_shared<const Scene>(loadSceneFile(path, o))};
}

PyModel parseSceneText(const std::string& json, const std::string& source, const std::string& baseDirectory,
                       bool repairInertia) {
  SceneOptions o;
  o.repairInertia = repairInertia;
  return {std::make_shared<const Scene>(parseScene(json, source, baseDirectory, o))};
}

// How an MJCF import maps onto Lockstep (io/mjcf.h): joints, actuators, MuJoCo's bodies with their
// placement and mass properties, sites, sensors, MuJoCo's sizes, qpos0 and timestep; the joints,
// bodies, sites and sensors are the model's elements (model.h MujocoJoint, MujocoBody, ...).
nb::dict mjcfLayout(const MjcfImport& imp, const Model& model) {
  const auto transform = [](const Transformd& X) {
    std::vector<double> out;
    appendTransform(out, X);
    return out;  // R row-major, then p
  };
  nb::dict d;
  d["model_name"] = imp.modelName;
  d["timestep"] = imp.timestep;
  d["nq"] = imp.mujocoNq;
  d["nv"] = imp.mujocoNv;
  d["qpos0"] = qToMujoco(imp, imp.q0);
  nb::list joints, actuators, bodies, sites, sensors;
  for (const MujocoJoint& j : model.mujocoJoints()) {
    nb::dict e;
    e["name"] = j.desc.name;
    e["type"] = std::vector<const char*>{"free", "ball", "slide", "hinge"}.at(j.desc.type);
    e["qpos_adr"] = j.desc.qposAdr;
    e["dof_adr"] = j.desc.dofAdr;
    e["q_offset"] = j.q;
    e["u_offset"] = j.u;
    joints.append(e);
  }
  for (const MjcfActuator& a : imp.actuators) {
    nb::dict e;
    e["name"] = a.name;
    e["kind"] = a.kind;
    e["joint"] = a.joint;
    e["u"] = a.u;
    e["gear"] = a.gear;
    e["drives_target"] = a.drivesTarget;
    e["ctrl_range"] = std::vector<double>{a.controlLower, a.controlUpper};
    actuators.append(e);
  }
  for (const MujocoBody& b : model.mujocoBodies()) {
    nb::dict e;
    e["name"] = b.desc.name;
    e["parent"] = b.desc.parent;
    e["root"] = b.desc.root;
    e["body"] = b.desc.body;
    e["X_BL"] = transform(b.desc.X_BL);
    e["mass"] = b.desc.mass.mass;
    e["com"] = std::vector<double>{b.desc.mass.com[0], b.desc.mass.com[1], b.desc.mass.com[2]};
    const SymMat33d& I = b.desc.mass.inertia;
    e["inertia"] = std::vector<double>{I.xx, I.yy, I.zz, I.xy, I.xz, I.yz};
    bodies.append(e);
  }
  for (const Site& site : model.sites()) {
    const SiteDesc& s = site.desc;
    nb::dict e;
    e["name"] = s.name;
    e["body"] = s.body;
    e["X_BS"] = transform(s.X_BS);
    sites.append(e);
  }
  for (const Sensor& sensor : model.sensors()) {
    const SensorDesc& s = sensor.desc;
    nb::dict e;
    e["name"] = s.name;
    e["type"] = s.type;
    e["object_type"] = s.objectType;
    e["object"] = s.object;
    e["dimension"] = s.dimension;
    e["offset"] = sensor.offset;
    sensors.append(e);
  }
  d["joints"] = joints;
  d["actuators"] = actuators;
  d["bodies"] = bodies;
  d["sites"] = sites;
  d["sensors"] = sensors;
  d["warnings"] = imp.warnings;
  return d;
}

// Lockstep's q and u of states given as MuJoCo's qpos [n, nq] and qvel [n, nv], by the model's MuJoCo
// joints (io/mjcf.h qFromMujoco, uFromMujoco: quaternions normalized): new arrays [n, nq] and [n, nu].
nb::tuple stateFromMujoco(const PyModel& p, nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> qpos,
                          nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> qvel) {
  const Model& model = *p.scene->model;
  const Sizes s = sizesOf(model);
  const std::size_t n = qpos.shape(0);
  if (model.mujocoJoints().empty()) throw std::invalid_argument("from_mujoco: the model was not imported from MJCF");
  if (qpos.shape(1) != std::size_t(s.nMujocoQpos) || qvel.shape(1) != std::size_t(s.nMujocoDof) || qvel.shape(0) != n)
    throw std::invalid_argument("from_mujoco: expected qpos [n, " + std::to_string(s.nMujocoQpos) + "] and qvel [n, " +
                                std::to_string(s.nMujocoDof) + "], got [" + std::to_string(n) + ", " +
                                std::to_string(qpos.shape(1)) + "] and [" + std::to_string(qvel.shape(0)) + ", " +
                                std::to_string(qvel.shape(1)) + "]");
  auto* q = new std::vector<double>(n * std::size_t(model.nq()));
  auto* u = new std::vector<double>(n * std::size_t(model.nu()));
  for (std::size_t i = 0; i < n; ++i) {
    const double* qp = qpos.data() + i * qpos.shape(1);
    const std::vector<double> qi = qFromMujoco(model, qp), ui = uFromMujoco(model, qp, qvel.data() + i * qvel.shape(1));
    std::copy(qi.begin(), qi.end(), q->begin() + i * qi.size());
    std::copy(ui.begin(), ui.end(), u->begin() + i * ui.size());
  }
  nb::capsule qOwner(q, [](void* x) noexcept { delete static_cast<std::vector<double>*>(x); });
  nb::capsule uOwner(u, [](void* x) noexcept { delete static_cast<std::vector<double>*>(x); });
  return nb::make_tuple(nb::ndarray<nb::numpy, double>(q->data(), {n, std::size_t(model.nq())}, qOwner),
                        nb::ndarray<nb::numpy, double>(u->data(), {n, std::size_t(model.nu())}, uOwner));
}

}  // namespace

void bindModels(nb::module_& m) {
  nb::class_<PyModel>(m, "Model")
      .def_prop_ro("name", [](const PyModel& p) { return p.scene->name; })
      .def_prop_ro("source", [](const PyModel& p) { return p.scene->source; })
      .def_prop_ro("description", [](const PyModel& p) { return p.scene->description; })
      .def_prop_ro("warnings", [](const PyModel& p) { return p.scene->warnings; })
      .def_prop_ro("nq", [](const PyModel& p) { return p.scene->model->nq(); })
      .def_prop_ro("nu", [](const PyModel& p) { return p.scene->model->nu(); })
      .def_prop_ro("nz", [](const PyModel& p) { return p.scene->model->nz(); })
      .def_prop_ro("coordinate_names", [](const PyModel& p) { return p.scene->model->qNames(); })
      .def_prop_ro("speed_names", [](const PyModel& p) { return p.scene->model->uNames(); })
      .def_prop_ro("quaternions", [](const PyModel& p) {
        // (first q, first u) of every Ball and Free mobilizer's quaternion (w, x, y, z) and its
        // angular speeds: where the tangent space differs from the coordinates.
        std::vector<std::pair<int, int>> out;
        for (const Body& b : p.scene->model->bodies())
          if (mobilizerQuaternionIndex(b.mobilizer) == 0) out.emplace_back(b.qOffset, b.uOffset);
        return out;
      })
      .def_prop_ro("auxiliary_names", [](const PyModel& p) { return p.scene->model->zNames(); })
      .def_prop_ro("body_names", [](const PyModel& p) {
        std::vector<std::string> names;
        for (const Body& b : p.scene->model->bodies()) names.push_back(b.name);
        return names;
      })
      .def_prop_ro("parameter_names", [](const PyModel& p) {
        std::vector<std::string> names;
        for (const FieldInfo& f : parameterFields())
          for (std::string& n : publicNames(*p.scene->model, f)) names.push_back(std::move(n));
        return names;
      })
      .def_prop_ro("effort_limit", [](const PyModel& p) { return p.scene->model->effortLimit(); })
      .def_prop_ro("initial_q", [](const PyModel& p) { return p.scene->q0; })
      .def_prop_ro("initial_u", [](const PyModel& p) { return p.scene->u0; })
      .def_prop_ro("dt", [](const PyModel& p) { return p.scene->simulation.dt; })
      .def_prop_ro("steps", [](const PyModel& p) { return p.scene->simulation.steps; })
      .def_prop_ro("integrator", [](const PyModel& p) {
        return std::string(p.scene->simulation.integrator == Integrator::RK4 ? "rk4" : "euler");
      })
      .def_prop_ro("default_worlds", [](const PyModel& p) { return p.scene->simulation.worlds; })
      .def("quantity_components", [](const PyModel& p, const std::string& name) {
        const Quantity* q = findQuantity(name);
        if (!q) throw std::invalid_argument("no recordable quantity named '" + name + "'; they are: " + quantityNames());
        return publicNames(*p.scene->model, q->info);
      }, "name"_a)
      .def_prop_ro("sensor_names", [](const PyModel& p) { return p.scene->model->sensorDataNames(); })
      .def("from_mujoco", &stateFromMujoco, "qpos"_a, "qvel"_a,
           "Lockstep's q [n, nq] and u [n, nu] of states given as MuJoCo's qpos [n, nq] and qvel [n, nv]")
      .def_prop_ro("mjcf_layout",
                   [](const PyModel& p) -> nb::object {
                     if (!p.scene->mjcf) return nb::none();
                     return mjcfLayout(*p.scene->mjcf, *p.scene->model);
                   },
                   "How the MJCF file the scene imported maps onto Lockstep (None for other scenes)")
      .def("field_components", [](const PyModel& p, const std::string& name) {
        const FieldInfo* f = findField(name);
        if (!f) throw std::invalid_argument("no field named '" + name + "'");
        return publicNames(*p.scene->model, *f);
      }, "name"_a);

  // Off-screen frames of a model's worlds (view/frames.h): MuJoCo's renderer on OSMesa. render()
  // takes poses [worlds, bodies, 7] (bodyPose rows) and returns an (H, W, 3) uint8 array.
  nb::class_<FrameRenderer>(m, "FrameRenderer")
      .def("__init__", [](FrameRenderer* r, const PyModel& p, int width, int height, int worlds,
                          const std::vector<std::string>& meshPaths) {
        VisualOptions o;
        o.meshPaths = meshPaths;
        new (r) FrameRenderer(sceneVisuals(*p.scene, o), width, height, worlds);
      }, "model"_a, "width"_a, "height"_a, "worlds"_a = 1, "mesh_paths"_a = std::vector<std::string>{})
      .def_prop_ro("width", &FrameRenderer::width)
      .def_prop_ro("height", &FrameRenderer::height)
      .def_prop_ro("worlds", &FrameRenderer::worlds)
      .def_prop_ro("mjcf", &FrameRenderer::mjcf)
      .def("render", [](FrameRenderer& r, nb::ndarray<const double, nb::ndim<3>, nb::device::cpu, nb::c_contig> poses,
                        const std::vector<double>& lookAt, double distance, double azimuth, double elevation) {
        if (poses.shape(0) != static_cast<std::size_t>(r.worlds()) || poses.shape(1) != static_cast<std::size_t>(r.bodies()) ||
            poses.shape(2) != 7)
          throw std::invalid_argument("poses: shape must be (" + std::to_string(r.worlds()) + ", " + std::to_string(r.bodies()) +
                                      ", 7): worlds, bodies, bodyPose (x y z qw qx qy qz)");
        RenderCamera camera;
        camera.automatic = lookAt.empty();
        if (!camera.automatic) {
          if (lookAt.size() != 3) throw std::invalid_argument("camera lookat: three numbers (x, y, z)");
          camera.lookAt = {{lookAt[0], lookAt[1], lookAt[2]}};
        }
        // 0: following, a distance that frames the worlds; at lookat, 3 m.
        if (!(distance >= 0) || !std::isfinite(distance)) throw std::invalid_argument("camera distance: must be a finite number > 0");
        camera.distance = distance;
        camera.azimuth = azimuth;
        camera.elevation = elevation;
        std::vector<std::uint8_t> pixels;
        {
          nb::gil_scoped_release release;
          pixels = r.render(poses.data(), camera);
        }
        auto* owned = new std::vector<std::uint8_t>(std::move(pixels));
        nb::capsule free(owned, [](void* v) noexcept { delete static_cast<std::vector<std::uint8_t>*>(v); });
        const std::size_t shape[3] = {static_cast<std::size_t>(r.height()), static_cast<std::size_t>(r.width()), 3};
        return nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<3>>(owned->data(), 3, shape, free);
      }, "poses"_a, "lookat"_a = std::vector<double>{}, "distance"_a = 0.0, "azimuth"_a = 135.0, "elevation"_a = -20.0);
  m.def("load_scene", &loadScene, "path"_a, "repair_inertia"_a, "contact_law"_a = "");
  m.def("parse_scene", &parseSceneText, "json"_a, "source"_a, "base_directory"_a, "repair_inertia"_a);
  m.def("describe_scene", [](const PyModel& p) { return describeScene(*p.scene); }, "model"_a);
  m.def("builtin_scene", [] { return PyModel{std::make_shared<const Scene>(loadBuiltinScene())}; });
  m.def("builtin_scene_json", [] { return builtinSceneJson(); });
  m.def("describe_status", [](std::int32_t bits) { return describeStatus(bits); }, "status"_a);

  // How an MJCF file maps onto Lockstep (io/mjcf.h), for the tasks: the file compiled and converted
  // here (mjcf_layout), or the import a scene kept (Model.mjcf_layout, the file compiled once).
  m.def("mjcf_layout", [](const std::string& path) { const MjcfImport imp = importMjcfFile(path);
    return mjcfLayout(imp, *imp.model);
  }, "path"_a);

}

}  // namespace lockstep::python
