"""Environment steps per second of the tasks: Lockstep's lockstep/<task> against Gymnasium's MuJoCo
<task> in gymnasium.make_vec's "sync" and "async" modes, same machine, same process, random
actions (the action space's samples, drawn once per step for all environments).

    .venv/bin/python bench/bench_tasks.py --tasks Ant-v5 Humanoid-v5 --envs 64 4096

Every figure is env-steps/s = num_envs x vector steps / wall seconds, timed over at least
--seconds after one warm-up step. Gymnasium's async mode runs one process per environment: it is
measured up to --max-async environments (4096 processes do not fit in memory). bench/README.md
("Gymnasium tasks") records the figures with the machine's CPU.
"""
import argparse
import gc
import platform
import time

import gymnasium as gym
import numpy as np

import lockstep  # noqa: F401  (registers lockstep/<task>)


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def rate(env, seconds):
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    low, high = env.action_space.low, env.action_space.high
    env.step(rng.uniform(low, high).astype(np.float32))  # warm-up
    steps, start = 0, time.perf_counter()
    while True:
        env.step(rng.uniform(low, high).astype(np.float32))
        steps += 1
        wall = time.perf_counter() - start
        if wall >= seconds and steps >= 2:
            return env.num_envs * steps / wall


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", nargs="+", default=["Ant-v5", "Humanoid-v5"])
    p.add_argument("--envs", nargs="+", type=int, default=[64, 4096])
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--max-async", type=int, default=64)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--contact-law", default="mujoco", choices=["compliant", "mujoco"],
                   help="Lockstep's contact law: mujoco (the tasks' default: the XML's timestep) or compliant (RK4 substeps)")
    p.add_argument("--integrator", choices=["rk4", "implicit"],
                   help="under the compliant law: RK4 substeps (its default) or its implicit step at the XML's timestep")
    p.add_argument("--no-async", action="store_true", help="skip Gymnasium's async mode")
    p.add_argument("--xml-file", help="the task's model file for both engines (the tasks' xml_file keyword), "
                   "for example a humanoid without self-collisions")
    a = p.parse_args()
    model = {"xml_file": a.xml_file} if a.xml_file else {}
    ours_only = {"integrator": a.integrator} if a.integrator else {}
    print(f"CPU: {cpu_model()}; Lockstep dtype {a.dtype}, contact law {a.contact_law}"
          + (f", integrator {a.integrator}" if a.integrator else "") + (f", model {a.xml_file}" if a.xml_file else ""))
    print(f"{'task':12s} {'envs':>5s} {'lockstep':>10s} {'sync':>10s} {'async':>10s} {'vs faster':>9s}")
    for task in a.tasks:
        for n in a.envs:
            env = gym.make_vec(f"lockstep/{task}", num_envs=n, dtype=a.dtype, contact_law=a.contact_law, **model,
                               **ours_only)
            ours = rate(env, a.seconds)
            env.close()
            env = gym.make_vec(task, num_envs=n, vectorization_mode="sync", **model)
            sync = rate(env, a.seconds)
            env.close()
            asyn = float("nan")
            gc.collect()
            if n <= a.max_async and not a.no_async:
                try:
                    env = gym.make_vec(task, num_envs=n, vectorization_mode="async", **model)
                except OSError as e:  # one process per environment: fork can run out of memory
                    print(f"{task} {n}: Gymnasium's async mode could not start its processes ({e})")
                else:
                    asyn = rate(env, a.seconds)
                    env.close()
            best = np.nanmax([sync, asyn])
            print(f"{task:12s} {n:5d} {ours:10.0f} {sync:10.0f} {asyn:10.0f} {ours / best:8.2f}x", flush=True)


if __name__ == "__main__":
    main()
