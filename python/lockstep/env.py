"""lockstep.VectorEnv: a Batch as a Gymnasium 1.x vector environment.

Every world is one sub-environment. Actions are generalized forces written into the batch's `tau`
field (one per mobility, clipped to the action space); observations are registry fields chosen by
name, concatenated per world; reward and termination are functions the user writes on arrays:

    def reward(batch, obs, actions):   -> array of shape (num_envs,)
    def terminated(batch, obs):        -> boolean array of shape (num_envs,)

Worlds whose status bits are set (the engine flagged them: NaN, singular bushing, ...) are
terminated too, with their status in info["status"]. Autoreset follows Gymnasium's default
next-step mode (metadata["autoreset_mode"]): after a sub-environment ends, the next step() resets it
instead of stepping it, returning its first observation with reward 0 and neither flag set.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import Batch, Model, load
from .episodes import RenderedFrames

RewardFn = Callable[[Batch, np.ndarray, np.ndarray], np.ndarray]
TerminatedFn = Callable[[Batch, np.ndarray], np.ndarray]


class VectorEnv(gym.vector.VectorEnv):
    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}

    def __init__(self, model, num_envs: int, reward_fn: RewardFn, terminated_fn: Optional[TerminatedFn] = None, *,
                 observations: Sequence[str] = ("q", "u"), max_episode_steps: int = 1000, dt: Optional[float] = None,
                 substeps: int = 1, action_high=None, reset_noise: float = 0.0, device: str = "cpu",
                 dtype: str = "float64", render_mode: Optional[str] = None, width: int = 480, height: int = 480,
                 camera: Optional[Dict[str, Any]] = None):
        """model: a lockstep.Model or a scene path; each env step advances `substeps` engine steps of
        dt (default the scene's). action_high: the bound of each action (scalar or one per mobility;
        default the joints' effort limits, which must then all be finite). reset_noise: reset()
        adds uniform noise in [-reset_noise, reset_noise] to every initial coordinate q.
        render_mode="rgb_array": render() returns one (height, width, 3) frame per sub-environment,
        drawn when read (Batch.render; camera as there, following the world by default)."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f'render_mode must be "rgb_array" or None, not {render_mode!r}')
        self.render_mode, self.width, self.height = render_mode, int(width), int(height)
        self.camera = dict(camera or {})
        if not isinstance(model, Model):
            model = load(model)
        if max_episode_steps < 1 or substeps < 1:
            raise ValueError("max_episode_steps and substeps must be at least 1")
        if dt is not None and not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive finite number of seconds, not {dt!r}")
        if not (np.isfinite(reset_noise) and reset_noise >= 0):
            raise ValueError(f"reset_noise must be a finite number >= 0 (the half-width of the noise on q), "
                             f"not {reset_noise!r}")
        unknown = [n for n in observations if n not in Batch.__dict__ and n != "status"]
        if unknown or not observations:
            from . import FIELD_NAMES
            raise ValueError(f"observations must name registry fields ({', '.join(FIELD_NAMES)}); "
                             f"unknown: {unknown or 'none given'}")
        self.batch = Batch(model, num_envs, device=device, dtype=dtype)
        if self.batch.device != "cpu":
            raise NotImplementedError("VectorEnv returns NumPy arrays: use device=\"cpu\" (on CUDA, drive a "
                                      "Batch directly through its DLPack views)")
        self.num_envs = int(num_envs)
        self.reward_fn, self.terminated_fn = reward_fn, terminated_fn
        self.observation_names = tuple(observations)
        self.max_episode_steps, self.substeps = int(max_episode_steps), int(substeps)
        self.dt = model.dt if dt is None else float(dt)
        self.reset_noise = float(reset_noise)
        self.metadata = {**type(self).metadata, "render_fps": max(1, int(round(1.0 / (self.dt * self.substeps))))}

        nu = model.nu
        if action_high is None:
            action_high = np.asarray(model.effort_limit, dtype=np.float64)
            if not np.all(np.isfinite(action_high)):
                raise ValueError("the model's joints have no effort limit: give action_high")
        high = np.broadcast_to(np.asarray(action_high, dtype=self.batch.dtype), (nu,)).copy()
        self.single_action_space = gym.spaces.Box(-high, high, (nu,), dtype=self.batch.dtype)
        width = sum(self._view(n).shape[1] for n in self.observation_names)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (width,), dtype=self.batch.dtype)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        self._episode_steps = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._initial_q = np.array(self._view("initialQ") if "initialQ" in Batch.__dict__ else
                                   np.broadcast_to(model.initial_q, (self.num_envs, model.nq)))
        self._initial_u = np.array(self._view("initialU") if "initialU" in Batch.__dict__ else
                                   np.broadcast_to(model.initial_u, (self.num_envs, nu)))

    def _view(self, name: str) -> np.ndarray:
        v = self.batch.field(name)
        return v.reshape(self.num_envs, -1) if v.ndim == 1 else v

    def _observe(self) -> np.ndarray:
        return np.concatenate([self._view(n) for n in self.observation_names], axis=1, dtype=self.batch.dtype)

    def _reset_worlds(self, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return
        self.batch.reset(indices=idx)
        if self.reset_noise > 0:
            q = self._initial_q[idx] + self.np_random.uniform(-self.reset_noise, self.reset_noise,
                                                              (idx.size, self._initial_q.shape[1]))
            self.batch.set_state(q, self._initial_u[idx], indices=idx)
        self.batch.evaluate()
        self._episode_steps[idx] = 0

    def _check_open(self) -> None:
        if self.batch is None:
            raise gym.error.ClosedEnvironmentError("lockstep.VectorEnv: the environment is closed (close() was "
                                                   "called); make a new one")

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._check_open()
        super().reset(seed=seed, options=options)
        self._reset_worlds(np.ones(self.num_envs, dtype=bool))
        self._autoreset[:] = False
        return self._observe(), {}

    def step(self, actions):
        self._check_open()
        actions = np.asarray(actions, dtype=self.batch.dtype)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, not {actions.shape}")
        low, high = self.single_action_space.low, self.single_action_space.high
        self.batch.tau[...] = np.clip(actions, low, high)
        self.batch.step(self.substeps, self.dt)
        self._episode_steps += 1

        resetting = self._autoreset.copy()
        self._reset_worlds(resetting)
        obs = self._observe()
        reward = np.asarray(self.reward_fn(self.batch, obs, actions), dtype=np.float64).reshape(self.num_envs)
        status = np.array(self.batch.status)
        terminated = status != 0
        if self.terminated_fn is not None:
            terminated |= np.asarray(self.terminated_fn(self.batch, obs), dtype=bool).reshape(self.num_envs)
        truncated = self._episode_steps >= self.max_episode_steps
        reward[resetting] = 0.0
        terminated[resetting] = False
        truncated[resetting] = False
        self._autoreset = terminated | truncated
        info = {}
        if status.any():
            info = {"status": status, "_status": status != 0}
        return obs, reward, terminated, truncated, info

    def render(self):
        """With render_mode="rgb_array", one frame per sub-environment (drawn when read); else None."""
        self._check_open()
        if self.render_mode is None:
            gym.logger.warn('render() was called without render_mode; make the environment with render_mode="rgb_array"')
            return None
        return RenderedFrames(self)

    def close_extras(self, **kwargs):
        self.batch = None
