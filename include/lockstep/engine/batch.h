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
//
// Learning loops drive a batch without host copies: actions are written into the `tau` field
// and observations read from the observation fields in place (field() gives raw pointers with
// shape and strides, toDLPack() gives DLPack tensors for PyTorch and JAX); resetWorlds() and
// setStates() take index lists or masks in device memory; captureStep() records a step as a
// CUDA graph; with setAutoReset(true) failed worlds restart on their own, each recording why.
//
// Threads: a Batch takes no lock; its calls must come from one thread at a time. Python's
// lockstep.Batch holds a lock of its own around every call but the making of field views.
//
// The class is implemented by job, in host/batch/: batch.cpp (construction, state, the runs, data
// moves and recorded steps, each through the batch's backend object), cpu_batch_backend.cpp and
// cuda_batch_backend.cpp (the backend objects, batch_backend.h: each owns its workspaces, buffers,
// options, streams, graphs and linearization storage, and is told what changed), parameters.cpp
// (per-world parameters by name and by element), inspection.cpp (force-element and contact
// quantities of one world), derivatives.cpp (linearizations), dlpack.cpp (fields as raw views and
// DLPack tensors), device_memory.cpp (the memory a batch needs), compiled_model.cpp (the model in
// kernel form) and fields.cpp (the field registry by name).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct DLManagedTensor;

#include "lockstep/backends/backend.h"
#include "lockstep/engine/aligned_vector.h"
#include "lockstep/engine/compiled_model.h"
#include "lockstep/engine/fields.h"
#include "lockstep/physics/force_elements.h"
#include "lockstep/engine/model.h"
#include "lockstep/engine/parameter_store.h"

namespace lockstep {

enum class Backend { Cpu, Cuda };
enum class DeviceChoice { Auto, Cpu, Cuda };
// Where an array passed to or returned by a Batch lives: host memory, or the backend's memory
// (device memory on the CUDA backend, host memory on the CPU backend).
enum class MemorySpace { Host, Backend };

// A per-world field as raw memory: element (world w, component c) is at
// data + w * worldStride + c * componentStride, in elements of the field's type.
struct FieldView {
  std::string name;
  void* data = nullptr;
  bool onDevice = false;
  enum class Type { Float32, Float64, Int32 } elementType = Type::Float64;
  std::int64_t worlds = 0, components = 0;
  std::int64_t worldStride = 1, componentStride = 0;
};

template <class T>
class Batch;
template <class T>
class BatchBackend;  // what runs a batch's worlds: its CPU or CUDA backend object (host/batch/batch_backend.h)

// A recorded step (CUDA graph on the CUDA backend; a plain step() call on the CPU backend).
// Valid while the batch lives and its per-world parameter layout does not change.
template <class T>
class StepGraph {
 public:
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  void launch();

 private:
  friend class Batch<T>;
  StepGraph(Batch<T>* batch, const StepSettings<T>& settings, std::uint64_t generation)
      : batch_(batch), settings_(settings), generation_(generation) {}
  Batch<T>* batch_;
  StepSettings<T> settings_;
  std::uint64_t generation_;
  void* exec_ = nullptr;  // cudaGraphExec_t
};

const char* backendName(Backend b);
// Auto picks CUDA when a usable device exists; Cuda throws std::runtime_error when none does.
Backend resolveBackend(DeviceChoice choice);
// A one-line description of a world's StatusFlag bits ("ok" when none is set).
std::string describeStatus(std::int32_t status);

// ---- memory (host/batch/device_memory.cpp) ----
// Bytes a Batch<T> of `worlds` worlds allocates: every per-world field (LOCKSTEP_WORLD_FIELDS) for
// every world, the parameters (LOCKSTEP_PARAM_FIELDS, one shared copy as long as no world overrides
// them), the model arrays, and the scratch of WorkspaceLayout::of(sizes).total scalars per world on
// the device (CUDA) or per thread on the host (CPU). The CUDA backend keeps a host copy of the
// fields too. The allocator's own rounding is not included. Sums that exceed int64 saturate at
// INT64_MAX (worlds near 2^62 need more than any machine has, and are refused, never wrapped around).
struct BatchMemory {
  std::int64_t hostBytes = 0;
  std::int64_t deviceBytes = 0;  // 0 on the CPU backend
};
template <class T>
BatchMemory batchMemoryOf(const Sizes& sizes, std::int64_t worlds, Backend backend, int cpuThreads);

// Memory available now: MemAvailable of /proc/meminfo, and cudaMemGetInfo's free bytes (0 when no
// CUDA device is usable; the device is queried only when asked for).
struct MemoryAvailable {
  std::int64_t hostBytes = 0;
  std::int64_t deviceBytes = 0;
};
MemoryAvailable memoryAvailable(bool queryDevice);

// Empty when `need` fits in `fraction` of what is available; otherwise why not, e.g.
// "needs 12.3 GiB of device memory, 9.8 GiB free".
std::string whyBatchDoesNotFit(const BatchMemory& need, const MemoryAvailable& have, double fraction = 0.9);

// The most worlds whose Batch<T> fits in `fraction` of `have` (0 when not even one does).
template <class T>
std::int64_t worldsThatFitOf(const Sizes& sizes, Backend backend, int cpuThreads, const MemoryAvailable& have,
                             double fraction = 0.9);

// What a Batch throws when it would not fit in the memory available (Python: a MemoryError). It is
// made only after the estimate has been checked, so that it fails before allocating.
class BatchMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T>
class Batch {
 public:
  // `cpu`: how the CPU backend runs this batch's calls (setCpuOptions). Throws BatchMemoryError,
  // before allocating, when the batch (batchMemoryOf) does not fit in 90% of the memory available
  // (memoryAvailable: host memory, and device memory on CUDA).
  Batch(std::shared_ptr<const Model> model, std::int64_t nWorlds, Backend backend = Backend::Cpu,
        const CpuOptions& cpu = {});
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> modelPtr() const { return model_; }
  std::int64_t numWorlds() const { return nWorlds_; }
  Backend backend() const { return backendKind_; }
  const Sizes& sizes() const { return sizes_; }
  // The CPU backend's threads, packs or scalar code and instruction set for this batch's calls
  // (backend.h); other batches keep theirs. Throws std::invalid_argument for a negative thread
  // count or an unknown or unsupported instruction set. The options as run: threads >= 1, isa the
  // name of the instruction set in use.
  void setCpuOptions(const CpuOptions& cpu);
  const CpuOptions& cpuOptions() const;

  // ---- state, inputs and outputs of one world (host copy) ----
  std::vector<double> q(std::int64_t w) const { return hostValues(w, &WorldView<T>::q); }
  std::vector<double> u(std::int64_t w) const { return hostValues(w, &WorldView<T>::u); }
  std::vector<double> z(std::int64_t w) const { return hostValues(w, &WorldView<T>::z); }
  std::vector<double> udot(std::int64_t w) const { return hostValues(w, &WorldView<T>::udot); }
  std::vector<double> tau(std::int64_t w) const { return hostValues(w, &WorldView<T>::tau); }
  double time(std::int64_t w) const { return hostValues(w, &WorldView<T>::time)[0]; }
  double kineticEnergy(std::int64_t w) const { return hostValues(w, &WorldView<T>::energy)[0]; }
  double potentialEnergy(std::int64_t w) const { return hostValues(w, &WorldView<T>::energy)[1]; }
  std::int32_t status(std::int64_t w) const { return std::int32_t(hostValues(w, &WorldView<T>::status)[0]); }

  // A q or u that is finite in double but not in T (u = 1e300 in float) flags the world
  // (kStatusInvalidInitialState): it is never stepped, and the other worlds go on.
  void setQ(std::int64_t w, const std::vector<double>& q);
  void setU(std::int64_t w, const std::vector<double>& u);
  void setZ(std::int64_t w, const std::vector<double>& z) { setHostValues(w, &WorldView<T>::z, z, "z"); }
  void setTau(std::int64_t w, const std::vector<double>& tau) { setHostValues(w, &WorldView<T>::tau, tau, "tau"); }
  // PD actuator targets: a position and a velocity per generalized speed (the "target" field).
  void setTargets(std::int64_t w, const std::vector<double>& position, const std::vector<double>& velocity);
  std::vector<double> targetPositions(std::int64_t w) const;
  std::vector<double> targetVelocities(std::int64_t w) const;
  // Observations: each speed's applied mobility force (action plus PD, within the effort limit)
  // and its power, and each joint stop's force.
  std::vector<double> actuatorEfforts(std::int64_t w) const;
  std::vector<double> actuatorPowers(std::int64_t w) const;
  std::vector<double> stopForces(std::int64_t w) const { return hostValues(w, &WorldView<T>::stopForce); }
  // MuJoCo's sensordata of the model's sensors (Model::sensorDataNames(); physics/sensors.h), as the
  // last observation left it: positions and velocities of the current state, accelerations of the
  // last evaluate().
  std::vector<double> sensors(std::int64_t w) const { return hostValues(w, &WorldView<T>::sensors); }
  // The work done so far by the actions and actuators (minus the "actuation" auxiliary state).
  double actuatorWork(std::int64_t w) const { return -z(w).at(model_->actuationState()); }
  void setTime(std::int64_t w, double t) { setHostValues(w, &WorldView<T>::time, {t}, "time"); }
  // Spatial force on a body at its origin Bo, expressed in Ground.
  void setBodyForce(std::int64_t w, int body, const SpatialVecd& F_GB);
  // Sets q, u (and their initial values), z = 0, time = 0 of every world; clears every status.
  void setAllStates(const std::vector<double>& q, const std::vector<double>& u);
  // The state a reset returns to (the model's default state until set), for one world or all.
  void setInitialState(std::int64_t w, const std::vector<double>& q, const std::vector<double>& u);
  std::vector<double> initialQ(std::int64_t w) const { return hostValues(w, &WorldView<T>::initialQ); }
  std::vector<double> initialU(std::int64_t w) const { return hostValues(w, &WorldView<T>::initialU); }
  // Makes every world's current q and u its initial state, on the backend: after assemble(), so
  // that resets return to states on the constraint manifold.
  void captureInitialState();
  void clearStatus(std::int64_t w);

  // ---- resets, on the backend (no host round trip; observations refreshed) ----
  // Puts world w back to its initial state (time 0, z = 0, healthy).
  void resetWorld(std::int64_t w);
  // The same for a list of worlds, or for the worlds where mask[w] != 0 (nWorlds bytes); the
  // arrays live in the given memory space. Other worlds are not touched.
  void resetWorlds(const std::vector<std::int64_t>& worlds);
  void resetWorlds(const std::int64_t* worlds, std::int64_t count, MemorySpace space);
  void resetWorldsMask(const std::uint8_t* mask, MemorySpace space);
  // Puts the listed worlds into given states (row-major q[count][nq], u[count][nu], in T).
  void setStates(const std::int64_t* worlds, std::int64_t count, const T* q, const T* u, MemorySpace space);
  // Failed worlds (any status bit) go back to their initial state at the end of step(), their
  // status bits saved in lastFailure and resetCount incremented, instead of staying flagged.
  void setAutoReset(bool on) { autoReset_ = on; }
  std::int32_t lastFailure(std::int64_t w) const { return std::int32_t(hostValues(w, &WorldView<T>::lastFailure)[0]); }
  std::int32_t resetCount(std::int64_t w) const { return std::int32_t(hostValues(w, &WorldView<T>::resetCount)[0]); }

  // ---- observations (written after step(), resets, assemble() and evaluate()) ----
  void setObserveAfterStep(bool on) { observe_ = on; }
  Transformd bodyPose(std::int64_t w, int body) const;      // X_GB
  SpatialVecd bodyVelocity(std::int64_t w, int body) const;  // V_GB at Bo, in G

  // ---- zero-copy access ----
  // Every per-world field by name (the names of LOCKSTEP_WORLD_FIELDS: "q", "u", "tau", "bodyPose",
  // ...), in host memory or in the backend's memory. The Batch must outlive the views.
  static std::vector<std::string> fieldNames();
  FieldView field(const std::string& name, MemorySpace space);
  // The same as a DLPack tensor of shape [worlds] or [worlds, components], strides [1, worlds];
  // its deleter frees only the tensor description, never the batch's memory.
  DLManagedTensor* toDLPack(const std::string& name, MemorySpace space);
  // The CUDA stream the batch launches and copies on (a cudaStream_t; nullptr on the CPU
  // backend). setStream makes it use a stream of the caller's, e.g. a framework's current stream.
  void* stream() const;
  void setStream(void* cudaStream);
  // Records step(dt, nSteps, integrator) (with the current auto-reset and observation settings).
  std::unique_ptr<StepGraph<T>> captureStep(double dt, int nSteps = 1, Integrator integrator = Integrator::RK4);

  // ---- per-world parameters (override the model's defaults for one world) ----
  void setMassProperties(std::int64_t w, int body, const MassProperties& mp);
  MassProperties massProperties(std::int64_t w, int body) const;
  void setGravity(std::int64_t w, const Vec3d& g);
  Vec3d gravity(std::int64_t w) const;
  void setDamping(std::int64_t w, const std::vector<double>& damping);  // [nu], >= 0
  std::vector<double> damping(std::int64_t w) const;
  bool isPerWorld(const std::string& param) const;  // true once some world overrides it (C++ field name)

  // Any per-world parameter component by its public name ("body.link1.mass", "gravity.z",
  // "spring.spring.stiffness", "bushing.b.damping.3"; parameterNames() lists them, and `lockstep
  // info` prints them): validated as the model builder validates the element it belongs to.
  std::vector<std::string> parameterNames() const;
  void setParameter(std::int64_t w, const std::string& name, double value);
  // The same for a component already found by name (fields.h findPublicName), for loops over worlds.
  void setParameter(std::int64_t w, const FieldComponent& component, double value);
  double parameter(std::int64_t w, const std::string& name) const;

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
  void setGroundSphere(std::int64_t w, int i, const Vec3d& center, double radius);
  void setGroundPlane(std::int64_t w, int i, const Vec3d& normal, const Vec3d& point);
  void setGroundMaterial(std::int64_t w, int i, const GroundMaterial& material);
  GroundMaterial groundMaterial(std::int64_t w, int i) const;
  // Joint stop and actuator of generalized speed u (Model::stopOnSpeed / actuatorOnSpeed give the
  // model's): bounds (+/-infinity: none), stiffness, dissipation; mode (ActuatorMode), kp, kd.
  void setJointStop(std::int64_t w, int u, double lower, double upper, double stiffness, double dissipation);
  std::array<double, 4> jointStop(std::int64_t w, int u) const;
  void setActuatorGains(std::int64_t w, int u, ActuatorMode mode, double kp, double kd);
  std::array<double, 3> actuatorGains(std::int64_t w, int u) const;  // mode, kp, kd

  // ---- force-element quantities at the current (host) state of a world ----
  BushingQuantities<T> bushing(std::int64_t w, int i) const;
  SpringDamperQuantities<T> spring(std::int64_t w, int i) const;
  GroundContactQuantities<T> groundContact(std::int64_t w, int i) const;
  // Every applied force at the current (host) state, as the dynamics sees it: the total spatial
  // force on each body at its origin, in G (user, gravity, force elements), and the total mobility
  // forces (actions plus PD within the effort limits, minus joint damping, plus joint stops).
  std::vector<SpatialVecd> appliedBodyForces(std::int64_t w) const;
  // Each body's spatial acceleration A_GB = [alpha; a of Bo], in G, at the current (host) state
  // with the udot of the last evaluate() (pass 3 of the sweep).
  std::vector<SpatialVecd> bodyAccelerations(std::int64_t w) const;
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

  // ---- derivatives (host/batch/derivatives.cpp; the method: physics/derivatives.h, docs/derivatives.md) ----
  // Every world's Jacobian of one step of dt with the integrator (as step(dt, 1, integrator) takes
  // it, constraint projection included): rows the next state x+ = [q+; u+] in the tangent space (2nu),
  // columns the directions [dq (nu); u (nu); tau (nu); params (np)]; dq are position increments, a
  // Ball's or Free's rotation a rotation vector in F (physics/derivatives.h). `params` names
  // per-world parameter components as parameterNames() does. Exact (forward-mode dual numbers over
  // the per-world code); where the physics branches, the derivative of the branch taken. A flagged
  // world, or one whose step fails, gets NaN; the worlds themselves do not change. Computed on the
  // backend; the result stays in the batch's memory (jacobianView) and in its host copy (jacobian).
  // Throws BatchMemoryError, before allocating, when the Jacobians do not fit. `worlds` limits the
  // call to some worlds (Python does a large batch in pieces, between which Ctrl-C is seen): the
  // others keep their Jacobians when the last linearization had the same rows and columns, and are
  // NaN otherwise.
  struct WorldRange {
    std::int64_t first = 0;
    std::int64_t count = -1;  // -1: to the last world
  };
  void linearize(double dt, Integrator integrator = Integrator::RK4, const std::vector<std::string>& params = {},
                 WorldRange worlds = {});
  // The same for one evaluation at every world's current state: rows udot (nu).
  void linearizeEvaluation(const std::vector<std::string>& params = {}, WorldRange worlds = {});
  // What the last linearization computed: its rows and columns and the parameters of its columns.
  struct JacobianShape {
    Linearization what = Linearization::Step;
    int rows = 0, columns = 0;  // columns: 3 nu + params.size()
    std::vector<std::string> params;
  };
  const JacobianShape& jacobianShape() const;
  // World w's Jacobian (host copy), rows x columns, row-major; or a block of its columns: the state's
  // (A: dq and u, 2nu), the actions' (B: nu) or the parameters' (C: np).
  enum class JacobianBlock { All, State, Action, Parameters };
  std::vector<double> jacobian(std::int64_t w, JacobianBlock block = JacobianBlock::All) const;
  // Every world's Jacobian as raw memory: component c = row * columns + column of world w at
  // data[c * worlds + w] (world innermost, as every per-world field), in host or backend memory.
  FieldView jacobianView(MemorySpace space);

  // ---- moving data and time ----
  void upload();
  void download();
  // Waits until the backend has finished the work queued so far (CUDA: the batch's stream).
  void synchronize();
  // Advances every healthy world by nSteps steps of dt.
  void step(double dt, int nSteps = 1, Integrator integrator = Integrator::RK4);
  // Computes udot, the constraint multipliers and the energies at the current state of every world.
  void evaluate();
  // World w's status for a person: describeStatus of its bits, and, where the articulated-body
  // sweep found a singular joint inertia that the world's own state (kept from before the failing
  // step) does not have, that the state diverged within the step, with the step size and
  // integrator of the last step() or captureStep(), and what to try.
  std::string describeWorldStatus(std::int64_t w) const;
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
  // The host copy through the registry: one world's components of a per-world field, the field
  // named by its WorldView member (views.h) and its component count taken from its registry line.
  // Reads check the world and that the host copy is current; writes check the values' count and
  // finiteness, and mark the host copy changed.
  template <class F>
  std::vector<double> hostValues(std::int64_t w, Strided<F> WorldView<T>::*field) const;
  template <class F>
  void setHostValues(std::int64_t w, Strided<F> WorldView<T>::*field, const std::vector<double>& v, const char* name);
  // The context of a run on the backend, and what the batch tells its backend after one.
  BackendContext<T> context();
  void afterBackendWrite();
  // Throws BatchMemoryError when this batch, with the CPU backend's workspaces for cpuThreads
  // threads, does not fit in the memory available.
  void checkMemory(int cpuThreads) const;
  void checkWorld(std::int64_t w) const;
  void checkReadable() const;
  void touchHost();
  void checkElement(int i, int count, const char* kind) const;
  // Sets kStatusInvalidInitialState on world w when its q or u is not finite in T.
  void flagInvalidState(std::int64_t w);
  // Whether the sweep finds a singular joint inertia at world w's host state.
  bool singularJointInertia(std::int64_t w) const;
  double lastDt_ = 0;  // of the last step() or captureStep(); 0: none yet
  Integrator lastIntegrator_ = Integrator::RK4;
  // One element's block of a parameter (massProps of a body: 10 values), for world w; the setter
  // validates it, and takes kAllWorlds.
  std::vector<double> parameterBlock(ParamId id, std::int64_t w, int element) const;
  void setParameterBlock(ParamId id, std::int64_t w, int element, const std::vector<double>& block);
  BatchView<T> readOnlyHostView() const;
  // Runs the kinematics stage for world w of the host copy into a fresh workspace.
  std::vector<T> hostKinematics(std::int64_t w) const;
  StepSettings<T> stepSettings(double dt, int nSteps, Integrator integrator) const;

  std::shared_ptr<const Model> model_;
  std::int64_t nWorlds_;
  Backend backendKind_;
  CompiledModel<T> compiled_;
  const Sizes& sizes_ = compiled_.sizes;
  const WorkspaceLayout& layout_ = compiled_.layout;

// The host copy of every per-world field, each 64-byte aligned (aligned_vector.h).
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) AlignedVector<type> name##_;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  ParameterStore<T> params_;

  struct Derivatives;  // the last linearization's shape and Jacobians, host copy (derivatives.cpp)
  std::unique_ptr<Derivatives> derivatives_;
  void linearizeOn(Linearization what, const StepSettings<T>& settings, const std::vector<std::string>& params,
                   WorldRange worlds);
  double constraintTolerance_;
  int maxProjectionIterations_ = 20;
  bool autoReset_ = false;
  bool observe_ = true;
  friend class StepGraph<T>;
  // The backend object: its scratch, buffers, options, device copy, stream, and which of the host
  // and device copies is newer. Last, so that it is destroyed first, before the host copy it mirrors.
  std::unique_ptr<BatchBackend<T>> backend_;
};

extern template class Batch<float>;
extern template class Batch<double>;
extern template class StepGraph<float>;
extern template class StepGraph<double>;

}  // namespace lockstep
