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
  that finishes is reset within the step, its last observation in info["final_obs"] and what its
  step reported in info["final_info"] (rows where info["_final_obs"], info["_final_info"]), as
  Gymnasium's SyncVectorEnv; DISABLED, nothing resets unless reset(options={"reset_mask": mask})
  says so.
- Seeds (Gymnasium's, lockstep.seeding): reset(seed=[s_0, ..., s_n-1]) seeds world i with s_i (None:
  a random seed), reset(seed=s) means [s, s+1, ..., s+n-1]; a world never seeded has a random seed.
  Its reset noise and randomized parameters in its k-th episode since it was seeded depend on
  (s_i, k) alone.
- Domain randomization: `randomize` (set_randomization), a study file's "vary" list, drawn again for
  each world as it resets, with the studies' generator (lockstep._ext.draw_variations); a parameter
  no longer randomized returns to its value from before it was first randomized at the world's
  next reset.
- Info: the terms an environment reports with its reward, each with its own "_key" mask (a new
  array per key and step): the worlds that took the step, all but those a NEXT_STEP autoreset
  started again instead (and, under SAME_STEP, those that finished: their terms are in final_info).
  With array="torch" every array of info is a torch tensor on the environment's device, masks
  included, except info["status"] (strings: a NumPy object array).
- Observations are finite: a non-finite value reads 0. Rewards are Gymnasium's: an action too
  large to square (1e160, inf) costs inf, and its reward is -inf.
- Checkpoints: get_state() is a dict of NumPy arrays and plain values (picklable) holding every
  world's registry fields (q, u, z, time, status, the initial state, the observations), the
  randomized parameters, the episode counters, the seeds and the randomization and options in
  force; set_state(state) on an environment made the same way restores it bit for bit.
- Gymnasium's call, get_attr and set_attr (the worlds are one batch: one value for all).

An environment built on EpisodeVectorEnv defines what a world is, and nothing of the rules:

    _write_actions(actions)       checks and writes the actions; returns them as the reward reads them
    _before_step()                what the reward needs from before the step (None if nothing)
    _advance()                    steps every world by one environment step
    _observe()                    the observations [num_envs, width], a new array
    _score(before, actions, obs)  (reward [n], terminated [n], {info term: [n]}) after the step
    _start_episodes(idx, rng)     the initial state of worlds idx, its reset noise drawn from rng
                                  (lockstep.seeding.WorldStreams: row i of every draw is world idx[i]'s)
    _state_changed()              forgets what it computed from the worlds' state (set_state)
    _extra_state(), _set_extra_state(state)   what else a checkpoint holds (a task's options)

Its constructor calls _init_rendering first and _init_episodes once `batch`, `xp` (lockstep.arrays)
and `num_envs` exist.
"""
from __future__ import annotations

import copy
import json
from collections import abc
from typing import Any, Dict, Optional, Sequence

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

from . import FIELD_NAMES, _ext
from .seeding import WorldStreams, episode_keys, randomization_indices, seeds_of

STATE_FORMAT = "lockstep.EpisodeVectorEnv state 1"  # get_state()'s "format": what set_state reads


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
            env._check_open()
            self._drawn[i] = env.batch.render(world=i, width=env.width, height=env.height, camera=env.camera)
        return self._drawn[i]



class EpisodeVectorEnv(gym.vector.VectorEnv):
    """A Gymnasium 1.x vector environment of one Batch, each world one sub-environment, with the
    episode rules of the module's documentation. Subclasses define the hooks listed there."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}
    # torch.from_numpy when the environment computes with NumPy and returns torch tensors (a task with
    # array="torch" on the CPU); None when it returns the arrays it computes with.
    _as_torch = None

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

    def _start_episodes(self, idx: np.ndarray, rng: WorldStreams) -> None:
        raise NotImplementedError

    def _state_changed(self) -> None:
        """Forgets whatever was computed from the worlds' state (set_state changed it)."""

    def _extra_state(self) -> Dict[str, Any]:
        return {}

    def _set_extra_state(self, state: Dict[str, Any]) -> None:
        pass

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

        n = self.num_envs
        self._episode_steps = np.zeros(n, dtype=np.int64)  # steps taken in the current episode
        self._episodes = np.zeros(n, dtype=np.int64)       # episodes started since the world was seeded
        self._autoreset = np.zeros(n, dtype=bool)          # NEXT_STEP: resets at the next step()
        self._world_seeds = seeds_of([None] * n, n)        # Gymnasium's seed of each world (random until seeded)
        self._status = self.xp.view(self.batch.field("status"))
        # Every parameter randomized so far, per world: its values now and from before it was first
        # randomized. Kept here: reading a parameter back from the engine takes O(worlds) name look-ups.
        self._parameters: Dict[str, np.ndarray] = {}
        self._nominal: Dict[str, np.ndarray] = {}
        self.set_randomization(randomize)

    def set_autoreset_mode(self, mode) -> None:
        """Switches the autoreset mode (and metadata["autoreset_mode"]); a world already waiting for
        its NEXT_STEP reset still gets it at the next step()."""
        self.autoreset_mode = AutoresetMode(mode)
        self.metadata["autoreset_mode"] = self.autoreset_mode

    # --- curricula ---
    def set_randomization(self, randomize: Optional[Sequence[dict]]) -> None:
        """The domain randomization from now on: a study file's "vary" list (docs/study-format.md),
        drawn for each world at its next reset (worlds in an episode keep their values until then).
        A parameter randomized before and not in the new list returns, at each world's next reset, to
        its value from before it was first randomized. None or []: no randomization."""
        vary = [dict(v) for v in (randomize or [])]
        text = json.dumps(vary)
        if vary:
            _ext.draw_variations(text, "randomize", 0, [0])  # malformed entries fail here
            names = set(self.batch.params)
            bad = [v.get("parameter") for v in vary if v.get("parameter") not in names]
            if bad:
                raise ValueError(f"randomize: no parameter named {bad[0]!r} in {self._label} "
                                 f"(Model.parameter_names lists them)")
        for v in vary:
            name = v["parameter"]
            if name not in self._parameters:
                self._nominal[name] = np.array(self.batch.params[name], dtype=np.float64)
                self._parameters[name] = self._nominal[name].copy()
        self._randomize, self._randomize_json = vary, text

    @property
    def randomize(self) -> list:
        """The domain randomization in force (a copy); assigning it calls set_randomization."""
        return copy.deepcopy(self._randomize)

    @randomize.setter
    def randomize(self, value) -> None:
        self.set_randomization(value)

    # --- Gymnasium's VectorEnv methods of the sub-environments ---
    def call(self, name: str, *args, **kwargs) -> tuple:
        """Gymnasium's VectorEnv.call: the attribute `name` of each sub-environment, called with the
        arguments when it is a method, as a tuple of one entry per sub-environment. The worlds are one
        batch: the attribute is the vector environment's, the method called once, its result repeated;
        except render, whose frames are one per sub-environment (render()'s sequence, drawn when read)."""
        self._check_open()
        value = getattr(self, name)
        result = value(*args, **kwargs) if callable(value) else value
        if name == "render" and result is not None:
            return result
        return (result,) * self.num_envs

    def get_attr(self, name: str) -> tuple:
        """Gymnasium's VectorEnv.get_attr: call(name)."""
        return self.call(name)

    def set_attr(self, name: str, values) -> None:
        """Gymnasium's VectorEnv.set_attr: a value for every sub-environment, or a list or tuple of one
        per sub-environment, which must then all be equal (the worlds share their attributes).
        set_attr("randomize", [vary] * num_envs) and a task's set_attr("options", {...}) are curricula."""
        self._check_open()
        if isinstance(values, (list, tuple)):
            if len(values) != self.num_envs:
                raise ValueError(f"set_attr: {len(values)} values for {self.num_envs} environments; give one value, "
                                 f"or a list of one per environment (a list value, as randomize's, goes in a "
                                 f"list: [value] * num_envs)")
            if not all(_same(v, values[0]) for v in values[1:]):
                raise ValueError(f"set_attr({name!r}): the {self._label} worlds are one batch and share their "
                                 f"attributes; give one value for all")
            values = values[0]
        setattr(self, name, values)

    # --- checkpoints ---
    def get_state(self) -> Dict[str, Any]:
        """A checkpoint: every world's registry fields (q, u, z, time, status, the initial state,
        actions and observations; lockstep.FIELD_NAMES), the randomized parameters, the episode
        counters, the NEXT_STEP resets pending, each world's seed, and the randomization and options
        in force, as NumPy arrays and plain values (picklable, copies). set_state restores it.
        Parameters written directly through env.batch.params are not in it."""
        self._check_open()
        b = self.batch
        if b.device == "cuda":
            b.download()
        return {
            "format": STATE_FORMAT, "environment": self._label, "num_envs": self.num_envs,
            "dtype": np.dtype(b.dtype).name,
            "fields": {name: np.array(b.host_field(name)) for name in FIELD_NAMES},
            "parameters": {name: v.copy() for name, v in self._parameters.items()},
            "nominal_parameters": {name: v.copy() for name, v in self._nominal.items()},
            "episode_steps": self._episode_steps.copy(), "episodes": self._episodes.copy(),
            "autoreset": self._autoreset.copy(), "world_seeds": self._world_seeds.copy(),
            "randomize": self.randomize, **copy.deepcopy(self._extra_state()),
        }

    def set_state(self, state: Dict[str, Any]):
        """Restores a checkpoint of get_state() taken from an environment made the same way (the same
        task or model, number of worlds, dtype and keywords): the next steps, resets and draws are
        those that followed the checkpoint, bit for bit. Returns the observations of the restored
        worlds (as the step before the checkpoint returned them)."""
        self._check_open()
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"{self._label}: set_state takes a dict from get_state() ({STATE_FORMAT!r})")
        b = self.batch
        mine = (self._label, self.num_envs, np.dtype(b.dtype).name)
        theirs = (state["environment"], state["num_envs"], state["dtype"])
        if mine != theirs:
            raise ValueError(f"set_state: the checkpoint is of {theirs[0]} with {theirs[1]} worlds in {theirs[2]}, "
                             f"this environment {mine[0]} with {mine[1]} in {mine[2]}")
        # Parameters first: a changed one assembles the initial state again at the batch's next run
        # (Params), which evaluate() runs now, before the fields are written over.
        for name, values in state["parameters"].items():
            if name not in self._parameters or not np.array_equal(self._parameters[name], values):
                b.params[name] = values
        for name in set(self._parameters) - set(state["parameters"]):  # randomized since: as before it was
            b.params[name] = self._nominal[name]
        self._parameters = {name: np.array(v, dtype=np.float64) for name, v in state["parameters"].items()}
        self._nominal = {name: np.array(v, dtype=np.float64) for name, v in state["nominal_parameters"].items()}
        b.evaluate()
        if b.device == "cuda":
            b.download()
        for name in FIELD_NAMES:
            b.host_field(name)[...] = state["fields"][name]
        if b.device == "cuda":
            b.upload()
        self._episode_steps[:] = state["episode_steps"]
        self._episodes[:] = state["episodes"]
        self._autoreset[:] = state["autoreset"]
        self._world_seeds[:] = state["world_seeds"]
        self.set_randomization(state["randomize"])
        self._set_extra_state(state)
        self._state_changed()
        return self._returned(self.xp.nan_to_num(self._observe()))

    def __reduce_ex__(self, protocol):
        raise TypeError(f"{self._label} cannot be pickled (its worlds live in the engine, and its functions may "
                        f"not pickle): save env.get_state() (a dict of NumPy arrays) and restore it with "
                        f"set_state() on an environment made the same way")

    # --- the rules ---
    def _check_open(self) -> None:
        if self._closed:
            raise gym.error.ClosedEnvironmentError(f"{self._label}: the environment is closed (close() was called); "
                                                   f"make a new one")

    def _reset_worlds(self, idx: np.ndarray) -> None:
        """New episodes in worlds idx: randomized parameters, then the environment's initial state,
        both drawn from each world's stream of its seed and episode count."""
        if idx.size == 0:
            return
        keys = episode_keys(self._world_seeds[idx], self._episodes[idx])
        if self._parameters:
            drawn = {}
            if self._randomize:
                values = _ext.draw_variations(self._randomize_json, "randomize", 0, randomization_indices(keys))
                drawn = {v["parameter"]: d for v, d in zip(self._randomize, values)}
            for name, current in self._parameters.items():
                new = drawn[name] if name in drawn else self._nominal[name][idx]
                if name in drawn or not np.array_equal(current[idx], new):
                    current[idx] = new
                    self.batch.params[name] = current
        self._episodes[idx] += 1
        self._start_episodes(idx, WorldStreams(keys))
        self._episode_steps[idx] = 0

    def _mask(self, m: np.ndarray):
        """A boolean mask of the worlds as info gives it: a new array (NumPy, or torch on the device)."""
        return self.xp.from_numpy(m.copy())

    def _returned(self, a):
        """An array as the caller gets it: a torch tensor sharing its memory with array="torch" on the
        CPU (strings stay NumPy), else itself."""
        if self._as_torch is None or not isinstance(a, np.ndarray) or a.dtype == object:
            return a
        return self._as_torch(a)

    def _returned_info(self, info: dict) -> dict:
        if self._as_torch is None:
            return info
        return {k: self._returned_info(v) if isinstance(v, dict) else self._returned(v) for k, v in info.items()}

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Resets every world, or with options={"reset_mask": mask} those where mask is true. seed:
        Gymnasium's: an int s (world i gets s + i), a list of one int (or None) per world, or None
        (the worlds' streams go on; a world never seeded has a random seed). With a mask, only the
        worlds reset take their seeds."""
        self._check_open()
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            idx = np.arange(self.num_envs)
        else:
            m = mask.detach().cpu().numpy() if hasattr(mask, "detach") else np.asarray(mask)
            if m.dtype != np.bool_ or m.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a boolean array of shape ({self.num_envs},)")
            idx = np.flatnonzero(m)
        if seed is not None:
            seeds = seeds_of(seed, self.num_envs)
            self._world_seeds[idx] = seeds[idx]
            self._episodes[idx] = 0
            # The vector environment's own generator (np_random), for its user: Gymnasium's seeding
            # of an int seed; a list seeds it with the whole list. The worlds do not draw from it.
            if isinstance(seed, (int, np.integer)):
                self._np_random, self._np_random_seed = gym.utils.seeding.np_random(int(seed))
            else:
                self._np_random, self._np_random_seed = np.random.default_rng([int(s) for s in seeds]), -1
        self._reset_worlds(idx)
        self._autoreset[idx] = False
        return self._returned(self._observe()), {}

    def step(self, actions):
        self._check_open()
        xp, n = self.xp, self.num_envs
        actions = self._write_actions(actions)
        before = self._before_step()
        resetting = self._autoreset  # set in NEXT_STEP mode only; replaced below, not changed
        self._advance()
        self._episode_steps += 1
        flagged = (xp.to_numpy(self._status) != 0) & ~resetting
        why = [self.batch.describe_status(int(w)) for w in np.flatnonzero(flagged)]
        # NEXT_STEP: the worlds that finished at the last step start again instead of stepping.
        self._reset_worlds(np.flatnonzero(resetting))

        obs = xp.nan_to_num(self._observe())
        reward, terminated, terms = self._score(before, actions, obs)
        reward = xp.asarray(reward)  # in the engine's precision, as the observations; -inf as Gymnasium's
        terminated = np.asarray(xp.to_numpy(terminated), dtype=bool).reshape(n) & ~flagged & ~resetting
        truncated = ((self._episode_steps >= self.max_episode_steps) | flagged) & ~resetting
        zero = flagged | resetting
        if zero.any():
            reward = xp.copy(reward)  # it may be the environment's own array
            reward[xp.from_numpy(zero)] = 0.0
        done = terminated | truncated

        # What each world's step reported, with the worlds it reported it for.
        reported = [(key, value, ~resetting) for key, value in terms.items()]
        if flagged.any():
            status = np.full(n, "", dtype=object)
            status[flagged] = why
            reported.append(("status", status, flagged))
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP and done.any()
        info = {}
        for key, value, rows in reported:
            # Under SAME_STEP, a finished world's info is its new episode's (none); its step's is in final_info.
            info[key], info["_" + key] = value, self._mask(rows & ~done if same_step else rows)
        if same_step:
            final = {}
            for key, value, rows in reported:
                if (rows & done).any():
                    final[key], final["_" + key] = value, self._mask(rows & done)
            info["final_obs"], info["_final_obs"] = xp.copy(obs), self._mask(done)
            info["final_info"], info["_final_info"] = final, self._mask(done)
            self._reset_worlds(np.flatnonzero(done))
            mask = xp.from_numpy(done)
            obs[mask] = xp.nan_to_num(self._observe())[mask]
        self._autoreset = done & (self.autoreset_mode == AutoresetMode.NEXT_STEP)
        return (self._returned(obs), self._returned(reward), self._returned(xp.from_numpy(terminated)),
                self._returned(xp.from_numpy(truncated)), self._returned_info(info))

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


def _same(a, b) -> bool:
    """a equals b, arrays element by element."""
    if a is b:
        return True
    try:
        return bool(np.all(a == b)) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else bool(a == b)
    except (TypeError, ValueError):
        return False


class OneWorldEnv(gym.Env):
    """A gymnasium.Env of one world of a Lockstep vector environment: gymnasium.make("lockstep/Ant-v5")
    makes the task's vector environment of one world and takes its arrays apart (observation [width],
    reward a float, flags bools, info the terms of its step). It never resets by itself (Gymnasium's
    single environments do not): reset() after terminated or truncated. reset(seed=s) seeds the world
    with s, so that its starts are those of world i of a vector environment seeded with s - i."""

    def __init__(self, vector_env: EpisodeVectorEnv):
        vector_env = vector_env.unwrapped
        if vector_env.num_envs != 1:
            raise ValueError(f"OneWorldEnv takes a vector environment of one world, not {vector_env.num_envs}")
        vector_env.set_autoreset_mode(AutoresetMode.DISABLED)
        self.vector_env = vector_env
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space
        self.render_mode = vector_env.render_mode
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": vector_env.metadata["render_fps"]}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        obs, _ = self.vector_env.reset(seed=None if seed is None else [seed], options=options)
        return obs[0], {}

    def step(self, action):
        xp = self.vector_env.xp
        obs, reward, terminated, truncated, info = self.vector_env.step(xp.asarray(action).reshape(1, -1))
        mine = {}
        for source in (info, info.get("final_info", {})):
            for key, value in source.items():
                if not key.startswith("_") and key not in ("final_obs", "final_info") and bool(source["_" + key][0]):
                    mine[key] = value[0]
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), mine

    def render(self):
        frames = self.vector_env.render()
        return None if frames is None else frames[0]

    def get_state(self) -> Dict[str, Any]:
        """The vector environment's checkpoint (EpisodeVectorEnv.get_state)."""
        return self.vector_env.get_state()

    def set_state(self, state: Dict[str, Any]):
        return self.vector_env.set_state(state)[0]

    def close(self):
        self.vector_env.close()
