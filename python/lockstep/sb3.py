"""lockstep.sb3.VecEnv: a Lockstep vector environment (a task, or lockstep.VectorEnv) as
Stable-Baselines3's VecEnv.

    import gymnasium as gym, lockstep
    from lockstep.sb3 import VecEnv
    from stable_baselines3 import PPO
    env = VecEnv(gym.make_vec("lockstep/Hopper-v5", num_envs=16))
    PPO("MlpPolicy", env).learn(100_000)

SB3's protocol resets a finished sub-environment in the same step and returns the terminal
observation in its info ("terminal_observation", with "TimeLimit.truncated" for truncations): the
wrapped environment is switched to autoreset mode SAME_STEP for that. Observations and rewards are
NumPy arrays (SB3 takes no device arrays), float32 observations unless the environment's are float64.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv

from .episodes import EpisodeVectorEnv


def _numpy(a) -> np.ndarray:
    return a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)


class VecEnv(_SB3VecEnv):
    def __init__(self, env: EpisodeVectorEnv):
        env = getattr(env, "unwrapped", env)
        if not isinstance(env, EpisodeVectorEnv):
            raise TypeError(f"lockstep.sb3.VecEnv wraps a Lockstep vector environment (gymnasium.make_vec("
                            f"\"lockstep/...\") or lockstep.VectorEnv), not {type(env).__name__}")
        env.set_autoreset_mode(AutoresetMode.SAME_STEP)
        self.env = env
        self._actions = None
        self._seed: Optional[int] = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None
        return _numpy(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        obs, reward = _numpy(obs), _numpy(reward).astype(np.float32)
        terminated, truncated = _numpy(terminated), _numpy(truncated)
        done = terminated | truncated
        infos: List[dict] = [{} for _ in range(self.num_envs)]
        if done.any():
            final = _numpy(info["final_obs"])
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        for reported in (info, info.get("final_info", {})):  # a world that finished reports in final_info
            if "_status" in reported:
                for i in np.flatnonzero(_numpy(reported["_status"])):
                    infos[i]["status"] = reported["status"][i]
        return obs, reward, done, infos

    def close(self) -> None:
        self.env.close()

    def seed(self, seed: Optional[int] = None) -> Sequence[Optional[int]]:
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices=None) -> List[Any]:
        return [getattr(self.env, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> List[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> List[bool]:
        return [False] * len(self._get_indices(indices))

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """One (height, width, 3) uint8 frame per environment (the environment's render(); it needs
        render_mode="rgb_array"), as SB3's VecVideoRecorder reads them."""
        frames = self.env.render()
        if frames is None:
            return [None] * self.num_envs
        return [frames[i] for i in range(self.num_envs)]
