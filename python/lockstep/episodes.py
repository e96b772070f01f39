"""The episode layer of every Lockstep vector environment: lockstep.VectorEnv and the MuJoCo tasks
(lockstep/<task>) both follow Gymnasium 1.x's episode rules through EpisodeVectorEnv, written once
here, as Brax's training wrappers (EpisodeWrapper, AutoResetWrapper, DomainRandomizationVmapWrapper)
are one layer for every Brax environment. docs/environments.md ("Episodes") states the rules:

- Episodes: each world counts its steps; an episode is truncated after max_episode_steps.
- Flagged worlds: a world whose status bits the engine set during the step (a non-finite state, a
  failed step) is truncated, not terminated, with reward 0 and the engine's description of why in
  info["status"] (rows where info["_status"]); the engine kept its state from before the failing
  step, so its observation is finite. It resets as any finished world does.
- Autoreset (metadata["autoreset_mode"]): NEXT_STEP, after a world finishes, the next step() resets
  it instead of stepping it (its first observation, reward 0, neither flag); SAME_STEP, a world
  that finishes is reset within the step, its last observation in info["final_obs"] (rows where
  info["_final_obs"]); DISABLED, nothing resets unless reset(options={"reset_mask": mask}) says so.
- Seeds: reset(seed=int) or reset(seed=[one int per world]) seeds the generator of the reset
  noise (a list seeds it with the whole list) and of the randomization's draws.
- Domain randomization: `randomize`, a study file's "vary" list, drawn again for each world as it
  resets, with the studies' counter-based generator: a value depends on the seed, the variation,
  the world and its episode count, not on which other worlds reset.
- Info: the terms an environment reports with its reward, each with its own "_key" mask (a new
  array per key and step): the worlds that took the step, all but those a NEXT_STEP autoreset
  started again instead.
- Observations and rewards are finite: a non-finite value reads 0.

An environment built on EpisodeVectorEnv defines what a world is, and nothing of the rules:

    _write_actions(actions)       checks and writes the actions; returns them as the reward reads them
    _before_step()                what the reward needs from before the step (None if nothing)
    _advance()                    steps every world by one environment step
    _observe()                    the observations [num_envs, width]
    _score(before, actions, obs)  (reward [n], terminated [n], {info term: [n]}) after the step
    _start_episodes(idx)          the initial state of worlds idx, its reset noise drawn from self.np_random

Its constructor calls _init_rendering first and _init_episodes once `batch`, `xp` (lockstep.arrays)
and `num_envs` exist.
"""
from __future__ import annotations

import json
from collections import abc
from typing import Any, Dict, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

from . import _ext


class RenderedFrames(abc.Sequence):
    """render()'s frames, one per sub-environment as Gymnasium's vector environments return them,
    each drawn when first asked for (RecordVideo(record_first_only=True) draws one). `env` has
    batch, num_envs, width, height and camera."""

    def __init__(self, env):
        self._env, self._drawn = env, {}

    def __len__(self) -> int:
        return self._env.num_envs

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i) + (len(self) if int(i) < 0 else 0)
        if not 0 <= i < len(self):
            raise IndexError(f"sub-environment {i} is outside the {len(self)}")
        if i not in self._drawn:
            env = self._env
            self._drawn[i] = env.batch.render(world=i, width=env.width, height=env.height, camera=env.camera)
        return self._drawn[i]


class EpisodeVectorEnv(gym.vector.VectorEnv):
    """A Gymnasium 1.x vector environment of one Batch, each world one sub-environment, with the
    episode rules of the module's documentation. Subclasses define the hooks listed there."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}

    # --- what an environment defines ---
    def _write_actions(self, actions):
        raise NotImplementedError

    def _before_step(self):
        return None

    def _advance(self) -> None:
        raise NotImplementedError

    def _observe(self):
        raise NotImplementedError

    def _score(self, before, actions, obs):
        raise NotImplementedError

    def _start_episodes(self, idx: np.ndarray) -> None:
        raise NotImplementedError

    # --- set-up ---
    def _init_rendering(self, label: str, render_mode: Optional[str], width: int, height: int,
                        camera: Optional[Dict[str, Any]]) -> None:
        """render_mode "rgb_array" (or None), frame size and camera; checked before anything is built.
        label names the environment in error messages ("lockstep.VectorEnv", "lockstep/Ant-v5")."""
        self._label = label
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f'{label}: render_mode must be "rgb_array" or None, not {render_mode!r}')
        self.render_mode, self.width, self.height = render_mode, int(width), int(height)
        self.camera = dict(camera or {})
        self._closed = False

    def _init_episodes(self, *, max_episode_steps: int, autoreset_mode, randomize: Optional[Sequence[dict]],
                       render_fps: int) -> None:
        """The episode state of num_envs worlds; checks max_episode_steps and the randomize list."""
        if max_episode_steps is None or int(max_episode_steps) < 1:
            raise ValueError(f"max_episode_steps must be at least 1, not {max_episode_steps!r}")
        self.max_episode_steps = int(max_episode_steps)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode, "render_fps": int(render_fps)}

        self.randomize = list(randomize or [])
        self._randomize_json = json.dumps(self.randomize)
        if self.randomize:
            _ext.draw_variations(self._randomize_json, "randomize", 0, [0])  # malformed entries fail here
            names = set(self.batch.params)
            bad = [v.get("parameter") for v in self.randomize if v.get("parameter") not in names]
            if bad:
                raise ValueError(f"randomize: no parameter named {bad[0]!r} in {self._label} "
                                 f"(Model.parameter_names lists them)")
        self._randomize_seed = 0

        n = self.num_envs
        self._episode_steps = np.zeros(n, dtype=np.int64)  # steps taken in the current episode
        self._episodes = np.zeros(n, dtype=np.int64)       # episodes started since the last seed
        self._autoreset = np.zeros(n, dtype=bool)          # NEXT_STEP: resets at the next step()
        self._status = self.xp.view(self.batch.field("status"))

    def set_autoreset_mode(self, mode) -> None:
        """Switches the autoreset mode (and metadata["autoreset_mode"]); a world already waiting for
        its NEXT_STEP reset still gets it at the next step()."""
        self.autoreset_mode = AutoresetMode(mode)
        self.metadata["autoreset_mode"] = self.autoreset_mode

    # --- the rules ---
    def _check_open(self) -> None:
        if self._closed:
            raise gym.error.ClosedEnvironmentError(f"{self._label}: the environment is closed (close() was called); "
                                                   f"make a new one")

    def _seed(self, seed) -> None:
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != self.num_envs:
                raise ValueError(f"seed: a list of {self.num_envs} seeds (one per environment), not {len(seed)}")
            value = [int(s) for s in seed]
        else:
            value = int(seed)
        self._np_random = np.random.default_rng(value)  # as gymnasium.utils.seeding.np_random(int)
        self._np_random_seed = value
        self._randomize_seed = int(np.random.SeedSequence(value).generate_state(1, np.uint64)[0])
        self._episodes[:] = 0

    def _reset_worlds(self, idx: np.ndarray) -> None:
        """New episodes in worlds idx: randomized parameters, then the environment's initial state."""
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
        self._start_episodes(idx)
        self._episode_steps[idx] = 0

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Resets every world, or with options={"reset_mask": mask} those where mask is true. seed:
        an int, or a list of ints (one per world; the generator is seeded with the list)."""
        self._check_open()
        if seed is not None:
            self._seed(seed)
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
        xp, n = self.xp, self.num_envs
        actions = self._write_actions(actions)
        before = self._before_step()
        resetting = self._autoreset.copy()  # set in NEXT_STEP mode only
        self._advance()
        self._episode_steps += 1
        flagged = (xp.to_numpy(self._status) != 0) & ~resetting
        why = [self.batch.describe_status(int(w)) for w in np.flatnonzero(flagged)]
        # NEXT_STEP: the worlds that finished at the last step start again instead of stepping.
        self._reset_worlds(np.flatnonzero(resetting))

        obs = xp.nan_to_num(self._observe())
        reward, terminated, terms = self._score(before, actions, obs)
        reward = xp.nan_to_num(reward)
        terminated = np.asarray(xp.to_numpy(terminated), dtype=bool).reshape(n) & ~flagged & ~resetting
        truncated = ((self._episode_steps >= self.max_episode_steps) | flagged) & ~resetting
        zero = flagged | resetting
        if zero.any():
            reward[xp.from_numpy(zero)] = 0.0

        info = {}
        took_step = ~resetting
        for key, value in terms.items():
            info[key], info["_" + key] = value, took_step.copy()
        if flagged.any():
            status = np.full(n, "", dtype=object)
            status[flagged] = why
            info["status"], info["_status"] = status, flagged.copy()

        done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done.any():
            info["final_obs"], info["_final_obs"] = xp.copy(obs), done.copy()
            self._reset_worlds(np.flatnonzero(done))
            mask = xp.from_numpy(done)
            obs[mask] = xp.nan_to_num(self._observe())[mask]
        self._autoreset = done & (self.autoreset_mode == AutoresetMode.NEXT_STEP)
        return obs, reward, xp.from_numpy(terminated), xp.from_numpy(truncated), info

    def render(self) -> Optional[Sequence[np.ndarray]]:
        """With render_mode="rgb_array": one (height, width, 3) uint8 frame per sub-environment (a
        sequence drawn on demand), the camera following each world; None otherwise."""
        self._check_open()
        if self.render_mode is None:
            gym.logger.warn('render() was called without render_mode; make the environment with render_mode="rgb_array"')
            return None
        return RenderedFrames(self)

    def close_extras(self, **kwargs):
        self._closed = True
        self.batch = None
