#!/usr/bin/env python3
"""Env-steps/s of a Lockstep task at 1, 64 and 4096 environments (NumPy and torch arrays, CPU) beside
Gymnasium's sync vector environment of the same MuJoCo task, and the share of a step that is Python
overhead, with where it goes (not a test; bench/README.md, "Python overhead of the environments",
records the figures).

For each size:
  lockstep      env.step(actions) in a loop; the actions are drawn once beforehand (a pool of 16
                arrays used in turn), for Gymnasium as well, so that neither pays for sampling
  engine        the same env's batch.step(substeps, engine_dt) alone, the engine's share of a step
                (each figure the best of --repeats measurements, the env's and the engine's in turn)
  overhead      1 - engine / lockstep: Python (the task's MuJoCo quantities, observation, reward,
                resets and their noise, the episode rules, info) per env.step
  gym sync      gymnasium.make_vec(task, num_envs, vectorization_mode="sync") of MuJoCo's task
and with --profile, at 64 environments, the split of a step among the environment's stages (cProfile,
which slows the Python part: the shares, not the times, are what it tells).

    OMP_NUM_THREADS=1 .venv/bin/python bench/env_overhead.py [--task InvertedDoublePendulum-v5]
"""
import argparse
import cProfile
import pstats
import time

import gymnasium as gym
import numpy as np

import lockstep  # noqa: F401  (registers lockstep/<task>)

STAGES = [("actions", "_write_actions"), ("engine", "_advance"), ("resets", "_reset_worlds"),
          ("observation", "_observe"), ("reward", "_score")]


def cpu_model() -> str:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def seconds_per_call(fn, seconds: float) -> float:
    fn()  # warm-up
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        wall = time.perf_counter() - start
        if wall >= seconds and calls >= 3:
            return wall / calls


def action_pool(space, n, array):
    rng = np.random.default_rng(0)
    pool = [rng.uniform(space.low, space.high).astype(np.float32) for _ in range(16)]
    if array == "torch":
        import torch
        pool = [torch.as_tensor(a) for a in pool]
    return pool


def stepper(env, pool):
    state = {"i": 0}

    def step():
        env.step(pool[state["i"] % len(pool)])
        state["i"] += 1
    return step


def lockstep_figures(task, n, array, seconds, repeats):
    """The best of `repeats` times per env step and per engine step, measured in turn (so that other
    work on the machine weighs on both alike)."""
    env = gym.make_vec(f"lockstep/{task}", num_envs=n, array=array)
    u = env.unwrapped
    env.reset(seed=0)
    step = stepper(env, action_pool(env.action_space, n, array))
    per_step = engine = float("inf")
    for _ in range(repeats):
        per_step = min(per_step, seconds_per_call(step, seconds))
        engine = min(engine, seconds_per_call(lambda: u.batch.step(u.substeps, u.engine_dt), seconds))
    env.close()
    return per_step, engine


def gymnasium_rate(task, n, seconds, repeats):
    env = gym.make_vec(task, num_envs=n, vectorization_mode="sync")
    env.reset(seed=0)
    step = stepper(env, action_pool(env.action_space, n, "numpy"))
    per_step = min(seconds_per_call(step, seconds) for _ in range(repeats))
    env.close()
    return n / per_step


def profile(task, n, array, steps):
    env = gym.make_vec(f"lockstep/{task}", num_envs=n, array=array)
    env.reset(seed=0)
    step = stepper(env, action_pool(env.action_space, n, array))
    for _ in range(20):
        step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(tt for (_, _, name), (_, _, tt, _, _) in stats.items())
    cumulative = {}
    for (_, _, name), (_, _, _, ct, _) in stats.items():
        cumulative[name] = cumulative.get(name, 0.0) + ct
    shares = {label: cumulative.get(fn, 0.0) / total for label, fn in STAGES}
    shares["rules and info"] = 1.0 - sum(shares.values())
    env.close()
    return shares


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", default="InvertedDoublePendulum-v5")
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64, 4096])
    ap.add_argument("--arrays", nargs="+", default=["numpy", "torch"])
    ap.add_argument("--seconds", type=float, default=1.0, help="per measurement")
    ap.add_argument("--repeats", type=int, default=3, help="measurements of each figure, the best kept")
    ap.add_argument("--profile", action="store_true", help="the split of a step at 64 environments")
    a = ap.parse_args()
    print(f"CPU: {cpu_model()}; {a.task}, float64, CPU backend")
    print(f"{'envs':>5} {'arrays':>6} {'lockstep/s':>11} {'engine/s':>11} {'overhead':>9} {'gym sync/s':>11} "
          f"{'vs sync':>8}")
    for n in a.envs:
        sync = gymnasium_rate(a.task, n, a.seconds, a.repeats)
        for array in a.arrays:
            per_step, engine = lockstep_figures(a.task, n, array, a.seconds, a.repeats)
            print(f"{n:5d} {array:>6} {n / per_step:11.0f} {n / engine:11.0f} {100 * (1 - engine / per_step):8.0f}% "
                  f"{sync:11.0f} {sync and (n / per_step) / sync:7.2f}x", flush=True)
    if a.profile:
        for array in a.arrays:
            shares = profile(a.task, 64, array, 500)
            print(f"64 envs, {array}: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items()))


if __name__ == "__main__":
    main()
