"""The base of the MuJoCo tasks (lockstep/<task>, lockstep.tasks): a Gymnasium v5 task's XML, spaces,
actions, initial state and episode length on a Batch, with the episode rules of lockstep.episodes.
A task (lockstep.tasks) adds only its observation, reward, termination and reset noise."""
from __future__ import annotations

import os
from types import MappingProxyType
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import Batch, _ext, load
from .arrays import NumpyOps, TorchOps, quaternion_of_rotation_vector, quaternion_product
from .episodes import EpisodeVectorEnv
from .mujoco_state import MujocoState

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")


def _asset(name: str) -> str:
    """The task's XML: installed beside the package, or in the source tree's models/mjcf."""
    for base in (ASSETS, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "mjcf")):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"lockstep: the task model {name} is neither in {ASSETS} nor in the source tree's "
                            f"models/mjcf (reinstall lockstep)")


@dataclass(frozen=True)
class TaskSpec:
    """A Gymnasium v5 MuJoCo task: its XML, frame_skip, the engine's dt under the compliant law (RK4
    substeps), its episode length and its keyword arguments with Gymnasium's defaults."""
    name: str
    xml: str
    frame_skip: int
    engine_dt: float
    max_episode_steps: int
    defaults: Dict[str, Any] = field(default_factory=dict)
    # render(): the camera's azimuth and elevation (degrees, MuJoCo's convention); it follows the world.
    camera: Dict[str, float] = field(default_factory=lambda: {"azimuth": 135.0, "elevation": -20.0})
    # The contact laws it can take: those whose contacts the task needs (Pusher's arm against the
    # object is a pair contact, which only MuJoCo's law has).
    laws: Sequence[str] = ("mujoco", "compliant")


class MujocoTaskEnv(EpisodeVectorEnv):
    """The base of the seven tasks: num_envs worlds of the task's model, each one sub-environment.
    It maps the engine's state to MuJoCo's (self.state, a MujocoState), writes the actions and sets
    the initial states; lockstep.episodes applies the episode rules. A task defines _observe,
    _progress, _reward and _noise.

    Keywords beyond the task's own (Gymnasium's v5 keyword arguments):
      device: "cpu" or "cuda" (observations, rewards and flags in device memory, as torch tensors);
      dtype: the engine's precision, "float64" (default) or "float32";
      array: "numpy" (default on the CPU) or "torch" (the default on CUDA);
      autoreset_mode: AutoresetMode.NEXT_STEP (default), SAME_STEP or DISABLED (or their values);
      action: "torque" (Gymnasium's: the control of each motor) or "target" (a position target per
        actuated joint, tracked by PD gains kp and kd within the motor's torque range);
      randomize: per-world parameters drawn again for every world that resets, as a study file's
        "vary" list ({"parameter": "body.torso.mass", "distribution": "uniform", "low": 4, "high": 6});
      max_episode_steps: truncation (default Gymnasium's), threads: CPU threads (0: all cores),
      contact_law: "mujoco" (default: MuJoCo's soft constraints, stepped at the XML's timestep with its
        integrator, as Gymnasium's MuJoCo steps: the same observations, rewards and terminations) or
        "compliant" (Hunt-Crossley spheres and stops, in RK4 substeps of the task's engine_dt;
        docs/mjcf.md, "Contact laws");
      integrator: under the compliant law, "rk4" (default: its explicit force elements in RK4 substeps)
        or "implicit" (the compliant law's implicit step at the XML's timestep, as MuJoCo's law steps;
        docs/contact-laws.md); MuJoCo's law takes the XML's own integrator;
      engine_dt: the engine's step (must divide frame_skip * MuJoCo's timestep; default: the XML's
        timestep for "mujoco" and the implicit compliant step, the task's for "compliant" in RK4).
    """

    spec_: TaskSpec

    def __init__(self, num_envs: int = 1, *, device: str = "cpu", dtype: str = "float64", array: Optional[str] = None,
                 autoreset_mode=AutoresetMode.NEXT_STEP, action: str = "torque", kp: Optional[float] = None,
                 kd: Optional[float] = None, randomize: Optional[Sequence[dict]] = None,
                 max_episode_steps: Optional[int] = None, threads: int = 0, engine_dt: Optional[float] = None,
                 render_mode: Optional[str] = None, width: int = 480, height: int = 480,
                 camera: Optional[Dict[str, Any]] = None, frame_skip: Optional[int] = None, xml_file: Optional[str] = None,
                 contact_law: str = "mujoco", integrator: Optional[str] = None, **task_kwargs):
        spec = self.spec_
        unknown = sorted(set(task_kwargs) - set(spec.defaults))
        if unknown:
            raise TypeError(f"lockstep/{spec.name}: unknown keyword argument(s) {', '.join(unknown)}; the task "
                            f"takes {', '.join(sorted(spec.defaults))} and the vector environment's own")
        # The arguments it was made with: pickling makes it again from them (then set_state).
        self._made_with = dict(num_envs=num_envs, device=device, dtype=dtype, array=array, autoreset_mode=autoreset_mode,
                               action=action, kp=kp, kd=kd, randomize=randomize, max_episode_steps=max_episode_steps,
                               threads=threads, engine_dt=engine_dt, render_mode=render_mode, width=width,
                               height=height, camera=camera, frame_skip=frame_skip, xml_file=xml_file,
                               contact_law=contact_law, integrator=integrator, **task_kwargs)
        self._init_rendering(f"lockstep/{spec.name}", render_mode, width, height,
                             spec.camera if camera is None else camera)
        self._options = {**spec.defaults, **task_kwargs}
        _check_options(f"lockstep/{spec.name}", self._options)
        self.frame_skip = spec.frame_skip if frame_skip is None else int(frame_skip)
        if self.frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, not {frame_skip!r}")
        xml = _asset(spec.xml) if xml_file is None else os.fspath(xml_file)
        if device not in ("cpu", "cuda"):
            raise ValueError(f'device must be "cpu" or "cuda", not {device!r}')
        array = array or ("torch" if device == "cuda" else "numpy")
        if array not in ("numpy", "torch") or (device == "cuda" and array != "torch"):
            raise ValueError(f'array must be "numpy" or "torch" ("torch" on CUDA), not {array!r}')
        if contact_law not in ("mujoco", "compliant"):
            raise ValueError(f'contact_law must be "mujoco" or "compliant", not {contact_law!r}')
        if contact_law not in spec.laws:
            raise ValueError(f'lockstep/{spec.name}: contact_law="{contact_law}" has no contacts between moving '
                             f'bodies, which the task needs; it takes contact_law="mujoco"')
        if integrator is not None and (contact_law != "compliant" or integrator not in ("rk4", "implicit")):
            raise ValueError(f'integrator must be "rk4" or "implicit" under contact_law="compliant" (MuJoCo\'s '
                             f'law takes the XML\'s own), not {integrator!r} under contact_law="{contact_law}"')
        implicit = integrator == "implicit"
        if engine_dt is not None:
            edt = float(engine_dt)
            if not (np.isfinite(edt) and edt > 0):
                raise ValueError(f"engine_dt must be a positive number of seconds, not {engine_dt!r}")
        self.contact_law = contact_law
        # The XML compiled and converted once: the model and its MuJoCo layout come from one import.
        # MuJoCo's law steps at the XML's own timestep with its integrator; the compliant law's stiff
        # contacts take RK4 substeps of the task's engine_dt, or its implicit step at the XML's
        # timestep (or engine_dt: the law's constraints are made for that step).
        scene = {"name": spec.name, "mjcf": {"path": xml, "contact_law": contact_law}}
        if contact_law == "compliant":
            scene["simulation"] = {"integrator": "implicit" if implicit else "rk4"}
            if implicit and engine_dt is not None:
                scene["simulation"]["dt"] = edt
        self.model = load(scene)
        self.layout = self.model.mjcf_layout
        self.dt = self.layout["timestep"] * self.frame_skip  # Gymnasium's env dt
        if engine_dt is None:
            edt = self.layout["timestep"] if contact_law == "mujoco" or implicit else spec.engine_dt
        substeps = self.dt / edt
        if not (np.isfinite(substeps) and substeps >= 1 and abs(substeps - round(substeps)) < 1e-9 * substeps):
            raise ValueError(f"engine_dt {edt!r} must divide the environment's dt {self.dt!r} (frame_skip "
                             f"{self.frame_skip} x timestep {self.layout['timestep']})")
        self.substeps, self.engine_dt = int(round(substeps)), self.dt / round(substeps)
        self.batch = Batch(self.model, num_envs, device=device, dtype=dtype, threads=threads)
        self.num_envs = self.batch.worlds
        self.device = self.batch.device
        # The arrays the task computes with: torch on CUDA (the fields are device memory); NumPy on the
        # CPU, also for array="torch", whose results are then torch tensors sharing the NumPy arrays'
        # memory (torch.from_numpy: no copy), as each small torch operation costs several times NumPy's.
        self.xp = TorchOps(dtype, "cuda") if self.device == "cuda" else NumpyOps(dtype)
        if array == "torch" and self.device != "cuda":
            import torch
            self._as_torch = torch.from_numpy
        self.state = MujocoState(self.batch, self.layout, self.xp)
        self._init_episodes(max_episode_steps=spec.max_episode_steps if max_episode_steps is None else max_episode_steps,
                            autoreset_mode=autoreset_mode, randomize=randomize, render_fps=int(np.round(1.0 / self.dt)))

        # Initial state: MuJoCo's qpos0 and zero velocities; under the compliant law clamped into the
        # joint ranges (Ant's ankles start outside theirs, where a stop would start compressed; MuJoCo's
        # soft limits start there as Gymnasium's do).
        self.init_qpos = np.array(self.layout["qpos0"], dtype=np.float64)
        self.init_qvel = np.zeros(self.layout["nv"])
        params = self.batch.params
        speed_names = self.model.speed_names
        if contact_law == "compliant":
            for lo_hi, (qa, _, _, uo) in zip(self._ranges(), self.state.scalar):
                self.init_qpos[qa] = np.clip(self.init_qpos[qa], *lo_hi)

        # Actions.
        acts = self.layout["actuators"]
        if any(a["drives_target"] for a in acts):
            raise ValueError(f"lockstep/{spec.name}: position and velocity servos are not tasks' actuators here")
        self._act_u = np.array([a["u"] for a in acts], dtype=np.int64)
        ctrl = np.array([a["ctrl_range"] for a in acts], dtype=np.float64)
        if action == "torque":
            low, high = ctrl[:, 0], ctrl[:, 1]
        elif action == "target":
            if kp is None or kd is None or not (kp > 0 and kd >= 0):
                raise ValueError('action="target" needs the PD gains: kp > 0 and kd >= 0 (N m/rad, N m s/rad)')
            ranges = np.array([self._range_of_speed(u) for u in self._act_u], dtype=np.float64)
            low, high = ranges[:, 0], ranges[:, 1]
            for a, u in zip(acts, self._act_u):
                name = speed_names[u]
                params[f"actuator.{name}.mode"] = 1.0
                params[f"actuator.{name}.kp"] = float(kp)
                params[f"actuator.{name}.kd"] = float(kd)
                limit = abs(a["gear"]) * np.max(np.abs(a["ctrl_range"]))
                if np.isfinite(limit):
                    params[f"effort_limit.{name}"] = limit
        else:
            raise ValueError(f'action must be "torque" or "target", not {action!r}')
        self.action = action
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            raise ValueError(f"lockstep/{spec.name}: the actuators' control ranges must be finite")
        self.single_action_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        obs = self._observe()
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (obs.shape[1],), dtype=self.batch.dtype)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    # --- task options (curricula) ---
    @property
    def options(self) -> Mapping[str, Any]:
        """The task's keyword arguments in force (Gymnasium's v5 arguments: reward weights, healthy
        ranges, reset noise, ...), read-only; assigning a dict calls set_options(**it)."""
        return MappingProxyType(self._options)

    @options.setter
    def options(self, value: Dict[str, Any]) -> None:
        self.set_options(**value)

    def set_options(self, **options) -> None:
        """Changes the task's keyword arguments from now on: the reward and termination from the next
        step, the reset noise from the next reset (docs/environments.md, "Curricula"). Those that shape
        the observation (exclude_*, include_*) are fixed when the environment is made."""
        spec = self.spec_
        unknown = sorted(set(options) - set(spec.defaults))
        if unknown:
            raise TypeError(f"lockstep/{spec.name}: unknown option(s) {', '.join(unknown)}; the task takes "
                            f"{', '.join(sorted(spec.defaults))}")
        fixed = [k for k in options if k.startswith(("exclude_", "include_")) and options[k] != self._options[k]]
        if fixed:
            raise ValueError(f"lockstep/{spec.name}: {', '.join(fixed)} shape(s) the observation space, fixed when "
                             f"the environment is made")
        self._options.update(options)

    # --- checkpoints and pickling ---
    def _extra_state(self) -> Dict[str, Any]:
        return {"options": dict(self._options)}

    def _set_extra_state(self, state: Dict[str, Any]) -> None:
        self.set_options(**state["options"])

    def _state_changed(self) -> None:
        self.state.invalidate()

    def __reduce_ex__(self, protocol):
        """Pickles as the arguments it was made with and its checkpoint (get_state): unpickling makes
        the environment again, which takes as long as making it, and restores the checkpoint."""
        made_with = {**self._made_with, "autoreset_mode": self.autoreset_mode}  # lockstep.sb3 may have switched it
        return _unpickle_task, (type(self), made_with, self.get_state(), getattr(self, "spec", None))

    # --- what each task defines ---
    def _observe(self):
        raise NotImplementedError

    def _progress(self):
        """What the reward needs from before the step (positions whose rate is rewarded)."""
        return None

    def _reward(self, before, ctrl):
        """(reward, terminated, info of arrays) after a step; ctrl: the actions [n, nu] as given."""
        raise NotImplementedError

    def _noise(self, qpos, qvel, rng):
        """Adds the task's reset noise to qpos, qvel (NumPy [k, nq], [k, nv], copies of the initial state);
        rng: lockstep.seeding.WorldStreams of the k worlds (every draw of shape (k, ...))."""
        raise NotImplementedError

    # --- helpers ---
    def _ranges(self):
        return [self._range_of_speed(uo) for (_, _, _, uo) in self.state.scalar]

    def _range_of_speed(self, u):
        name = self.model.speed_names[u]
        params = self.batch.params
        key = f"stop.{name}.lower"
        if key in params:
            lo, hi = float(params[key][0]), float(params[f"stop.{name}.upper"][0])
            if np.isfinite(lo) and np.isfinite(hi):
                return lo, hi
        return -np.pi, np.pi

    def _tangent_noise(self, qpos, scale, rng, kind="uniform"):
        """Gymnasium's qpos noise, but on a free or ball joint's orientation a rotation by a random
        rotation vector of the same distribution per component (the quaternion stays unit)."""
        k = qpos.shape[0]
        draw = (lambda n: rng.uniform(-scale, scale, (k, n))) if kind == "uniform" else \
            (lambda n: scale * rng.standard_normal((k, n)))
        out = qpos.copy()
        out[:, self.state.qpos_of_q] += draw(len(self.state.qpos_of_q))
        for j in self.state.free + self.state.ball:
            a = j["qpos_adr"] + (3 if j["type"] == "free" else 0)
            if j["type"] == "free":
                out[:, a - 3:a] += draw(3)
            out[:, a:a + 4] = quaternion_product(out[:, a:a + 4], quaternion_of_rotation_vector(draw(3)))
        return out

    # --- the episode layer's hooks (lockstep.episodes) ---
    def _start_episodes(self, idx: np.ndarray, rng) -> None:
        """MuJoCo's initial state (qpos0, under the compliant law clamped into the ranges; qvel 0) with
        the task's reset noise."""
        qpos = np.repeat(self.init_qpos[None], idx.size, axis=0)
        qvel = np.repeat(self.init_qvel[None], idx.size, axis=0)
        qpos, qvel = self._noise(qpos, qvel, rng)
        q, u = self.state.to_lockstep(qpos, qvel)
        self.batch.set_state(q, u, indices=idx)
        self.state.invalidate()

    def _write_actions(self, actions):
        xp = self.xp
        a = xp.asarray(actions)
        if tuple(a.shape) != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, not {tuple(a.shape)}")
        if self.action == "torque":
            self.state.fields["tau"][:, self._act_u] = a
        else:
            low, high = xp.asarray(self.single_action_space.low), xp.asarray(self.single_action_space.high)
            self.state.fields["target"][:, 2 * self._act_u] = xp.clip(a, low, high)
        return a

    def _before_step(self):
        return self._progress()

    def _advance(self) -> None:
        self.batch.step(self.substeps, self.engine_dt)
        self.state.invalidate()

    def _score(self, before, actions, obs):
        return self._reward(before, actions)

    def close_extras(self, **kwargs):
        super().close_extras(**kwargs)
        self.state = None


def _check_options(label: str, options: Dict[str, Any]) -> None:
    """A task's options as numbers can be: none is NaN (it would make every reward NaN, or every
    comparison false), and the weights, the healthy reward and the reset noise are finite. Ranges
    such as healthy_z_range may be open (inf)."""
    for name, value in options.items():
        values = value if isinstance(value, (tuple, list)) else [value]
        for v in values:
            if isinstance(v, (bool, np.bool_, str)) or v is None:
                continue
            try:
                x = float(v)
            except (TypeError, ValueError):
                continue
            finite = name.endswith("_weight") or name in ("healthy_reward", "reset_noise_scale")
            if np.isnan(x) or (finite and not np.isfinite(x)):
                raise ValueError(f"{label}: {name} must be a {'finite number' if finite else 'number'}, not {value!r}")


def _unpickle_task(cls, made_with: Dict[str, Any], state: Dict[str, Any], spec):
    env = cls(**made_with)
    env.set_state(state)
    if spec is not None:
        env.spec = spec
    return env
