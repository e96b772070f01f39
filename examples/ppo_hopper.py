"""PPO (Stable-Baselines3, CPU) on Hopper-v5: Lockstep's lockstep/Hopper-v5 and, beside it with
the same settings, Gymnasium's MuJoCo Hopper-v5 (SB3's DummyVecEnv of gymnasium.make).

    .venv/bin/python examples/ppo_hopper.py --steps 300000 --envs 16        # both
    .venv/bin/python examples/ppo_hopper.py --steps 300000 --only lockstep
    .venv/bin/python examples/ppo_hopper.py --contact-law compliant         # Lockstep's compliant contacts
    .venv/bin/python examples/ppo_hopper.py --task Walker2d-v5              # another task, the same way

Prints, per engine, the mean return of the last 100 finished episodes at every 10% of the steps,
then the final figures and the wall time. bench/README.md ("PPO on Hopper") records a run.
"""
import argparse
import time

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecMonitor

import lockstep  # noqa: F401  (registers lockstep/Hopper-v5)
from lockstep.sb3 import VecEnv


class Progress(BaseCallback):
    def __init__(self, label, every):
        super().__init__()
        self.label, self.every, self.next = label, every, every
        self.curve = []

    def _on_step(self):
        if self.num_timesteps >= self.next:
            self.next += self.every
            buf = [e["r"] for e in self.model.ep_info_buffer]
            mean = float(np.mean(buf)) if buf else float("nan")
            self.curve.append((self.num_timesteps, mean))
            print(f"{self.label:9s} {self.num_timesteps:8d} steps: mean return {mean:8.1f} "
                  f"({len(buf)} episodes)", flush=True)
        return True


def train(label, env, steps, seed):
    model = PPO("MlpPolicy", env, n_steps=2048 // env.num_envs, batch_size=64, learning_rate=3e-4, n_epochs=10,
                gamma=0.99, gae_lambda=0.95, clip_range=0.2, seed=seed, device="cpu", verbose=0)
    progress = Progress(label, max(steps // 10, 1))
    start = time.perf_counter()
    model.learn(total_timesteps=steps, callback=progress)
    wall = time.perf_counter() - start
    buf = [e["r"] for e in model.ep_info_buffer]
    return {"engine": label, "steps": steps, "wall_s": wall, "final_mean_return": float(np.mean(buf)),
            "curve": progress.curve}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=300_000)
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=["lockstep", "mujoco"])
    p.add_argument("--task", default="Hopper-v5", help="a Gymnasium MuJoCo v5 task Lockstep has (lockstep.tasks)")
    p.add_argument("--contact-law", default=None, choices=["compliant", "mujoco"],
                   help="Lockstep's contact law (default: the task's default)")
    a = p.parse_args()
    law = {"contact_law": a.contact_law} if a.contact_law else {}
    results = []
    if a.only in (None, "lockstep"):
        env = VecMonitor(VecEnv(gym.make_vec(f"lockstep/{a.task}", num_envs=a.envs, **law)))
        env.seed(a.seed)
        results.append(train("lockstep", env, a.steps, a.seed))
    if a.only in (None, "mujoco"):
        env = VecMonitor(make_vec_env(a.task, n_envs=a.envs, seed=a.seed))
        results.append(train("mujoco", env, a.steps, a.seed))
    for r in results:
        print(f"{r['engine']}: mean return {r['final_mean_return']:.1f} after {r['steps']} steps, "
              f"{r['wall_s']:.0f} s wall ({r['steps'] / r['wall_s']:.0f} env-steps/s with PPO's updates)")


if __name__ == "__main__":
    main()
