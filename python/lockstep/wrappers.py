"""Normalization that runs where the arrays are: NumPy arrays, or torch tensors on their device.

Gymnasium's NormalizeObservation and NormalizeReward keep their statistics in NumPy and fail on
torch tensors (a Lockstep environment with array="torch" or device="cuda"). These do the same on
either, without copying the observations to the host:

    import gymnasium as gym, lockstep
    from lockstep.wrappers import NormalizeObservation, NormalizeReward
    envs = NormalizeReward(NormalizeObservation(gym.make_vec("lockstep/Ant-v5", num_envs=4096, device="cuda")))

RunningMeanStd is the statistic alone, for a training loop that normalizes by itself (CleanRL style).
"""
from __future__ import annotations

import numpy as np
import gymnasium as gym


def _is_torch(x) -> bool:
    return hasattr(x, "detach")


class RunningMeanStd:
    """Mean and variance over every batch of values seen so far (Chan, Golub and LeVeque's parallel
    update, as Gymnasium's and SB3's RunningMeanStd), along axis 0 of each batch. The statistics are
    float64 arrays of the first batch's library and device (NumPy, or torch on its device)."""

    def __init__(self, epsilon: float = 1e-4):
        self.mean = self.var = None
        self.count = float(epsilon)

    def update(self, x) -> None:
        if _is_torch(x):
            x = x.detach().double()
            batch_mean, batch_var = x.mean(dim=0), x.var(dim=0, correction=0)
        else:
            x = np.asarray(x, dtype=np.float64)
            batch_mean, batch_var = x.mean(axis=0), x.var(axis=0)
        if self.mean is None:
            self.mean, self.var = batch_mean * 0, batch_var * 0 + 1
        n = x.shape[0]
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * (n / total)
        self.var = (self.var * self.count + batch_var * n + delta * delta * (self.count * n / total)) / total
        self.count = total

    def normalize(self, x, epsilon: float = 1e-8):
        """(x - mean) / sqrt(var + epsilon), in x's own dtype (x itself before the first update)."""
        if self.mean is None:
            return x
        out = (x - self.mean) / (self.var + epsilon) ** 0.5
        return out.to(x.dtype) if _is_torch(x) else out.astype(np.asarray(x).dtype, copy=False)


class NormalizeObservation(gym.vector.VectorWrapper):
    """Gymnasium's vector NormalizeObservation on NumPy or torch observations: each observation
    component centred and scaled by the running statistics of every observation returned so far
    (update_running_mean = False freezes them, for evaluation). Under SAME_STEP, which Gymnasium's
    refuses, info["final_obs"] is normalized with the same statistics as the observations."""

    def __init__(self, env: gym.vector.VectorEnv, epsilon: float = 1e-8):
        super().__init__(env)
        self.obs_rms = RunningMeanStd()
        self.epsilon = epsilon
        self.update_running_mean = True

    def _normalized(self, observations):
        if self.update_running_mean:
            self.obs_rms.update(observations)
        return self.obs_rms.normalize(observations, self.epsilon)

    def reset(self, *, seed=None, options=None):
        observations, info = self.env.reset(seed=seed, options=options)
        return self._normalized(observations), info

    def step(self, actions):
        observations, reward, terminated, truncated, info = self.env.step(actions)
        observations = self._normalized(observations)
        if "final_obs" in info:
            info = {**info, "final_obs": self.obs_rms.normalize(info["final_obs"], self.epsilon)}
        return observations, reward, terminated, truncated, info


class NormalizeReward(gym.vector.VectorWrapper):
    """Gymnasium's vector NormalizeReward on NumPy or torch rewards: each reward divided by the running
    standard deviation of the discounted return (gamma) of its sub-environment."""

    def __init__(self, env: gym.vector.VectorEnv, gamma: float = 0.99, epsilon: float = 1e-8):
        super().__init__(env)
        self.return_rms = RunningMeanStd()
        self.gamma, self.epsilon = float(gamma), float(epsilon)
        self.update_running_mean = True
        self.accumulated_reward = None

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        if self.accumulated_reward is None:
            self.accumulated_reward = reward * 0
        going_on = 1.0 - (terminated.to(reward.dtype) if _is_torch(reward) else terminated)
        self.accumulated_reward = self.accumulated_reward * self.gamma * going_on + reward
        if self.update_running_mean:
            self.return_rms.update(self.accumulated_reward)
        scale = (self.return_rms.var + self.epsilon) ** 0.5
        reward = (reward / scale).to(reward.dtype) if _is_torch(reward) else reward / scale
        return obs, reward, terminated, truncated, info
