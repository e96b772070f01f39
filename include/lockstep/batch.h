// Lockstep Batch: N worlds of one Model, advanced in lockstep on the CPU or on a CUDA device.
//
// A Batch owns the structure-of-arrays storage of every per-world field (views.h) on the host
// and, for the CUDA backend, on the device. Host and device copies move only when asked:
//   set...()  change the host copy;        upload()   copies host -> device;
//   step()    advances on the backend;     download() copies device -> host;
//   get...()  read the host copy.
// On the CPU backend the host copy is the only copy and upload/download do nothing. On the CUDA
// backend, stepping after a host change without upload(), or reading after a step without
// download(), throws std::logic_error instead of silently using stale data.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/integrator.h"
#include "lockstep/force_elements.h"
#include "lockstep/model.h"

namespace lockstep {

enum class Backend { Cpu, Cuda };
enum class DeviceChoice { Auto, Cpu, Cuda };

const char* backendName(Backend b);
// Auto picks CUDA when a usable device exists; Cuda throws std::runtime_error when none does.
Backend resolveBackend(DeviceChoice choice);
// A one-line description of a world's StatusFlag bits ("ok" when none is set).
std::string describeStatus(std::int32_t status);

template <class T>
class Batch {
 public:
  Batch(std::shared_ptr<const Model> model, std::int64_t nWorlds, Backend backend = Backend::Cpu);
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> modelPtr() const { return model_; }
  std::int64_t numWorlds() const { return nWorlds_; }
  Backend backend() const { return backend_; }
  const Sizes& sizes() const { return sizes_; }

  // ---- state, inputs and outputs of one world (host copy) ----
  std::vector<double> q(std::int64_t w) const { return getField(q_, sizes_.nq, w); }
  std::vector<double> u(std::int64_t w) const { return getField(u_, sizes_.nu, w); }
  std::vector<double> z(std::int64_t w) const { return getField(z_, sizes_.nz, w); }
  std::vector<double> udot(std::int64_t w) const { return getField(udot_, sizes_.nu, w); }
  std::vector<double> tau(std::int64_t w) const { return getField(tau_, sizes_.nu, w); }
  double time(std::int64_t w) const { return getField(time_, 1, w)[0]; }
  double kineticEnergy(std::int64_t w) const { return getField(energy_, 2, w)[0]; }
  double potentialEnergy(std::int64_t w) const { return getField(energy_, 2, w)[1]; }
  std::int32_t status(std::int64_t w) const;

  void setQ(std::int64_t w, const std::vector<double>& q) { setField(q_, sizes_.nq, w, q, "q"); }
  void setU(std::int64_t w, const std::vector<double>& u) { setField(u_, sizes_.nu, w, u, "u"); }
  void setZ(std::int64_t w, const std::vector<double>& z) { setField(z_, sizes_.nz, w, z, "z"); }
  void setTau(std::int64_t w, const std::vector<double>& tau) { setField(tau_, sizes_.nu, w, tau, "tau"); }
  void setTime(std::int64_t w, double t) { setField(time_, 1, w, {t}, "time"); }
  // Spatial force on a body at its origin Bo, expressed in Ground.
  void setBodyForce(std::int64_t w, int body, const SpatialVecd& F_GB);
  // Sets q, u, z, time of every world to the same values; clears every status.
  void setAllStates(const std::vector<double>& q, const std::vector<double>& u);
  // Puts world w back to the model's default state (q0, u = 0, z = 0, t = 0) and clears its status.
  void resetWorld(std::int64_t w);
  void clearStatus(std::int64_t w);

  // ---- per-world parameters (override the model's defaults for one world) ----
  void setMassProperties(std::int64_t w, int body, const MassProperties& mp);
  MassProperties massProperties(std::int64_t w, int body) const;
  void setGravity(std::int64_t w, const Vec3d& g);
  Vec3d gravity(std::int64_t w) const;
  void setDamping(std::int64_t w, const std::vector<double>& damping);  // [nu], >= 0
  std::vector<double> damping(std::int64_t w) const;
  bool isPerWorld(const std::string& param) const;  // true once some world overrides it

  // Force-element and constraint parameters (the seeds' Instance-stage values). Each setter takes
  // a world index, or kAllWorlds to set every world at once; values are validated as in the model.
  static constexpr std::int64_t kAllWorlds = -1;
  void setBushingFrames(std::int64_t w, int i, const Transformd& X_B1F, const Transformd& X_B2M);
  void setBushingStiffness(std::int64_t w, int i, const std::array<double, 6>& k);
  void setBushingDamping(std::int64_t w, int i, const std::array<double, 6>& c);
  Transformd bushingFrameOnBody1(std::int64_t w, int i) const;
  Transformd bushingFrameOnBody2(std::int64_t w, int i) const;
  std::array<double, 6> bushingStiffness(std::int64_t w, int i) const;
  std::array<double, 6> bushingDamping(std::int64_t w, int i) const;
  void setSpringParameters(std::int64_t w, int i, double freeLength, double stiffness, double damping);
  void setSpringPoints(std::int64_t w, int i, const Vec3d& p_AP, const Vec3d& p_BQ);
  std::array<double, 3> springParameters(std::int64_t w, int i) const;  // free length, stiffness, damping
  std::array<Vec3d, 2> springPoints(std::int64_t w, int i) const;       // p_AP, p_BQ
  void setSphereCenters(std::int64_t w, int i, const Vec3d& centerOnF, const Vec3d& centerOnB);
  void setSphereRadii(std::int64_t w, int i, double radiusOnF, double radiusOnB);
  void setContactEnabled(std::int64_t w, int i, bool enabled);
  std::array<Vec3d, 2> sphereCenters(std::int64_t w, int i) const;
  std::array<double, 2> sphereRadii(std::int64_t w, int i) const;
  bool contactEnabled(std::int64_t w, int i) const;

  // ---- force-element quantities at the current (host) state of a world ----
  BushingQuantities<T> bushing(std::int64_t w, int i) const;
  SpringDamperQuantities<T> spring(std::int64_t w, int i) const;
  // Every applied force at the current (host) state, as the dynamics sees it: the total spatial
  // force on each body at its origin, in G (user, gravity, force elements), and the total mobility
  // forces (clamped actions minus joint damping).
  std::vector<SpatialVecd> appliedBodyForces(std::int64_t w) const;
  std::vector<double> appliedMobilityForces(std::int64_t w) const;
  // Sphere-contact quantities of simbody-SphereOnSphereContact.txt at the current (host) state. The
  // acceleration errors and multipliers are those of the last evaluate().
  struct ContactQuantities {
    bool enabled;
    double positionError;                  // signed separation (findSeparation gives the same)
    Vec3d velocityErrors;                  // x, y: slip (0 unless rolling); z: d/dt separation
    Vec3d accelerationErrors;              // their time derivatives
    Vec3d multipliers;                     // x, y, z in C; the force on sphere B is -multipliers
    Vec3d forceOnSphereBInG;               // R_GC * -multipliers (0 when disabled)
    Transformd X_GC;                       // the contact frame C
  };
  ContactQuantities contact(std::int64_t w, int i) const;
  // Largest |position error| over world w's enabled contacts (0 without any).
  double constraintError(std::int64_t w) const;
  // The energy bushing i has dissipated (its auxiliary state); settable to any value >= 0.
  double dissipatedEnergy(std::int64_t w, int i) const;
  void setDissipatedEnergy(std::int64_t w, int i, double energy);

  // ---- moving data and time ----
  void upload();
  void download();
  // Advances every healthy world by nSteps steps of dt.
  void step(double dt, int nSteps = 1, Integrator integrator = Integrator::RK4);
  // Computes udot, the constraint multipliers and the energies at the current state of every world.
  void evaluate();
  // Projects every healthy world's q, then u, onto its enabled sphere contacts (assembly), for
  // initial states that violate them, within maxIterations Gauss-Newton iterations; step() does
  // the same after every step (drift control). A world that cannot be assembled is flagged.
  void assemble(int maxIterations = 200);
  // Constraint drift control: errors are kept at or below tol (default 1e-10 in double, 1e-5 in
  // float, in meters and meters per second) with at most maxIterations Gauss-Newton iterations.
  void setConstraintTolerance(double tol, int maxIterations = 20);
  double constraintTolerance() const { return constraintTolerance_; }

  // Raw views for the backends and for zero-copy users. Pointers of the device view are device
  // pointers (CUDA backend only).
  BatchView<T> hostView();
  BatchView<T> deviceView();
  ModelView<T> hostModelView() const;

 private:
  struct ParamStorage {
    std::vector<T> data;    // count values (shared) or count * nWorlds values (per world)
    std::int64_t count = 0;
    bool perWorld = false;
  };
  struct Device;  // CUDA allocations (batch.cpp)

  std::vector<double> getField(const std::vector<T>& f, int count, std::int64_t w) const;
  void setField(std::vector<T>& f, int count, std::int64_t w, const std::vector<double>& v, const char* name);
  void checkWorld(std::int64_t w) const;
  void checkReadable() const;
  void touchHost();
  T& paramRef(ParamStorage& p, std::int64_t w, std::int64_t c);
  T paramValue(const ParamStorage& p, std::int64_t w, std::int64_t c) const;
  ParamArray<T> paramView(const ParamStorage& p, const T* data) const;
  // Sets component c of a parameter for world w, or for all worlds when w == kAllWorlds.
  void setParam(ParamStorage& p, std::int64_t w, std::int64_t c, double value);
  void checkElement(int i, int count, const char* kind) const;
  BatchView<T> readOnlyHostView() const;
  // Runs the kinematics stage for world w of the host copy into a fresh workspace.
  std::vector<T> hostKinematics(std::int64_t w) const;

  std::shared_ptr<const Model> model_;
  std::int64_t nWorlds_;
  Backend backend_;
  Sizes sizes_;
  WorkspaceLayout layout_;

  // Model arrays in T.
  std::vector<BodyTopology> topology_;
  std::vector<Transform<T>> X_PF_, X_BM_;
  std::vector<ElementTopology> bushingTopology_, springTopology_, contactTopology_;

#define LOCKSTEP_X(type, name, count, doc) std::vector<type> name##_;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) ParamStorage name##_;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, sizes_)
#undef LOCKSTEP_X

  std::vector<T> cpuScratch_;  // per-thread workspaces of the CPU backend
  std::unique_ptr<Device> device_;
  double constraintTolerance_;
  int maxProjectionIterations_ = 20;
  bool hostChanged_ = true;    // host copy changed since the last upload
  bool deviceAhead_ = false;   // device copy advanced since the last download
};

extern template class Batch<float>;
extern template class Batch<double>;

// Backend entry points (CPU in host/, CUDA in kernels/).
template <class T>
void cpuAdvance(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch,
                const StepSettings<T>& settings);
template <class T>
void cpuAssemble(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch, T tol,
                 int maxIterations);
template <class T>
void cpuEvaluate(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch);
template <class T>
void cudaAdvance(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch,
                 const StepSettings<T>& settings);
template <class T>
void cudaAssemble(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch, T tol,
                  int maxIterations);
template <class T>
void cudaEvaluate(const ModelView<T>& model, const BatchView<T>& batch, const WorkspaceLayout& L, T* scratch);
// Threads the CPU backend uses (OpenMP); 0 restores the default (all cores).
void setCpuThreads(int n);
int cpuThreads();

}  // namespace lockstep
