// lockstep._ext: the nanobind bindings of the engine. Thin by design: every check and every error
// message is the C++ API's own; the bindings only move arrays across without copies where the
// layout allows (per-world fields as views of the batch's memory) and release the GIL while the
// engine runs. The Python-facing classes are in python/lockstep/__init__.py. This file: the
// module, batches and studies; models.cpp: models, scenes and pictures.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <atomic>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/fields.h"
#include "lockstep/engine/quantities.h"
#include "lockstep/io/input_error.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/io/scene_description.h"
#include "lockstep/study/study.h"
#include "lockstep/io/study_file.h"
#include "lockstep/study/run_choices.h"
#include "lockstep/view/frames.h"
#include "ext.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace lockstep::python {

namespace {

// ---- batches ----------------------------------------------------------------------------------

Integrator parseIntegrator(const std::string& name) {
  if (name == "rk4") return Integrator::RK4;
  if (name == "euler") return Integrator::SemiImplicitEuler;
  throw std::invalid_argument("integrator must be \"rk4\" or \"euler\", not \"" + name + "\"");
}

// A batch as Python drives it. Every call but the making of field views takes the batch's lock
// first (waiting for it with the GIL released), so that calls from several Python threads run one
// after the other, each whole; writes through a view are the caller's to keep apart from a step.
// A call made again on the thread that holds the lock (a signal handler or a __del__ that Python
// runs between two slices of a step) is refused rather than left to wait for itself.
template <class T>
struct PyBatch {
  std::shared_ptr<const Scene> scene;
  std::shared_ptr<Batch<T>> batch;  // shared with the views of its fields
  std::mutex mutex;
  // The scene's state of every world before assembly (host layout of q, u and status), and whether
  // a parameter changed since the initial state was assembled from it (scenes with sphere contacts).
  std::vector<T> sceneQ, sceneU;
  std::vector<std::int32_t> sceneStatus;
  std::vector<std::int32_t> startStatus;  // each world's status when the initial state was made
  bool initialStateStale = false;
  std::atomic<std::thread::id> owner{};   // the thread in a call, while one is
  bool autoReset = false;

  PyBatch(const PyModel& model, std::int64_t worlds, const std::string& device, int threads) : scene(model.scene) {
    if (worlds < 1) throw std::invalid_argument("worlds must be at least 1, not " + std::to_string(worlds));
    batch = std::make_shared<Batch<T>>(scene->model, worlds, resolveBackend(parseDeviceChoice(device)), CpuOptions{threads});
    // As `lockstep simulate` starts a run: the scene's state and per-world values, projected onto
    // the sphere contacts when it has any; resets return to that state.
    applyScene(*scene, *batch);
    if (assembles()) {
      const BatchView<T> h = batch->hostView();
      const std::size_t W = std::size_t(worlds);
      sceneQ.assign(h.q, h.q + W * batch->sizes().nq);
      sceneU.assign(h.u, h.u + W * batch->sizes().nu);
      sceneStatus.assign(h.status, h.status + W);
    }
    batch->upload();
    start();
    if (assembles()) keepStartStatus();
  }

  void keepStartStatus() {
    if (onDevice()) batch->download();
    const BatchView<T> h = batch->hostView();
    startStatus.assign(h.status, h.status + batch->numWorlds());
  }

  bool onDevice() const { return batch->backend() == Backend::Cuda; }
  bool assembles() const { return !scene->model->contacts().empty(); }

  // The batch held for one call: its lock, and this thread as the owner until the call ends.
  struct Held {
    std::unique_lock<std::mutex> lock;
    std::atomic<std::thread::id>* owner;
    ~Held() { *owner = std::thread::id(); }  // before the lock is released
  };
  // Holds the batch for one call; waits with the GIL released when another thread has it.
  Held hold() {
    if (owner.load() == std::this_thread::get_id())
      throw std::runtime_error("this batch is already in a call on this thread (a signal handler or __del__ "
                               "called it while it ran): call it again once that call has returned");
    std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      nb::gil_scoped_release release;
      lock.lock();
    }
    owner = std::this_thread::get_id();
    return Held{std::move(lock), &owner};
  }

  // The end of the start of a run (the batch's state already uploaded): assembly onto the sphere
  // contacts, which becomes the initial state, then the outputs of that state.
  void start() {
    if (assembles()) {
      batch->assemble();
      batch->captureInitialState();
    }
    batch->evaluate();
    batch->synchronize();
  }

  // Before every run: when a parameter changed since the initial state was assembled, the initial
  // state is assembled again from the scene's state with the current parameters, as a new batch
  // (or a study) would start, and the worlds still at their initial state (time 0, z 0, q and u
  // those of the initial state) start from the new one; the others keep their state.
  void prepare() {
    if (!initialStateStale) return;
    initialStateStale = false;
    if (onDevice()) batch->download();
    const BatchView<T> h = batch->hostView();
    const Sizes& s = batch->sizes();
    const std::int64_t W = batch->numWorlds();
    // Component i of world w of a field is at [i * W + w].
    auto sameBits = [W](const T* a, const T* b, std::int64_t w, int count) {
      for (int i = 0; i < count; ++i)
        if (std::memcmp(a + std::size_t(i) * W + w, b + std::size_t(i) * W + w, sizeof(T)) != 0) return false;
      return true;
    };
    std::vector<std::uint8_t> atInitial(W);
    for (std::int64_t w = 0; w < W; ++w) {
      // A world whose first step failed is back at its initial q and u, flagged: not at its start.
      bool at = h.time[w] == T(0) && h.status[w] == startStatus[w] && sameBits(h.q, h.initialQ, w, s.nq) &&
                sameBits(h.u, h.initialU, w, s.nu);
      for (int i = 0; i < s.nz && at; ++i) at = h.z[std::size_t(i) * W + w] == T(0);
      atInitial[w] = at;
    }
    const std::vector<T> q(h.q, h.q + std::size_t(W) * s.nq), u(h.u, h.u + std::size_t(W) * s.nu);
    const std::vector<std::int32_t> status(h.status, h.status + W);
    std::copy(sceneQ.begin(), sceneQ.end(), h.q);
    std::copy(sceneU.begin(), sceneU.end(), h.u);
    std::copy(sceneStatus.begin(), sceneStatus.end(), h.status);
    batch->upload();
    batch->assemble();
    batch->captureInitialState();
    batch->synchronize();
    keepStartStatus();
    // The worlds at their initial state keep the new one; the others get their own state back.
    for (std::int64_t w = 0; w < W; ++w) {
      if (atInitial[w]) continue;
      for (int i = 0; i < s.nq; ++i) h.q[std::size_t(i) * W + w] = q[std::size_t(i) * W + w];
      for (int i = 0; i < s.nu; ++i) h.u[std::size_t(i) * W + w] = u[std::size_t(i) * W + w];
      h.status[w] = status[w];
    }
    batch->upload();
    batch->evaluate();
    batch->synchronize();
  }

  // A host-side change on the CUDA backend: bring the host copy up to date first, send it after.
  template <class F>
  void changeHost(F&& change) {
    if (onDevice()) batch->download();
    change();
    if (onDevice()) batch->upload();
  }

  // A per-world field as an array that views the batch's memory: shape [worlds, components]
  // (or [worlds] for the fields of one value per world), strides [1, worlds] elements. NumPy on the CPU
  // backend; a DLPack-speaking array on the CUDA backend. The engine's batch lives as long as any
  // view of it. The view holds it through a capsule of its own, not through this Python object:
  // NumPy leaves the arrays that a DLPack capsule still holds at interpreter exit alive on purpose,
  // and that must not keep a nanobind instance alive past the module (nanobind reports it as leaked).
  // Made without the batch's lock (the fields never move), so that another thread can look at
  // them while one steps.
  nb::object field(const std::string& name, bool host) {
    nb::capsule self(new std::shared_ptr<Batch<T>>(batch),
                     [](void* p) noexcept { delete static_cast<std::shared_ptr<Batch<T>>*>(p); });
    const FieldView v = batch->field(name, host ? MemorySpace::Host : MemorySpace::Backend);
    const std::size_t shape[2] = {std::size_t(v.worlds), std::size_t(v.components)};
    const std::int64_t strides[2] = {v.worldStride, v.componentStride};
    // One dimension for the fields that hold one value per world (time, status); two for the
    // others, even when the model gives them one component (q of a single pendulum).
    const FieldInfo* info = findField(name);
    const std::size_t ndim = info->per == Per::World && info->parts.empty() ? 1 : 2;
    nb::dlpack::dtype dtype = v.elementType == FieldView::Type::Int32     ? nb::dtype<std::int32_t>()
                              : v.elementType == FieldView::Type::Float32 ? nb::dtype<float>()
                                                                          : nb::dtype<double>();
    const int deviceType = v.onDevice ? nb::device::cuda::value : nb::device::cpu::value;
    int deviceId = 0;
    if (v.onDevice) deviceId = cudaDevice();
    if (!v.onDevice) {
      nb::ndarray<nb::numpy> a(v.data, ndim, shape, self, strides, dtype, deviceType, deviceId);
      return nb::cast(a, nb::rv_policy::reference);
    }
    nb::ndarray<> a(v.data, ndim, shape, self, strides, dtype, deviceType, deviceId);
    return nb::cast(a, nb::rv_policy::reference);
  }

  static int cudaDevice() {
    int d = 0;
    cudaGetDevice(&d);  // the batch allocates on the current device (device_memory.cpp)
    return d;
  }

  // A step() runs as calls of Batch::step of whole steps (slices); between them Python's signal
  // handlers run, so that Ctrl-C stops a long step() within about a second, after whole steps.
  // The first slice is about 256K body-steps (2^24 on a GPU); the next ones are sized to take about
  // a quarter of a second each (at most twice the last), few enough that the work a call does
  // besides its steps (gathering the worlds into packs, observing them) stays small. A world's bits
  // do not depend on the slices, except with auto-reset: a world that failed rejoins at the next
  // call, so then the slices keep the first size, which depends on the batch alone.
  std::int64_t firstSlice() const {
    const double bodySteps = onDevice() ? double(1 << 24) : double(1 << 18);
    const double perStep = double(batch->numWorlds()) * double(std::max(1, batch->sizes().nb));
    return std::max<std::int64_t>(1, std::int64_t(bodySteps / perStep));
  }

  std::int64_t nextSlice(std::int64_t last, double seconds) const {
    if (autoReset) return last;
    constexpr double kSliceSeconds = 0.25;
    const double wanted = seconds > 0 ? double(last) * kSliceSeconds / seconds : 2.0 * double(last);
    return std::max<std::int64_t>(1, std::int64_t(std::min(wanted, 2.0 * double(last))));
  }

  void step(std::int64_t n, double dt, const std::string& integrator) {
    if (n < 0) throw std::invalid_argument("n must be >= 0, not " + std::to_string(n));
    const Integrator i = parseIntegrator(integrator);
    auto lock = hold();
    batch->step(dt, 0, i);  // checks dt, also when n is 0, before anything runs
    prepare();
    std::int64_t slice = firstSlice();
    for (std::int64_t done = 0; done < n;) {
      const int k = int(std::min({slice, n - done, std::int64_t(std::numeric_limits<int>::max())}));
      const auto t0 = std::chrono::steady_clock::now();
      {
        nb::gil_scoped_release release;
        batch->step(dt, k, i);
        batch->synchronize();
      }
      done += k;
      if (done == n) break;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      slice = nextSlice(k, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }

  // For bench/python_overhead.py: the wall time of k calls of step(dt, 1) made from C++, the
  // same calls a C++ program would make, to compare with k calls from Python.
  double timeStepCalls(int k, double dt, const std::string& integrator) {
    const Integrator i = parseIntegrator(integrator);
    auto lock = hold();
    prepare();
    nb::gil_scoped_release release;
    const auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < k; ++n) batch->step(dt, 1, i);
    batch->synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void evaluate() {
    auto lock = hold();
    prepare();
    nb::gil_scoped_release release;
    batch->evaluate();
    batch->synchronize();
  }

  void assemble(int maxIterations) {
    auto lock = hold();
    prepare();
    nb::gil_scoped_release release;
    batch->assemble(maxIterations);
    batch->synchronize();
  }

  void resetAll() {
    auto lock = hold();
    prepare();
    std::vector<std::int64_t> all(batch->numWorlds());
    for (std::int64_t w = 0; w < batch->numWorlds(); ++w) all[w] = w;
    batch->resetWorlds(all.data(), std::int64_t(all.size()), MemorySpace::Host);
    batch->synchronize();
  }

  void resetIndices(nb::ndarray<const std::int64_t, nb::ndim<1>, nb::device::cpu, nb::c_contig> worlds) {
    auto lock = hold();
    prepare();
    batch->resetWorlds(worlds.data(), std::int64_t(worlds.shape(0)), MemorySpace::Host);
    batch->synchronize();
  }

  void resetMask(nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::device::cpu, nb::c_contig> mask) {
    if (std::int64_t(mask.shape(0)) != batch->numWorlds())
      throw std::invalid_argument("mask has " + std::to_string(mask.shape(0)) + " entries; the batch has " +
                                  std::to_string(batch->numWorlds()) + " worlds");
    auto lock = hold();
    prepare();
    batch->resetWorldsMask(mask.data(), MemorySpace::Host);
    batch->synchronize();
  }

  void setStates(nb::ndarray<const std::int64_t, nb::ndim<1>, nb::device::cpu, nb::c_contig> worlds,
                 nb::ndarray<const T, nb::ndim<2>, nb::device::cpu, nb::c_contig> q,
                 nb::ndarray<const T, nb::ndim<2>, nb::device::cpu, nb::c_contig> u) {
    const std::int64_t count = std::int64_t(worlds.shape(0));
    const Sizes& s = batch->sizes();
    if (std::int64_t(q.shape(0)) != count || std::int64_t(q.shape(1)) != s.nq)
      throw std::invalid_argument("q must have shape (" + std::to_string(count) + ", " + std::to_string(s.nq) +
                                  "), not (" + std::to_string(q.shape(0)) + ", " + std::to_string(q.shape(1)) + ")");
    if (std::int64_t(u.shape(0)) != count || std::int64_t(u.shape(1)) != s.nu)
      throw std::invalid_argument("u must have shape (" + std::to_string(count) + ", " + std::to_string(s.nu) +
                                  "), not (" + std::to_string(u.shape(0)) + ", " + std::to_string(u.shape(1)) + ")");
    auto lock = hold();
    prepare();
    batch->setStates(worlds.data(), count, q.data(), u.data(), MemorySpace::Host);
    batch->synchronize();
  }

  nb::ndarray<nb::numpy, double> parameter(const std::string& name) {
    auto lock = hold();
    if (onDevice()) batch->download();
    const std::int64_t W = batch->numWorlds();
    auto* values = new double[W];
    nb::capsule owner(values, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    for (std::int64_t w = 0; w < W; ++w) values[w] = batch->parameter(w, name);
    return nb::ndarray<nb::numpy, double>(values, {std::size_t(W)}, owner);
  }

  // A recordable quantity (quantities.h: "sensors", "ground.force", "body.X_GB", ...) of every
  // world at the host copy: (worlds, components), in the order of its column names.
  nb::ndarray<nb::numpy, double> quantity(const std::string& name) {
    auto lock = hold();
    const Quantity* q = findQuantity(name);
    if (!q) throw std::invalid_argument("no recordable quantity named '" + name + "'; they are: " + quantityNames());
    if (onDevice()) batch->download();
    std::vector<std::vector<double>> out;
    sampleQuantities(*batch, {q}, out);
    const std::size_t W = static_cast<std::size_t>(batch->numWorlds()), n = W ? out[0].size() / W : 0;
    auto* values = new std::vector<double>(std::move(out[0]));
    nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
    return nb::ndarray<nb::numpy, double>(values->data(), {W, n}, owner);
  }

  // A linearization (Batch::linearize, or linearizeEvaluation when `step` is false) of every world,
  // as a new array of shape [worlds, rows, columns] (lockstep.Batch.linearize slices A, B and C
  // from it), in the batch's precision; the batch's lock held and the GIL released while it runs.
  // It runs in pieces of worlds, as step() runs in slices of steps: between them Python's signal
  // handlers run, so that Ctrl-C stops a long linearization within about a second (the first piece
  // is 64 worlds, the next ones sized to take about a quarter of a second, at most twice the last).
  nb::ndarray<nb::numpy, T> linearize(bool step, double dt, const std::string& integrator,
                                      const std::vector<std::string>& params) {
    const Integrator i = parseIntegrator(integrator);
    auto lock = hold();
    prepare();
    const std::int64_t worlds = batch->numWorlds();
    std::int64_t piece = 64;
    for (std::int64_t first = 0; first < worlds;) {
      const std::int64_t n = std::min(piece, worlds - first);
      const auto t0 = std::chrono::steady_clock::now();
      {
        nb::gil_scoped_release release;
        if (step)
          batch->linearize(dt, i, params, {first, n});
        else
          batch->linearizeEvaluation(params, {first, n});
        batch->synchronize();
      }
      first += n;
      if (first == worlds) break;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double wanted = seconds > 0 ? double(n) * 0.25 / seconds : 2.0 * double(n);
      piece = std::max<std::int64_t>(1, std::int64_t(std::min(wanted, 2.0 * double(n))));
    }
    const typename Batch<T>::JacobianShape& shape = batch->jacobianShape();
    const FieldView v = batch->jacobianView(MemorySpace::Host);
    const std::size_t W = std::size_t(v.worlds), R = std::size_t(shape.rows), C = std::size_t(shape.columns);
    const T* data = static_cast<const T*>(v.data);
    auto* values = new std::vector<T>(W * R * C);
    for (std::size_t c = 0; c < R * C; ++c)
      for (std::size_t w = 0; w < W; ++w) (*values)[w * R * C + c] = data[c * W + w];
    nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T>(values->data(), {W, R, C}, owner);
  }

  void setParameter(const std::string& name, nb::ndarray<const double, nb::ndim<1>, nb::device::cpu> values) {
    auto lock = hold();
    const std::int64_t W = batch->numWorlds();
    const std::optional<FieldComponent> found = findPublicName(batch->model(), parameterFields(), name);
    if (!found) {
      batch->parameter(0, name);  // throws the C++ API's message for an unknown name
      throw std::invalid_argument("no per-world parameter named '" + name + "'");
    }
    if (values.shape(0) != 1 && std::int64_t(values.shape(0)) != W)
      throw std::invalid_argument("parameter '" + name + "': expected one value or " + std::to_string(W) +
                                  " (one per world), got " + std::to_string(values.shape(0)));
    auto view = values.view();
    changeHost([&] {
      for (std::int64_t w = 0; w < W; ++w) batch->setParameter(w, *found, view(values.shape(0) == 1 ? 0 : w));
    });
    initialStateStale = initialStateStale || assembles();
  }

  std::string describe(std::int64_t w) {
    if (w < 0 || w >= batch->numWorlds())
      throw std::out_of_range("world " + std::to_string(w) + " is outside the batch (" +
                              std::to_string(batch->numWorlds()) + " worlds)");
    auto lock = hold();
    if (onDevice()) batch->download();
    return batch->describeWorldStatus(w);
  }

  // Any other call on the batch, under its lock.
  template <class F>
  auto locked(F&& f) {
    auto lock = hold();
    return f(*batch);
  }
};

template <class T>
void bindBatch(nb::module_& m, const char* name) {
  using B = PyBatch<T>;
  nb::class_<B>(m, name)
      .def(nb::init<const PyModel&, std::int64_t, const std::string&, int>(), "model"_a, "worlds"_a, "device"_a,
           "threads"_a = 0)
      .def_prop_ro("worlds", [](const B& b) { return b.batch->numWorlds(); })
      .def_prop_ro("backend", [](const B& b) { return std::string(backendName(b.batch->backend())); })
      .def_prop_ro("on_device", &B::onDevice)
      .def_static("field_names", [] { return Batch<T>::fieldNames(); })
      .def("field", &B::field, "name"_a, "host"_a = false)
      .def("step", &B::step, "n"_a, "dt"_a, "integrator"_a)
      .def("time_step_calls", &B::timeStepCalls, "k"_a, "dt"_a, "integrator"_a)
      .def("evaluate", &B::evaluate)
      .def("assemble", &B::assemble, "max_iterations"_a = 200)
      .def("reset_all", &B::resetAll)
      .def("reset_indices", &B::resetIndices, "worlds"_a)
      .def("reset_mask", &B::resetMask, "mask"_a)
      .def("set_states", &B::setStates, "worlds"_a, "q"_a, "u"_a)
      .def("parameter_names", [](const B& b) { return b.batch->parameterNames(); })
      .def("parameter", &B::parameter, "name"_a)
      .def("quantity", &B::quantity, "name"_a)
      .def("set_parameter", &B::setParameter, "name"_a, "values"_a)
      .def("describe_status", &B::describe, "world"_a)
      .def("linearize", &B::linearize, "step"_a, "dt"_a, "integrator"_a, "params"_a)
      .def("set_auto_reset", [](B& b, bool on) {
             b.locked([&](Batch<T>& x) {
               x.setAutoReset(on);
               b.autoReset = on;
             });
           }, "on"_a)
      .def("upload", [](B& b) { b.locked([](Batch<T>& x) { x.upload(); }); })
      .def("download", [](B& b) { b.locked([](Batch<T>& x) { x.download(); }); })
      .def("synchronize", [](B& b) { b.locked([](Batch<T>& x) { x.synchronize(); }); });
}

// ---- studies ----------------------------------------------------------------------------------

nb::dict statsDict(const OutputStats& s, const std::vector<double>& quantiles) {
  nb::dict d;
  d["name"] = s.name;
  d["count"] = s.count;
  d["undefined"] = s.undefined;
  d["mean"] = s.mean;
  d["stddev"] = s.stddev;
  d["min"] = s.min;
  d["max"] = s.max;
  d["standard_error"] = s.standardError;
  d["ci95_half_width"] = s.ciHalfWidth;
  d["quantile_levels"] = quantiles;
  d["quantiles"] = s.quantiles;
  d["histogram"] = s.histogram;
  return d;
}

// Runs a study as `lockstep study` does (runStudyRounds in one process, the outcomes gathered),
// and returns everything it writes: the report (its PREFIX.json), the statistics, Spearman's rho
// and the Sobol indices with the reasons where undefined, and every world's draws, outcomes and
// status (its PREFIX.npz).
nb::dict runStudyFile(const StudyFile& f, const std::string& device) {
  const Backend backend = resolveBackend(parseDeviceChoice(device));
  const StudySpec& spec = f.spec;
  StudyRun run;
  {
    nb::gil_scoped_release release;
    auto setup = [&](auto& b, std::int64_t first) { applySceneFrom(f.scene, b, first); };
    run = withPrecision(parsePrecision(f.precision), [&](auto t) {
      return runStudyRounds<decltype(t)>(OneProcess(), f.scene.model, spec, backend, StudyReduction::Gather, {}, setup);
    });
  }
  const StudyResult& r = run.result;
  nb::dict d;
  d["source"] = f.source;
  d["scene"] = f.scene.name;
  d["backend"] = std::string(backendName(backend));
  d["precision"] = f.precision;
  d["worlds"] = r.worlds;
  d["steps"] = spec.steps;
  d["dt"] = spec.dt;
  d["seed"] = spec.seed;
  d["flagged_worlds"] = r.flaggedWorlds;
  d["wall_seconds"] = r.wallSeconds;
  d["report"] = studyJson(f, backend, r, false);
  nb::list outputs;
  for (const OutputStats& s : r.outputs) outputs.append(statsDict(s, spec.quantiles));
  d["outputs"] = outputs;
  std::vector<std::string> parameterNames;
  for (const Variation& v : spec.vary) parameterNames.push_back(v.parameter);
  d["parameter_names"] = parameterNames;
  d["spearman"] = r.spearman;                    // [variation][output]
  d["spearman_undefined"] = r.spearmanUndefined;  // [variation][output]
  nb::list sobol;
  for (std::size_t o = 0; o < r.sobol.size(); ++o) {
    const SobolIndices& s = r.sobol[o];
    nb::dict x;
    x["rows"] = s.rows;
    x["first"] = s.first;
    x["first_low"] = s.firstLow;
    x["first_high"] = s.firstHigh;
    x["total"] = s.total;
    x["total_low"] = s.totalLow;
    x["total_high"] = s.totalHigh;
    x["undefined"] = r.sobolUndefined[o];
    sobol.append(x);
  }
  d["sobol"] = sobol;  // [output], a Sobol study only
  d["dgsm"] = r.dgsm;                       // [output][variation], a derivative study only
  d["dgsm_bound"] = r.dgsmBound;            // [output][variation]
  d["dgsm_undefined"] = r.dgsmUndefined;    // [output][variation]
  std::vector<std::vector<double>> drawn(spec.vary.size());  // [variation][world]
  for (std::size_t i = 0; i < spec.vary.size(); ++i)
    for (std::int64_t w = 0; w < run.outcomes.size(); ++w) drawn[i].push_back(studyDraw(spec, static_cast<int>(i), w));
  d["parameters"] = drawn;
  d["outcomes"] = std::move(run.outcomes.values);  // [outputs][worlds]
  d["status"] = std::move(run.outcomes.status);    // [worlds]
  return d;
}

}  // namespace

}  // namespace lockstep::python

NB_MODULE(_ext, m) {
  using namespace lockstep;
  using namespace lockstep::python;
  m.doc() = "Lockstep's C++ engine (nanobind bindings); use the `lockstep` package";

  // The front end's errors keep their type; the engine's std:: exceptions become ValueError
  // (invalid_argument, ModelError), IndexError (out_of_range) and RuntimeError (runtime_error,
  // logic_error), each with the C++ message unchanged.
  nb::exception<InputError>(m, "InputError", PyExc_ValueError);
  nb::exception<ModelError>(m, "ModelError", PyExc_ValueError);
  nb::exception<BatchMemoryError>(m, "BatchMemoryError", PyExc_MemoryError);

  bindModels(m);

  // The registry's per-world fields (views.h), in declaration order: name, what the components
  // are counted per, its description, and whether its values are integers.
  m.def("world_fields", [] {
    nb::list out;
    for (const FieldInfo& f : worldFields()) {
      nb::dict d;
      d["name"] = f.name;
      d["prefix"] = f.prefix;
      d["doc"] = f.doc;
      d["integer"] = f.integer;
      out.append(d);
    }
    return out;
  });

  // Draws of the variations (a JSON array as in a study file's "vary") for the given world
  // indices: the studies' counter-based draws (studyDraw), so a draw depends only on the seed, the
  // variation and the index. Returns [variations][worlds].
  m.def("draw_variations", [](const std::string& json, const std::string& source, std::uint64_t seed,
                              const std::vector<std::int64_t>& worlds) {
    StudySpec spec;
    spec.vary = parseVariations(json, source);
    spec.seed = seed;
    std::vector<std::vector<double>> out(spec.vary.size(), std::vector<double>(worlds.size()));
    for (std::size_t i = 0; i < spec.vary.size(); ++i)
      for (std::size_t k = 0; k < worlds.size(); ++k) out[i][k] = studyDraw(spec, static_cast<int>(i), worlds[k]);
    return out;
  }, "json"_a, "source"_a, "seed"_a, "worlds"_a);

  bindBatch<float>(m, "BatchF32");
  bindBatch<double>(m, "BatchF64");

  m.def("run_study_file", [](const std::string& path, const std::string& device) {
    return runStudyFile(loadStudyFile(path), device);
  }, "path"_a, "device"_a);
  m.def("run_study_text", [](const std::string& json, const std::string& source, const std::string& base,
                             const std::string& device) {
    return runStudyFile(parseStudy(json, source, base), device);
  }, "json"_a, "source"_a, "base_directory"_a, "device"_a);
}
