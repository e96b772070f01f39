"""Lockstep from Python: many worlds of one mechanism advanced in lockstep on the CPU or a GPU.

    import lockstep
    model = lockstep.load("scenes/chain-7.json")
    batch = lockstep.Batch(model, worlds=4096, device="cpu", dtype="float64")
    batch.tau[:] = 0.1            # actions: a view of the engine's memory, no copy
    batch.step(100)               # the GIL is released while the engine runs
    batch.evaluate()              # udot and energies (step() refreshes q, u and the observations)
    print(batch.q.shape, batch.energy[:, 0].mean())

Per-world fields. Every field of the engine's registry (include/lockstep/physics/views.h; names in
``lockstep.FIELD_NAMES``) is a property of Batch returning a view of the batch's memory, not a
copy: element (world w, component c) of a field with C components is at offset w + c * worlds, so
the array has shape (worlds, C) and strides (elem, worlds * elem); the fields of one value per
world (time, status, lastFailure, resetCount) have shape (worlds,). Here
elem is 4 bytes for dtype float32 and for status bits, 8 for float64. Writes land in the engine
and the engine's writes are seen by the array. On the CPU backend the views are NumPy arrays (and
speak DLPack, so ``torch.from_dlpack(batch.tau)`` shares the memory); on the CUDA backend they
are DLPack arrays of device memory (``torch.from_dlpack``, ``jax.dlpack.from_dlpack``). A view
keeps its batch alive.

Errors. The engine's messages reach Python unchanged: bad scene and URDF files raise
``lockstep.InputError`` (a ValueError) naming the file, the element and the reason, invalid model
values ``lockstep.ModelError`` (a ValueError), a batch larger than the memory available
``lockstep.BatchMemoryError`` (a MemoryError, raised before allocating, saying how many worlds
fit), other invalid arguments ValueError, world indices out of range IndexError, and misuse of the
device copies RuntimeError.

Threads. A Batch runs one call at a time: calls from several threads wait for each other (with
the GIL released while they wait and while the engine runs), and each runs whole. A field's
view can be made and read while another thread steps the batch (it is not serialised).
"""
from __future__ import annotations

import collections
import json
import operator
import os
import threading
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import numpy as np

from . import _ext
from ._ext import BatchMemoryError, InputError, ModelError, describe_status

__all__ = [
    "load", "Model", "Batch", "Params", "run_study", "describe_status", "InputError", "ModelError",
    "BatchMemoryError", "FIELDS", "FIELD_NAMES", "VectorEnv",
]

# The registry's per-world fields, in declaration order: dicts with name, prefix, doc, integer.
FIELDS = tuple(_ext.world_fields())
FIELD_NAMES = tuple(f["name"] for f in FIELDS)

_ROOTS = ("fixed", "free")
_DEVICES = ("cpu", "cuda", "auto")
_DTYPES = {"float32": (_ext.BatchF32, np.float32), "float64": (_ext.BatchF64, np.float64)}


class Model:
    """A mechanism read from a scene file or a URDF file (lockstep.load), with the scene's initial
    state, simulation defaults and per-world values. Immutable; any number of Batches share it."""

    def __init__(self, ext: "_ext.Model"):
        self._ext = ext

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ext, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {n for n in dir(self._ext) if not n.startswith("_")})

    def __repr__(self) -> str:
        return f"<lockstep.Model '{self.name}' ({self.source}): nq {self.nq}, nu {self.nu}>"

    @property
    def info(self) -> str:
        """What `lockstep info SCENE` prints for this model."""
        return _ext.describe_scene(self._ext)


def load(path: Union[str, os.PathLike, Mapping[str, Any], None] = None, root: str = "fixed",
         repair_inertia: bool = False, contact_law: Optional[str] = None) -> Model:
    """Reads a scene file (docs/scene-format.md), a URDF file, an MJCF file (.xml, compiled by
    MuJoCo's own compiler: docs/mjcf.md), or a scene given as a dict; None
    gives the built-in chain-7-seed scene. root="free" puts a URDF robot's root link on a Free
    mobilizer named "root" (the scene's urdf.root_joint); repair_inertia replaces physically invalid
    URDF inertias by the nearest valid ones, with a warning each (Model.warnings). contact_law, for
    an MJCF file: "mujoco" (its default: MuJoCo's contacts and limits, at the file's timestep with its
    integrator) or "compliant" (compliant contacts and joint stops; docs/mjcf.md, "Contact laws");
    a scene says it in its "mjcf" entry."""
    if root not in _ROOTS:
        raise ValueError(f'root must be "fixed" or "free", not {root!r}')
    if contact_law is not None:
        if contact_law not in ("mujoco", "compliant"):
            raise ValueError(f'contact_law must be "mujoco" or "compliant", not {contact_law!r}')
        if isinstance(path, Mapping) or path is None or not os.fspath(path).endswith(".xml"):
            raise ValueError('contact_law applies to an MJCF (.xml) file read on its own; a scene says it in its '
                             '"mjcf" entry ("contact_law")')
        return Model(_ext.load_scene(os.fspath(path), repair_inertia, contact_law))
    if path is None:
        if root != "fixed":
            raise ValueError('root="free": the built-in chain-7-seed scene has no URDF robot')
        return Model(_ext.builtin_scene())
    if isinstance(path, Mapping):
        scene = _with_root(dict(path), root, "<dict>", os.getcwd())
        text = json.dumps(scene)
        return Model(_ext.parse_scene(text, "<dict>", os.getcwd(), repair_inertia))
    path = os.fspath(path)
    if root != "fixed" and path.endswith(".xml"):
        raise ValueError(f'root="{root}": an MJCF file ({path}) says its own joints (a <freejoint/> on its root body)')
    if root == "fixed":
        return Model(_ext.load_scene(path, repair_inertia))
    base = os.path.dirname(os.path.abspath(path))
    if path.endswith(".urdf"):
        if not os.path.isfile(path):
            _ext.load_scene(path, repair_inertia)  # raises the engine's message for the file
        stem = os.path.splitext(os.path.basename(path))[0]
        scene = {"name": stem, "urdf": {"path": os.path.abspath(path), "root_joint": "free"}}
    else:
        _ext.load_scene(path, repair_inertia)  # any problem of the file is reported as `fixed` would
        with open(path) as f:
            scene = _with_root(json.load(f), root, path, base)
    text = json.dumps(scene)
    return Model(_ext.parse_scene(text, path, base, repair_inertia))


def _with_root(scene: dict, root: str, source: str, base: str) -> dict:
    """The scene with its URDF robot's root joint set, URDF path made absolute (for `info`)."""
    urdf = scene.get("urdf")
    if root == "free":
        if not isinstance(urdf, dict):
            raise ValueError(f'{source}: root="free" applies to a URDF robot, and this scene has no "urdf" '
                             f'object (its bodies name their own mobilizers)')
        urdf = dict(urdf, root_joint="free")
    if isinstance(urdf, dict) and isinstance(urdf.get("path"), str):
        urdf = dict(urdf, path=os.path.join(base, urdf["path"]))
    if urdf is not None:
        scene = dict(scene, urdf=urdf)
    return scene


class Params(Mapping):
    """Per-world parameters by public name ("body.link1.mass", "gravity.z",
    "spring.spring.stiffness"; Model.parameter_names lists them). Reading gives one value per world
    (a copy); assigning takes one value for every world or an array of one per world, validated as
    the model builder validates the element. In a scene with sphere contacts, the initial state is
    assembled again with the new values before the batch's next run (step, evaluate, assemble,
    reset, set_state), as a new batch or a study would start: worlds still at their initial state
    (time 0, not stepped) start from the new one, the others keep their state and return to the
    new one on reset."""

    def __init__(self, batch: "Batch"):
        # The engine's batch, not the Batch: no reference cycle, so that `del batch` frees it at once.
        self._b = batch._b

    def __getitem__(self, name: str) -> np.ndarray:
        return self._b.parameter(name)

    def __setitem__(self, name: str, value) -> None:
        values = np.ascontiguousarray(np.asarray(value, dtype=np.float64).reshape(-1))
        if np.ndim(value) > 1:
            raise ValueError(f"parameter '{name}': expected a scalar or a 1-D array of one value per world, "
                             f"got shape {np.shape(value)}")
        self._b.set_parameter(name, values)

    def __iter__(self) -> Iterator[str]:
        return iter(self._b.parameter_names())

    def __len__(self) -> int:
        return len(self._b.parameter_names())

    def __contains__(self, name) -> bool:
        return name in self._b.parameter_names()


class Batch:
    """N worlds of one Model, advanced in lockstep on the CPU or a CUDA device.

    It starts as `lockstep simulate` does: the scene's initial state and per-world values in every
    world, projected onto the scene's sphere contacts when it has any (resets return to that
    state), then evaluated (udot, energies and observations of the initial state). On the CPU it
    runs on `threads` threads (0: all cores), whatever other batches use.
    """

    def __init__(self, model: Model, worlds: int, device: str = "cpu", dtype: str = "float32", threads: int = 0):
        if not isinstance(model, Model):
            raise TypeError(f"model must be a lockstep.Model (from lockstep.load), not {type(model).__name__}")
        if device not in _DEVICES:
            raise ValueError(f'device must be "cpu", "cuda" or "auto", not {device!r}')
        if dtype not in _DTYPES:
            raise ValueError(f'dtype must be "float32" or "float64", not {dtype!r}')
        cls, self.dtype = _DTYPES[dtype]
        self.model = model
        self._b = cls(model._ext, _count("worlds", worlds), device, int(threads))
        self._dt, self._integrator = model.dt, model.integrator
        self.params = Params(self)
        # Renderers by frame size, world count and mesh paths, the most recently used last: at most
        # _RENDERERS_KEPT (each holds an OpenGL context and MuJoCo's model; close_renderers() frees them).
        self._renderers, self._render_lock = collections.OrderedDict(), threading.Lock()

    def __repr__(self) -> str:
        return (f"<lockstep.Batch of {self.worlds} worlds of '{self.model.name}' on {self.backend}, "
                f"{np.dtype(self.dtype).name}>")

    @property
    def worlds(self) -> int:
        return self._b.worlds

    @property
    def backend(self) -> str:
        """"CPU" or "CUDA"."""
        return self._b.backend

    @property
    def device(self) -> str:
        return "cuda" if self._b.on_device else "cpu"

    def field(self, name: str) -> Any:
        """The per-world field `name` of the registry as a view (see the module's documentation)."""
        return self._b.field(name)

    def step(self, n: int = 1, dt: Optional[float] = None, integrator: Optional[str] = None) -> None:
        """Advances every healthy world by n steps of dt (default: the scene's simulation dt, 1e-3
        when it gives none) with the scene's integrator unless "rk4" or "euler" is given.

        A long step runs as slices of whole steps of about a quarter of a second; between them
        Ctrl-C raises KeyboardInterrupt, leaving every world after the steps done so far (its time
        agrees with them). The results do not depend on the slices, except with auto-reset: a world
        that failed rejoins at the next slice (then of a length set by the batch's size alone)."""
        self._b.step(_count("n", n, 0), self._dt if dt is None else dt,
                     self._integrator if integrator is None else integrator)

    def evaluate(self) -> None:
        """udot, constraint multipliers, energies and observations at the current state."""
        self._b.evaluate()

    def assemble(self, max_iterations: int = 200) -> None:
        """Projects every healthy world's q, then u, onto its enabled sphere contacts."""
        self._b.assemble(int(max_iterations))

    def reset(self, indices=None, mask=None) -> None:
        """Puts worlds back to their initial state (time 0, z = 0, healthy): all of them, the listed
        world indices, or those where the boolean mask of one entry per world is true."""
        if indices is not None and mask is not None:
            raise ValueError("reset takes indices or mask, not both")
        if indices is not None:
            self._b.reset_indices(self._indices(indices))
        elif mask is not None:
            m = np.asarray(mask)
            if m.dtype != np.bool_ and not np.issubdtype(m.dtype, np.integer):
                raise TypeError(f"mask must be boolean (or integer), not {m.dtype}")
            if m.shape != (self.worlds,):
                raise ValueError(f"mask must have shape ({self.worlds},), one entry per world, not {m.shape}")
            self._b.reset_mask(np.ascontiguousarray(m != 0, dtype=np.uint8))
        else:
            self._b.reset_all()

    def set_state(self, q, u, indices=None) -> None:
        """Sets q and u of the listed worlds (all when None): arrays of shape (len(indices), nq) and
        (len(indices), nu), or (nq,) and (nu,) for the same state in each."""
        idx = np.arange(self.worlds, dtype=np.int64) if indices is None else self._indices(indices)
        qa = self._rows("q", q, len(idx), self.model.nq)
        ua = self._rows("u", u, len(idx), self.model.nu)
        self._b.set_states(idx, qa, ua)

    @property
    def status(self) -> Any:
        """Status bits of every world (0: healthy); describe_status(w) says what they mean."""
        return self._b.field("status")

    def describe_status(self, world: int) -> str:
        """A one-line description of world w's status bits ("ok" when none is set)."""
        w = operator.index(world)
        if not 0 <= w < self.worlds:
            raise IndexError(f"world {w} is outside the batch ({self.worlds} worlds)")
        return self._b.describe_status(w)

    def set_auto_reset(self, on: bool) -> None:
        """Failed worlds go back to their initial state at the end of step(), their status bits saved
        in lastFailure and resetCount incremented."""
        self._b.set_auto_reset(bool(on))

    def linearize(self, params: Sequence[str] = (), dt: Optional[float] = None,
                  integrator: Optional[str] = None) -> tuple:
        """Exact derivatives of one step of every world at its current state (docs/derivatives.md):
        A = d x+ / d x of shape (worlds, 2nu, 2nu), B = d x+ / d tau (worlds, 2nu, nu) and
        C = d x+ / d p (worlds, 2nu, len(params)), with x = [q; u] in the tangent space (position
        increments of size nu; a Ball's or Free's rotation as a rotation vector in its parent frame,
        as its angular speed) and p the named per-world parameters (Model.parameter_names). dt and
        integrator as step() takes them. The worlds do not change; a flagged world, or one whose step
        fails, gets NaN. The three arrays are views of one new array of shape (worlds, 2nu, 3nu + np)."""
        J = self._b.linearize(True, self._dt if dt is None else dt,
                              self._integrator if integrator is None else integrator, _names("params", params))
        nu = self.model.nu
        return J[:, :, :2 * nu], J[:, :, 2 * nu:3 * nu], J[:, :, 3 * nu:]

    def linearize_evaluation(self, params: Sequence[str] = ()) -> tuple:
        """Exact derivatives of udot at every world's current state: d udot / d x (worlds, nu, 2nu),
        d udot / d tau (worlds, nu, nu) and d udot / d p (worlds, nu, len(params)), in the tangent
        space of linearize()."""
        J = self._b.linearize(False, 1.0, "rk4", _names("params", params))
        nu = self.model.nu
        return J[:, :, :2 * nu], J[:, :, 2 * nu:3 * nu], J[:, :, 3 * nu:]

    def upload(self) -> None:
        self._b.upload()

    def download(self) -> None:
        self._b.download()

    def synchronize(self) -> None:
        self._b.synchronize()

    def quantity(self, name: str) -> np.ndarray:
        """A recordable quantity (what `simulate --record` writes: "sensors", "ground.force",
        "body.X_GB", "energy.total", ...; `lockstep info` lists them) of every world, as a new
        array of shape (worlds, components), the columns named by Model.quantity_components(name).
        Quantities of accelerations use the udot of the last evaluate()."""
        return self._b.quantity(name)

    def render(self, world: int = 0, width: int = 640, height: int = 480, camera: Optional[Mapping[str, Any]] = None,
               worlds: Optional[Sequence[int]] = None, mesh_paths: Sequence[str] = ()) -> np.ndarray:
        """A picture of world `world` (or of the listed `worlds`, side by side) at the bodies' poses
        of the last step, reset or evaluate(): an (height, width, 3) uint8 array, drawn off-screen
        without a display (MuJoCo's renderer: EGL on a GPU, else OSMesa; docs/viewer.md). The bodies are
        drawn from the robot file's visual shapes (URDF visuals, MJCF geoms; meshes found in the
        file's folder, `mesh_paths` (a folder or a sequence of them), LOCKSTEP_MESH_PATH or
        ROS_PACKAGE_PATH), else as their inertia boxes, with the contact spheres and the ground.
        width and height: whole numbers of pixels (1 to 8192). camera: None follows the worlds; or a
        dict of "lookat" (x, y, z), "distance" (m, > 0), "azimuth" and "elevation" (degrees, MuJoCo's
        convention), all finite; without "lookat" the camera follows the worlds (from "distance"
        when given, else from one that frames them)."""
        shown = [operator.index(world)] if worlds is None else [operator.index(w) for w in worlds]
        if not shown:
            raise ValueError("worlds: give at least one world")
        for w in shown:
            if not 0 <= w < self.worlds:
                raise IndexError(f"world {w} is outside the batch ({self.worlds} worlds)")
        size = []
        for what, value in (("width", width), ("height", height)):
            try:
                n = operator.index(value)
            except TypeError:
                raise TypeError(f"{what} must be a whole number of pixels, not {value!r}") from None
            if not 1 <= n <= 8192:
                raise ValueError(f"{what} must be between 1 and 8192 pixels, not {n}")
            size.append(n)
        if isinstance(mesh_paths, (str, bytes, os.PathLike)):
            mesh_paths = [mesh_paths]  # one folder, not its characters
        paths = tuple(os.fsdecode(p) for p in mesh_paths)
        camera = dict(camera or {})
        unknown = set(camera) - {"lookat", "distance", "azimuth", "elevation"}
        if unknown:
            raise ValueError(f"camera: unknown key(s) {sorted(unknown)}; give lookat, distance, azimuth, elevation")

        def number(key, default):
            x = float(camera.get(key, default))
            if not np.isfinite(x):
                raise ValueError(f"camera {key} must be a finite number, not {camera[key]!r}")
            return x
        lookat = [float(x) for x in camera["lookat"]] if "lookat" in camera else []
        if lookat and (len(lookat) != 3 or not np.all(np.isfinite(lookat))):
            raise ValueError(f"camera lookat must be three finite numbers (x, y, z), not {camera['lookat']!r}")
        distance = number("distance", 0.0)  # 0: following, one that frames the worlds; at lookat, 3 m
        if "distance" in camera and not distance > 0:
            raise ValueError(f"camera distance must be a finite number > 0, not {camera['distance']!r}")
        key = (size[0], size[1], len(shown), paths)
        with self._render_lock:
            renderer = self._renderers.pop(key, None)
            if renderer is None:
                renderer = _ext.FrameRenderer(self.model._ext, key[0], key[1], key[2], list(paths))
            self._renderers[key] = renderer
            while len(self._renderers) > self._RENDERERS_KEPT:
                self._renderers.popitem(last=False)
        if self.device == "cuda":
            self.download()
        nb = len(self.model.body_names)
        poses = np.ascontiguousarray(self.host_field("bodyPose")[shown], dtype=np.float64).reshape(len(shown), nb, 7)
        return renderer.render(poses, lookat, distance, number("azimuth", 135.0), number("elevation", -20.0))

    _RENDERERS_KEPT = 4

    def close_renderers(self) -> None:
        """Frees the renderers render() keeps (at most four: by frame size, world count and mesh
        paths); the next render() makes its renderer again."""
        with self._render_lock:
            self._renderers.clear()

    def host_field(self, name: str) -> np.ndarray:
        """The host copy of a field as a NumPy view (the same as field() on the CPU backend; on the
        CUDA backend, valid after download())."""
        return self._b.field(name, host=True)

    def _indices(self, indices) -> np.ndarray:
        idx = np.asarray(indices)
        if idx.ndim == 0:
            idx = idx.reshape(1)
        if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
            raise TypeError(f"indices must be a 1-D array of integers, not {idx.dtype} of shape {idx.shape}")
        # Checked in their own type (a uint64 index above 2**63 would turn negative as int64).
        bad = (idx < 0) | (idx >= self.worlds) if idx.size else np.zeros(0, dtype=bool)
        if bad.any():
            raise IndexError(f"world {int(idx[bad][0])} is outside the batch ({self.worlds} worlds)")
        return np.ascontiguousarray(idx, dtype=np.int64)

    def _rows(self, what: str, values, count: int, width: int) -> np.ndarray:
        a = np.asarray(values, dtype=self.dtype)
        if a.shape == (width,):
            a = np.broadcast_to(a, (count, width))
        if a.shape != (count, width):
            raise ValueError(f"{what} must have shape ({count}, {width}) or ({width},), not {np.shape(values)}")
        return np.ascontiguousarray(a)


def _names(what: str, names) -> list:
    """A list of names from one string or a sequence of strings."""
    if isinstance(names, str):
        return [names]
    out = list(names)
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"{what} must be names (strings), not {type(n).__name__}")
    return out


def _count(what: str, value, least: int = 1) -> int:
    """A whole number (an int, a NumPy integer, or a float with no fraction: 3e7) of at least `least`."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value) or value != int(value):
            raise ValueError(f"{what} must be a whole number, not {value!r}")
        value = int(value)
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be a whole number, not {type(value).__name__}") from None
    if n < least or n >= 2**63:
        raise ValueError(f"{what} must be at least {least} and below 2**63, not {n}")
    return n


def _field_property(name: str, doc: str) -> property:
    def get(self):
        return self._b.field(name)

    def set(self, value):
        view = self._b.field(name)
        if not isinstance(view, np.ndarray):
            raise TypeError(f"'{name}' is in device memory: write into it through DLPack "
                            f"(torch.from_dlpack(batch.{name})[...] = ...)")
        value = np.asarray(value)
        if value.dtype.kind not in "biuf":  # None, strings, objects: NumPy would write NaN or fail late
            raise TypeError(f"field '{name}' takes numbers, not {type(value.item()).__name__ if value.ndim == 0 else value.dtype}")
        try:
            view[...] = value
        except ValueError:
            raise ValueError(f"cannot assign an array of shape {value.shape} to field '{name}' of shape "
                             f"{view.shape}") from None

    return property(get, set, doc=f"{doc} (a view; see the module's documentation for the layout)")


# Every registry field becomes a property of Batch, named as in the registry; names Batch already
# gives a meaning (status) keep it.
for _f in FIELDS:
    if not hasattr(Batch, _f["name"]):
        setattr(Batch, _f["name"], _field_property(_f["name"], _f["doc"]))
del _f


def run_study(study: Union[str, os.PathLike, Mapping[str, Any]], device: str = "auto") -> dict:
    """Runs a Monte Carlo study (docs/study-format.md) from a study file, a scene file with a
    "study" object, or the same as a dict (relative paths from the current directory), as
    `lockstep study` runs it, and returns everything it writes:
      "report": the statistics as `lockstep study` writes them to PREFIX.json (a dict);
      per output: "names", arrays "count", "mean", "stddev", "min", "max", "standard_error",
        "ci95_half_width", "quantiles" [outputs, levels] at "quantile_levels", "histograms"
        [outputs, bins], and "undefined" (why an output has no statistics: no healthy world; its
        numbers are NaN then; "" otherwise);
      "spearman" [variations, outputs] (NaN where undefined) with "spearman_undefined" (the reasons);
      for a Sobol study "sobol": per output a dict of arrays [variations] "first", "first_low",
        "first_high", "total", "total_low", "total_high" (95% bootstrap intervals; NaN where
        undefined), "rows" and "undefined" (the reasons);
      for a derivative study ("sensitivity": "derivative") "dgsm" [outputs, variations] (the mean
        squared derivative of each output by each varied value over the healthy worlds), "dgsm_bound"
        (Sobol and Kucherenko's bound on the total Sobol index) and "dgsm_undefined" (why NaN);
      per world (as PREFIX.npz): "parameters" [worlds, variations] (the drawn values) with
        "parameter_names", "outcomes" [outputs, worlds] and "status" [worlds] (statistics are over
        the worlds of status 0);
    with "flagged_worlds", "worlds", "steps", "dt", "seed", "backend", "precision", "wall_seconds"."""
    if device not in _DEVICES:
        raise ValueError(f'device must be "cpu", "cuda" or "auto", not {device!r}')
    if isinstance(study, Mapping):
        r = _ext.run_study_text(json.dumps(study), "<dict>", os.getcwd(), device)
    else:
        r = _ext.run_study_file(os.fspath(study), device)
    r["report"] = json.loads(r["report"])
    outputs = r.pop("outputs")
    r["names"] = [o["name"] for o in outputs]
    r["undefined"] = [o["undefined"] for o in outputs]
    for key, dtype in (("count", np.int64), ("mean", np.float64), ("stddev", np.float64), ("min", np.float64),
                       ("max", np.float64), ("standard_error", np.float64), ("ci95_half_width", np.float64)):
        r[key] = np.array([o[key] for o in outputs], dtype=dtype)
    r["quantile_levels"] = np.array(outputs[0]["quantile_levels"] if outputs else [], dtype=np.float64)
    r["quantiles"] = np.array([o["quantiles"] for o in outputs], dtype=np.float64)
    r["histograms"] = np.array([o["histogram"] for o in outputs], dtype=np.int64)
    k = len(r["parameter_names"])
    r["spearman"] = np.array(r["spearman"], dtype=np.float64).reshape(k, len(outputs))
    for s in r["sobol"]:
        for key in ("first", "first_low", "first_high", "total", "total_low", "total_high"):
            s[key] = np.array(s[key], dtype=np.float64)
    for key in ("dgsm", "dgsm_bound"):
        r[key] = np.array(r[key], dtype=np.float64).reshape(len(r[key]), k)
    r["parameters"] = np.array(r["parameters"], dtype=np.float64).reshape(k, len(r["status"])).T.copy()
    r["outcomes"] = np.array(r["outcomes"], dtype=np.float64)
    r["status"] = np.array(r["status"], dtype=np.int32)
    return r


def __getattr__(name: str):
    # lockstep.VectorEnv needs Gymnasium: imported on first use only.
    if name == "VectorEnv":
        from .env import VectorEnv
        return VectorEnv
    raise AttributeError(f"module 'lockstep' has no attribute {name!r}")


# Gymnasium's MuJoCo tasks as lockstep/<task> (lockstep.tasks, docs/environments.md), registered
# when Gymnasium is installed.
try:
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:  # pragma: no cover - Gymnasium is optional
    pass
else:
    try:
        from .tasks import register as _register_tasks
    except ImportError:  # a Gymnasium older than 1.1 (no AutoresetMode): the tasks need 1.1
        pass
    else:
        _register_tasks()
    del _gymnasium
