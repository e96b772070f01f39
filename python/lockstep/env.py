"""lockstep.VectorEnv: a Batch as a Gymnasium 1.x vector environment.

Every world is one sub-environment. Actions are generalized forces written into the batch's `tau`
field (one per mobility, clipped to the action space); observations are registry fields chosen by
name, concatenated per world; reward and termination are functions the user writes on arrays:

    def reward(batch, obs, actions):   -> array of shape (num_envs,),
                                          or (that array, {info term: array of shape (num_envs,)})
    def terminated(batch, obs):        -> boolean array of shape (num_envs,)

The episode rules are those of every Lockstep vector environment, the MuJoCo tasks' included
(lockstep.episodes, docs/environments.md): truncation at max_episode_steps; a world the engine
flags (NaN, singular bushing, ...) is truncated with reward 0 and the reason in info["status"];
the autoreset modes NEXT_STEP (the default), SAME_STEP and DISABLED; reset(seed=..., options=
{"reset_mask": ...}); domain randomization (`randomize`); each info term with its own "_key" mask.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import Batch, Model, load
from .arrays import NumpyOps
from .episodes import EpisodeVectorEnv, RenderedFrames  # noqa: F401  (RenderedFrames: lockstep.env's before)

RewardFn = Callable[[Batch, np.ndarray, np.ndarray], Any]
TerminatedFn = Callable[[Batch, np.ndarray], np.ndarray]


class VectorEnv(EpisodeVectorEnv, gym.vector.VectorEnv):  # gym's named again for skrl's wrapper="auto" (tasks.py)
    def __init__(self, model, num_envs: int, reward_fn: RewardFn, terminated_fn: Optional[TerminatedFn] = None, *,
                 observations: Sequence[str] = ("q", "u"), max_episode_steps: int = 1000, dt: Optional[float] = None,
                 substeps: int = 1, action_high=None, reset_noise: float = 0.0, device: str = "cpu",
                 dtype: str = "float64", autoreset_mode=AutoresetMode.NEXT_STEP,
                 randomize: Optional[Sequence[dict]] = None, render_mode: Optional[str] = None, width: int = 480,
                 height: int = 480, camera: Optional[Dict[str, Any]] = None):
        """model: a lockstep.Model or a scene path; each env step advances `substeps` engine steps of
        dt (default the scene's). action_high: the bound of each action (scalar or one per mobility;
        default the joints' effort limits, which must then all be finite). reset_noise: reset()
        adds uniform noise in [-reset_noise, reset_noise] to every initial coordinate q.
        autoreset_mode: AutoresetMode.NEXT_STEP (default), SAME_STEP or DISABLED (or their values).
        randomize: per-world parameters drawn again for every world that resets, as a study file's
        "vary" list ({"parameter": "body.link1.mass", "distribution": "uniform", "low": 1, "high": 2}).
        render_mode="rgb_array": render() returns one (height, width, 3) frame per sub-environment,
        drawn when read (Batch.render; camera as there, following the world by default)."""
        self._init_rendering("lockstep.VectorEnv", render_mode, width, height, camera)
        if not isinstance(model, Model):
            model = load(model)
        if substeps < 1:
            raise ValueError(f"substeps must be at least 1, not {substeps!r}")
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
        self.xp = NumpyOps(self.batch.dtype)
        self.reward_fn, self.terminated_fn = reward_fn, terminated_fn
        self.observation_names = tuple(observations)
        self.substeps = int(substeps)
        self.dt = model.dt if dt is None else float(dt)
        self.reset_noise = float(reset_noise)
        self._init_episodes(max_episode_steps=max_episode_steps, autoreset_mode=autoreset_mode, randomize=randomize,
                            render_fps=max(1, int(round(1.0 / (self.dt * self.substeps)))))

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

        self._initial_q = np.array(self._view("initialQ") if "initialQ" in Batch.__dict__ else
                                   np.broadcast_to(model.initial_q, (self.num_envs, model.nq)))
        self._initial_u = np.array(self._view("initialU") if "initialU" in Batch.__dict__ else
                                   np.broadcast_to(model.initial_u, (self.num_envs, nu)))

    def _view(self, name: str) -> np.ndarray:
        v = self.batch.field(name)
        return v.reshape(self.num_envs, -1) if v.ndim == 1 else v

    # --- the episode layer's hooks (lockstep.episodes) ---
    def _observe(self) -> np.ndarray:
        return np.concatenate([self._view(n) for n in self.observation_names], axis=1, dtype=self.batch.dtype)

    def _start_episodes(self, idx: np.ndarray, rng) -> None:
        """The scene's initial state, with uniform noise of half-width reset_noise on q."""
        self.batch.reset(indices=idx)
        if self.reset_noise > 0:
            q = self._initial_q[idx] + rng.uniform(-self.reset_noise, self.reset_noise,
                                                   (idx.size, self._initial_q.shape[1]))
            self.batch.set_state(q, self._initial_u[idx], indices=idx)
        # A reset observes its worlds; evaluate() (udot, energies, the solve's fields) runs on every
        # world, so only when all start again: under MuJoCo's law it would give the others MuJoCo's
        # bodies at their state in place of their last step's (physics/world.h, Observed).
        if idx.size == self.num_envs:
            self.batch.evaluate()

    def _write_actions(self, actions):
        actions = np.asarray(actions, dtype=self.batch.dtype)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, not {actions.shape}")
        low, high = self.single_action_space.low, self.single_action_space.high
        self.batch.tau[...] = np.clip(actions, low, high)
        return actions

    def _advance(self) -> None:
        self.batch.step(self.substeps, self.dt)

    def _score(self, before, actions, obs):
        n = self.num_envs
        reward, terms = self.reward_fn(self.batch, obs, actions), {}
        if isinstance(reward, tuple):
            reward, terms = reward
        reward = np.array(reward, dtype=np.float64).reshape(n)  # a copy: not the caller's or the engine's memory
        terminated = np.zeros(n, dtype=bool) if self.terminated_fn is None else \
            np.asarray(self.terminated_fn(self.batch, obs), dtype=bool).reshape(n)
        return reward, terminated, {k: np.array(v) for k, v in terms.items()}  # copies: not the engine's memory
