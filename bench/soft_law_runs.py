"""Long runs of the tasks under MuJoCo's contact law at the XML's own timestep (issue 35): every task
with --envs worlds for --steps env steps of random actions (the action space's samples; episodes
reset as Gymnasium's do), counting the worlds the engine flagged (a failed step: info["status"]) and
why, and the wall time. bench/README.md ("Tasks under MuJoCo's law: long runs") records the figures
with the machine's CPU.

    OMP_NUM_THREADS=2 .venv/bin/python bench/soft_law_runs.py --envs 4096 --steps 1000
"""
import argparse
import collections
import time

import numpy as np

from lockstep import tasks
from bench_tasks import cpu_model

TASKS = ["Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Humanoid-v5", "InvertedDoublePendulum-v5",
         "Reacher-v5"]


def run(name, envs, steps, seed):
    env = tasks.make(name, num_envs=envs, contact_law="mujoco")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    low, high = env.action_space.low, env.action_space.high
    flagged, reasons, episodes = 0, collections.Counter(), 0
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, info = env.step(rng.uniform(low, high).astype(np.float32))
        episodes += int(np.sum(terminated | truncated))
        if "status" in info:
            mask = np.asarray(info["_status"], dtype=bool)
            flagged += int(mask.sum())
            reasons.update(str(r) for r in np.asarray(info["status"])[mask])
    seconds = time.perf_counter() - start
    env.close()
    return flagged, reasons, episodes, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=TASKS)
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"CPU: {cpu_model()}; {a.envs} envs x {a.steps} env steps each, contact law mujoco, float64")
    print("| task | flagged world-steps | episodes ended | wall s | env-steps/s |")
    print("|---|---|---|---|---|")
    for name in a.tasks:
        flagged, reasons, episodes, seconds = run(name, a.envs, a.steps, a.seed)
        why = "; ".join(f"{r} ({c})" for r, c in reasons.most_common(3))
        print(f"| {name} | {flagged}{' (' + why + ')' if why else ''} | {episodes} | {seconds:.0f} | "
              f"{a.envs * a.steps / seconds:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
