"""Gymnasium's MuJoCo v5 tasks as Lockstep vector environments (docs/environments.md).

    import gymnasium as gym, lockstep
    envs = gym.make_vec("lockstep/Ant-v5", num_envs=4096)          # registered by `import lockstep`
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

Each task loads Gymnasium's own XML through MuJoCo's compiler (lockstep.load of an .xml) and has
the observation and action spaces, rewards, termination rules, reset noise, frame_skip and keyword
arguments of Gymnasium's v5 environment. Every quantity MuJoCo's `data` would give (qpos, qvel,
xpos, xipos, cinert, cvel, cfrc_ext, qfrc_actuator, site_xpos) is computed for all worlds at once
from the engine's registry fields (bodyPose, bodyVelocity, bodyContact, actuator, stopForce), as
arrays of shape (num_envs, ...): NumPy arrays on the CPU, torch tensors in device memory on CUDA
(or on the CPU with array="torch"). There is no per-world Python.

Differences from Gymnasium's versions (docs/environments.md has each): contacts are Lockstep's
compliant sphere-on-half-space contacts (Simbody's Hunt-Crossley), so cfrc_ext and the contact
costs differ from MuJoCo's; joint limits are stops; the engine steps with RK4 at a smaller dt, with
frame_skip times MuJoCo's timestep per environment step kept exactly; reset noise on a free joint's
orientation is a rotation (tangent space), not noise added to the quaternion's components.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import Batch, Model, _ext, load
from .arrays import NumpyOps as _NumpyOps, TorchOps as _TorchOps
from .arrays import quaternion_of_rotation_vector as _quaternion_of_rotation_vector
from .arrays import quaternion_product as _quaternion_product
from .env import RenderedFrames
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


# ---------------------------------------------------------------------------------------------------
# The vector environment.

@dataclass(frozen=True)
class TaskSpec:
    """A Gymnasium v5 MuJoCo task: its XML, frame_skip, the engine's dt (RK4), its episode length and
    its keyword arguments with Gymnasium's defaults."""
    name: str
    xml: str
    frame_skip: int
    engine_dt: float
    max_episode_steps: int
    defaults: Dict[str, Any] = field(default_factory=dict)
    # render(): the camera's azimuth and elevation (degrees, MuJoCo's convention); it follows the world.
    camera: Dict[str, float] = field(default_factory=lambda: {"azimuth": 135.0, "elevation": -20.0})


_SIDE_VIEW = {"azimuth": 90.0, "elevation": -10.0}  # the planar tasks, seen across their plane


class MujocoTaskEnv(gym.vector.VectorEnv):
    """The base of the seven tasks: num_envs worlds of the task's model, each one sub-environment.

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
      engine_dt: the engine's step (must divide frame_skip * MuJoCo's timestep).
    """

    spec_: TaskSpec

    def __init__(self, num_envs: int = 1, *, device: str = "cpu", dtype: str = "float64", array: Optional[str] = None,
                 autoreset_mode=AutoresetMode.NEXT_STEP, action: str = "torque", kp: Optional[float] = None,
                 kd: Optional[float] = None, randomize: Optional[Sequence[dict]] = None,
                 max_episode_steps: Optional[int] = None, threads: int = 0, engine_dt: Optional[float] = None,
                 render_mode: Optional[str] = None, width: int = 480, height: int = 480,
                 camera: Optional[Dict[str, Any]] = None, frame_skip: Optional[int] = None, xml_file: Optional[str] = None,
                 **task_kwargs):
        spec = self.spec_
        unknown = sorted(set(task_kwargs) - set(spec.defaults))
        if unknown:
            raise TypeError(f"lockstep/{spec.name}: unknown keyword argument(s) {', '.join(unknown)}; the task "
                            f"takes {', '.join(sorted(spec.defaults))} and the vector environment's own")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f'lockstep/{spec.name}: render_mode must be "rgb_array" or None, not {render_mode!r}')
        self.width, self.height = int(width), int(height)
        self.camera = dict(spec.camera if camera is None else camera)
        self.options = {**spec.defaults, **task_kwargs}
        self.frame_skip = spec.frame_skip if frame_skip is None else int(frame_skip)
        if self.frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, not {frame_skip!r}")
        xml = _asset(spec.xml) if xml_file is None else os.fspath(xml_file)
        self.layout = _ext.mjcf_layout(xml)
        self.dt = self.layout["timestep"] * self.frame_skip  # Gymnasium's env dt
        edt = spec.engine_dt if engine_dt is None else float(engine_dt)
        substeps = self.dt / edt
        if not (np.isfinite(substeps) and substeps >= 1 and abs(substeps - round(substeps)) < 1e-9 * substeps):
            raise ValueError(f"engine_dt {edt!r} must divide the environment's dt {self.dt!r} (frame_skip "
                             f"{self.frame_skip} x timestep {self.layout['timestep']})")
        self.substeps, self.engine_dt = int(round(substeps)), self.dt / round(substeps)

        if device not in ("cpu", "cuda"):
            raise ValueError(f'device must be "cpu" or "cuda", not {device!r}')
        array = array or ("torch" if device == "cuda" else "numpy")
        if array not in ("numpy", "torch") or (device == "cuda" and array != "torch"):
            raise ValueError(f'array must be "numpy" or "torch" ("torch" on CUDA), not {array!r}')
        self.model = load({"name": spec.name, "mjcf": {"path": xml},
                           "simulation": {"dt": self.engine_dt, "integrator": "rk4"}})
        self.batch = Batch(self.model, num_envs, device=device, dtype=dtype, threads=threads)
        self.num_envs = self.batch.worlds
        self.device = self.batch.device
        self.xp = _TorchOps(dtype, "cuda" if self.device == "cuda" else "cpu") if array == "torch" else _NumpyOps(dtype)
        self.state = MujocoState(self.batch, self.layout, self.xp)
        self.max_episode_steps = spec.max_episode_steps if max_episode_steps is None else int(max_episode_steps)
        if self.max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be at least 1, not {max_episode_steps!r}")

        mode = AutoresetMode(autoreset_mode)
        self.metadata = {"autoreset_mode": mode, "render_modes": ["rgb_array"], "render_fps": int(np.round(1.0 / self.dt))}
        self.autoreset_mode = mode
        self.render_mode = render_mode

        # Initial state: MuJoCo's qpos0 (clamped into the joint ranges: Ant's ankles start outside
        # theirs, where a stop would start compressed) and zero velocities.
        self.init_qpos = np.array(self.layout["qpos0"], dtype=np.float64)
        self.init_qvel = np.zeros(self.layout["nv"])
        params = self.batch.params
        speed_names = self.model.speed_names
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

        # Domain randomization: a study file's "vary" list, drawn per reset world.
        self.randomize = list(randomize or [])
        self._randomize_json = json.dumps(self.randomize)
        if self.randomize:
            _ext.draw_variations(self._randomize_json, "randomize", 0, [0])  # malformed entries fail here
            names = set(self.batch.params)
            bad = [v.get("parameter") for v in self.randomize if v.get("parameter") not in names]
            if bad:
                raise ValueError(f"randomize: no parameter named {bad[0]!r} in lockstep/{spec.name} "
                                 f"(Model.parameter_names lists them)")
        self._episodes = np.zeros(self.num_envs, dtype=np.int64)
        self._randomize_seed = 0

        self._episode_steps = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._closed = False
        self._all_true = np.ones(self.num_envs, dtype=bool)
        obs = self._observe()
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (obs.shape[1],), dtype=np.float64)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

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
        """Adds the task's reset noise to qpos, qvel (NumPy [k, nq], [k, nv], copies of the initial state)."""
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

    def _check_open(self):
        if self._closed:
            raise gym.error.ClosedEnvironmentError(f"lockstep/{self.spec_.name}: the environment is closed (close() "
                                                   f"was called); make a new one")

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
            out[:, a:a + 4] = _quaternion_product(out[:, a:a + 4], _quaternion_of_rotation_vector(draw(3)))
        return out

    def _reset_worlds(self, idx: np.ndarray) -> None:
        if idx.size == 0:
            return
        if self.randomize:
            draws = _ext.draw_variations(self._randomize_json, "randomize", self._randomize_seed,
                                         (idx + self.num_envs * self._episodes[idx]).tolist())
            for v, values in zip(self.randomize, draws):
                all_worlds = np.array(self.batch.params[v["parameter"]])
                all_worlds[idx] = values
                self.batch.params[v["parameter"]] = all_worlds
        self._episodes[idx] += 1
        qpos = np.broadcast_to(self.init_qpos, (idx.size, self.init_qpos.size)).copy()
        qvel = np.broadcast_to(self.init_qvel, (idx.size, self.init_qvel.size)).copy()
        qpos, qvel = self._noise(qpos, qvel, self.np_random)
        q, u = self.state.to_lockstep(qpos, qvel)
        self.batch.set_state(q, u, indices=idx)
        self.state.invalidate()
        self._episode_steps[idx] = 0

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

    # --- the VectorEnv API ---
    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Resets every world, or with options={"reset_mask": mask} those where mask is true. seed:
        an int, or a list of ints (one per world; the generator is seeded with the list)."""
        self._check_open()
        if seed is not None:
            if isinstance(seed, (list, tuple, np.ndarray)):
                if len(seed) != self.num_envs:
                    raise ValueError(f"seed: a list of {self.num_envs} seeds (one per environment), not {len(seed)}")
                seed_value = [int(s) for s in seed]
            else:
                seed_value = int(seed)
            self._np_random = np.random.default_rng(seed_value)
            self._np_random_seed = seed_value
            self._randomize_seed = int(np.random.SeedSequence(seed_value).generate_state(1, np.uint64)[0])
            self._episodes[:] = 0
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            idx = np.arange(self.num_envs)
        else:
            m = np.asarray(mask)
            if m.dtype != np.bool_ or m.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a boolean array of shape ({self.num_envs},)")
            idx = np.flatnonzero(m)
        self._reset_worlds(idx)
        self._autoreset[idx] = False
        return self._observe(), {}

    def step(self, actions):
        self._check_open()
        xp = self.xp
        ctrl = self._write_actions(actions)
        before = self._progress()
        resetting = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else \
            np.zeros(self.num_envs, dtype=bool)
        self.batch.step(self.substeps, self.engine_dt)
        self.state.invalidate()
        self._episode_steps += 1
        status = self.xp.to_numpy(self.state.fields["status"]).copy()
        flagged = (status != 0) & ~resetting
        obs = xp.nan_to_num(self._observe())
        reward, terminated, info = self._reward(before, ctrl)
        reward = xp.nan_to_num(reward)
        terminated = self.xp.to_numpy(terminated).astype(bool) & ~flagged
        truncated = (self._episode_steps >= self.max_episode_steps) | flagged
        info = {**info, **{"_" + k: self._all_true for k in info}}
        if flagged.any():
            # The engine kept the state from before the failing step (finite): truncated, reset next.
            reward[xp.from_numpy(flagged)] = 0.0
            info["status"] = np.array([self.batch.describe_status(int(w)) if f else "" for w, f in
                                       enumerate(flagged)], dtype=object)
            info["_status"] = flagged
        if resetting.any():
            # NEXT_STEP: the worlds that ended on the last step start again instead of stepping.
            self._reset_worlds(np.flatnonzero(resetting))
            fresh = self._observe()
            mask = xp.from_numpy(resetting)
            obs[mask] = fresh[mask]
            reward[mask] = 0.0
            terminated[resetting] = False
            truncated[resetting] = False
        done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done.any():
            info["final_obs"] = obs.clone() if self.xp.name == "torch" else obs.copy()
            info["_final_obs"] = done.copy()
            self._reset_worlds(np.flatnonzero(done))
            fresh = self._observe()
            mask = xp.from_numpy(done)
            obs[mask] = fresh[mask]
        self._autoreset = done & (self.autoreset_mode == AutoresetMode.NEXT_STEP)
        return obs, reward, xp.from_numpy(terminated), xp.from_numpy(truncated), info

    def render(self) -> Optional[Sequence[np.ndarray]]:
        """With render_mode="rgb_array": one (height, width, 3) uint8 frame per sub-environment (a
        sequence drawn on demand), the camera following each world; None otherwise."""
        if self.render_mode is None:
            gym.logger.warn("render() was called without render_mode; make the environment with render_mode=\"rgb_array\"")
            return None
        return RenderedFrames(self)

    def close_extras(self, **kwargs):
        self._closed = True
        self.state = None
        self.batch = None


def _healthy_range(x, bounds, inclusive):
    lo, hi = bounds
    return (x >= lo) & (x <= hi) if inclusive else (x > lo) & (x < hi)


class AntEnv(MujocoTaskEnv):
    spec_ = TaskSpec("Ant-v5", "ant.xml", 5, 1e-3, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.5, contact_cost_weight=5e-4, healthy_reward=1.0,
        main_body=1, terminate_when_unhealthy=True, healthy_z_range=(0.2, 1.0), contact_force_range=(-1.0, 1.0),
        reset_noise_scale=0.1, exclude_current_positions_from_observation=True,
        include_cfrc_ext_in_observation=True))

    def _main(self):
        b = self.options["main_body"]
        return b if isinstance(b, (int, np.integer)) else self.state.body_names.index(b)

    def _contact_forces(self):
        lo, hi = self.options["contact_force_range"]
        return self.xp.clip(self.state.contact_forces(), lo, hi)

    def _observe(self):
        o, xp = self.options, self.xp
        qpos = self.state.qpos()
        parts = [qpos[:, 2:] if o["exclude_current_positions_from_observation"] else qpos, self.state.qvel()]
        if o["include_cfrc_ext_in_observation"]:
            f = self._contact_forces()
            parts.append(f[:, 1:].reshape(f.shape[0], -1))
        return xp.cat(parts, axis=1)

    def _progress(self):
        return self.state.frames()[1][:, self._main(), 0:2]

    def _healthy(self):
        o, xp = self.options, self.xp
        qpos, qvel = self.state.qpos(), self.state.qvel()
        finite = xp.all(xp.isfinite(qpos), 1) & xp.all(xp.isfinite(qvel), 1)
        return finite & _healthy_range(qpos[:, 2], o["healthy_z_range"], inclusive=True)

    def _reward(self, before, ctrl):
        o, xp = self.options, self.xp
        v = (self.state.frames()[1][:, self._main(), 0:2] - before) / self.dt
        healthy = self._healthy()
        forward = v[:, 0] * o["forward_reward_weight"]
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        f = self._contact_forces()
        contact_cost = o["contact_cost_weight"] * xp.sum(f.reshape(f.shape[0], -1) ** 2, 1)
        reward = forward + survive - ctrl_cost - contact_cost
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        qpos = self.state.qpos()
        info = {"x_position": qpos[:, 0], "y_position": qpos[:, 1], "x_velocity": v[:, 0], "y_velocity": v[:, 1],
                "reward_forward": forward, "reward_ctrl": -ctrl_cost, "reward_contact": -contact_cost,
                "reward_survive": survive}
        return reward, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self.options["reset_noise_scale"]
        qpos = self._tangent_noise(qpos, s, rng)
        return qpos, qvel + s * rng.standard_normal(qvel.shape)


class HalfCheetahEnv(MujocoTaskEnv):
    spec_ = TaskSpec("HalfCheetah-v5", "half_cheetah.xml", 5, 1e-3, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.1, reset_noise_scale=0.1,
        exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)

    def _observe(self):
        qpos = self.state.qpos()
        skip = 1 if self.options["exclude_current_positions_from_observation"] else 0
        return self.xp.cat([qpos[:, skip:], self.state.qvel()], axis=1)

    def _progress(self):
        return self.state.qpos()[:, 0]

    def _reward(self, before, ctrl):
        o, xp = self.options, self.xp
        x = self.state.qpos()[:, 0]
        v = (x - before) / self.dt
        forward = o["forward_reward_weight"] * v
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        info = {"x_position": x, "x_velocity": v, "reward_forward": forward, "reward_ctrl": -ctrl_cost}
        return forward - ctrl_cost, forward != forward, info  # never terminates (NaN is flagged)

    def _noise(self, qpos, qvel, rng):
        s = self.options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + s * rng.standard_normal(qvel.shape)


class _PlanarWalker(MujocoTaskEnv):
    """Hopper and Walker2d: rootx, rootz, rooty, clipped velocities, healthy z and angle."""

    def _observe(self):
        qpos = self.state.qpos()
        skip = 1 if self.options["exclude_current_positions_from_observation"] else 0
        return self.xp.cat([qpos[:, skip:], self.xp.clip(self.state.qvel(), -10.0, 10.0)], axis=1)

    def _progress(self):
        return self.state.qpos()[:, 0]

    def _healthy(self, qpos, qvel):
        o, xp = self.options, self.xp
        healthy = _healthy_range(qpos[:, 1], o["healthy_z_range"], False) & \
            _healthy_range(qpos[:, 2], o["healthy_angle_range"], False)
        if "healthy_state_range" in o:
            state = xp.cat([qpos, qvel], axis=1)[:, 2:]
            healthy = healthy & xp.all(_healthy_range(state, o["healthy_state_range"], False), 1)
        return healthy

    def _reward(self, before, ctrl):
        o, xp = self.options, self.xp
        qpos, qvel = self.state.qpos(), self.state.qvel()
        v = (qpos[:, 0] - before) / self.dt
        healthy = self._healthy(qpos, qvel)
        forward = o["forward_reward_weight"] * v
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        info = {"x_position": qpos[:, 0], "z_distance_from_origin": qpos[:, 1] - self.init_qpos[1],
                "x_velocity": v, "reward_forward": forward, "reward_ctrl": -ctrl_cost, "reward_survive": survive}
        return forward + survive - ctrl_cost, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self.options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + rng.uniform(-s, s, qvel.shape)


class HopperEnv(_PlanarWalker):
    spec_ = TaskSpec("Hopper-v5", "hopper.xml", 4, 5e-4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_state_range=(-100.0, 100.0), healthy_z_range=(0.7, float("inf")), healthy_angle_range=(-0.2, 0.2),
        reset_noise_scale=5e-3, exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)


class Walker2dEnv(_PlanarWalker):
    spec_ = TaskSpec("Walker2d-v5", "walker2d_v5.xml", 4, 5e-4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_z_range=(0.8, 2.0), healthy_angle_range=(-1.0, 1.0), reset_noise_scale=5e-3,
        exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)


class HumanoidEnv(MujocoTaskEnv):
    spec_ = TaskSpec("Humanoid-v5", "humanoid.xml", 5, 2.5e-4, 1000, dict(
        forward_reward_weight=1.25, ctrl_cost_weight=0.1, contact_cost_weight=5e-7,
        contact_cost_range=(-float("inf"), 10.0), healthy_reward=5.0, terminate_when_unhealthy=True,
        healthy_z_range=(1.0, 2.0), reset_noise_scale=1e-2, exclude_current_positions_from_observation=True,
        include_cinert_in_observation=True, include_cvel_in_observation=True,
        include_qfrc_actuator_in_observation=True, include_cfrc_ext_in_observation=True))

    def _observe(self):
        o, xp, s = self.options, self.xp, self.state
        qpos = s.qpos()
        parts = [qpos[:, 2:] if o["exclude_current_positions_from_observation"] else qpos, s.qvel()]
        n = qpos.shape[0]
        if o["include_cinert_in_observation"] or o["include_cvel_in_observation"] or o["include_cfrc_ext_in_observation"]:
            xmat, _, xipos = s.frames()
            c = s.subtree_com(xipos)
            if o["include_cinert_in_observation"]:
                parts.append(s.cinert(xmat, xipos, c)[:, 1:].reshape(n, -1))
            if o["include_cvel_in_observation"]:
                parts.append(s.cvel(c)[:, 1:].reshape(n, -1))
        if o["include_qfrc_actuator_in_observation"]:
            parts.append(s.dof_forces("actuator")[:, 6:])
        if o["include_cfrc_ext_in_observation"]:
            parts.append(s.contact_forces()[:, 1:].reshape(n, -1))
        return xp.cat(parts, axis=1)

    def _progress(self):
        return self.state.mass_center(self.state.frames()[2])[:, 0:2]

    def _reward(self, before, ctrl):
        o, xp, s = self.options, self.xp, self.state
        _, _, xipos = s.frames()
        v = (s.mass_center(xipos)[:, 0:2] - before) / self.dt
        qpos = s.qpos()
        healthy = _healthy_range(qpos[:, 2], o["healthy_z_range"], False)
        forward = o["forward_reward_weight"] * v[:, 0]
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        f = s.contact_forces()
        contact_cost = xp.clip(o["contact_cost_weight"] * xp.sum(f.reshape(f.shape[0], -1) ** 2, 1),
                               *o["contact_cost_range"])
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        info = {"x_position": qpos[:, 0], "y_position": qpos[:, 1], "x_velocity": v[:, 0], "y_velocity": v[:, 1],
                "reward_survive": survive, "reward_forward": forward, "reward_ctrl": -ctrl_cost,
                "reward_contact": -contact_cost}
        return forward + survive - ctrl_cost - contact_cost, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self.options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + rng.uniform(-s, s, qvel.shape)


class InvertedDoublePendulumEnv(MujocoTaskEnv):
    spec_ = TaskSpec("InvertedDoublePendulum-v5", "inverted_double_pendulum.xml", 5, 1e-2, 1000, dict(
        healthy_reward=10.0, reset_noise_scale=0.1), camera=_SIDE_VIEW)

    def _observe(self):
        xp, s = self.xp, self.state
        qpos, qvel = s.qpos(), s.qvel()
        constraint = xp.clip(s.dof_forces("stopForce"), -10.0, 10.0)  # the cart's stop: MuJoCo's limit force
        return xp.cat([qpos[:, :1], xp.sin(qpos[:, 1:]), xp.cos(qpos[:, 1:]), xp.clip(qvel, -10.0, 10.0),
                       constraint[:, :1]], axis=1)

    def _reward(self, before, ctrl):
        tip = self.state.site_xpos("tip")
        x, y = tip[:, 0], tip[:, 2]
        qvel = self.state.qvel()
        v1, v2 = qvel[:, 1], qvel[:, 2]
        terminated = y <= 1
        dist = 0.01 * x ** 2 + (y - 2) ** 2
        vel = 1e-3 * v1 ** 2 + 5e-3 * v2 ** 2
        alive = self.options["healthy_reward"] * (~terminated)
        info = {"reward_survive": alive, "distance_penalty": -dist, "velocity_penalty": -vel}
        return alive - dist - vel, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self.options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + s * rng.standard_normal(qvel.shape)


class ReacherEnv(MujocoTaskEnv):
    spec_ = TaskSpec("Reacher-v5", "reacher.xml", 2, 1e-3, 50, dict(reward_dist_weight=1.0, reward_control_weight=1.0),
                     camera={"azimuth": 90.0, "elevation": -90.0})

    def _vec(self):
        _, xpos, _ = self.state.frames()
        names = self.state.body_names
        return xpos[:, names.index("fingertip")] - xpos[:, names.index("target")]

    def _observe(self):
        xp, qpos = self.xp, self.state.qpos()
        theta = qpos[:, :2]
        return xp.cat([xp.cos(theta), xp.sin(theta), qpos[:, 2:], self.state.qvel()[:, :2], self._vec()[:, :2]], axis=1)

    def _reward(self, before, ctrl):
        o, xp = self.options, self.xp
        vec = self._vec()
        dist = -xp.sqrt(xp.sum(vec * vec, 1)) * o["reward_dist_weight"]
        control = -xp.sum(ctrl * ctrl, 1) * o["reward_control_weight"]
        return dist + control, dist != dist, {"reward_dist": dist, "reward_ctrl": control}

    def _noise(self, qpos, qvel, rng):
        k = qpos.shape[0]
        qpos = rng.uniform(-0.1, 0.1, qpos.shape) + qpos
        goal = np.zeros((k, 2))
        todo = np.arange(k)
        while todo.size:  # Gymnasium's rejection sampling, for every world at once
            g = rng.uniform(-0.2, 0.2, (todo.size, 2))
            ok = np.linalg.norm(g, axis=1) < 0.2
            goal[todo[ok]] = g[ok]
            todo = todo[~ok]
        qpos[:, -2:] = goal
        qvel = qvel + rng.uniform(-0.005, 0.005, qvel.shape)
        qvel[:, -2:] = 0
        return qpos, qvel


TASKS = {cls.spec_.name: cls for cls in (AntEnv, HalfCheetahEnv, HopperEnv, Walker2dEnv, HumanoidEnv,
                                         InvertedDoublePendulumEnv, ReacherEnv)}


def make(task: str, num_envs: int = 1, **kwargs) -> MujocoTaskEnv:
    """The vector environment of a task by its Gymnasium name ("Ant-v5", ...), as gymnasium.make_vec
    ("lockstep/Ant-v5", num_envs=...) makes it."""
    if task not in TASKS:
        raise ValueError(f"no task named {task!r}; the tasks are {', '.join(TASKS)}")
    return TASKS[task](num_envs=num_envs, **kwargs)


def register() -> None:
    """Registers lockstep/<task> with Gymnasium for every task (gymnasium.make_vec)."""
    for name, cls in TASKS.items():
        env_id = f"lockstep/{name}"
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, vector_entry_point=f"lockstep.tasks:{cls.__name__}",
                     max_episode_steps=None, kwargs={})
