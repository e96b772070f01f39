#!/usr/bin/env python3
"""Pendulum swing-up learned by the cross-entropy method, with NumPy only.

Every world of one lockstep.VectorEnv runs its own candidate policy (a 3-16-1 tanh network on
cos q, sin q, u), so one batched episode evaluates the whole population. The rod's torque limit
(2 N m) is below what holding it level takes (4.9 N m): a good policy pumps energy and then
balances upright. Prints the population's mean return and the elite's, generation by generation.
On a 2-core machine shared with builds, 60 generations took 100 s: the mean return rose from -226
to about -128 and the elite's from -195 to about -35 (episode maximum 250); the mean policy swings
the rod up but keeps it within 18 degrees of upright for only ~15% of the last second, so longer
runs (or a larger population) still pay.

    .venv/bin/python examples/cem_swingup.py [--generations 30] [--population 256]
"""
import argparse
import os
import time

import numpy as np

import lockstep

HIDDEN = 16
SIZES = {"W1": (3, HIDDEN), "b1": (HIDDEN,), "W2": (HIDDEN, 1), "b2": (1,)}
N_PARAMS = sum(int(np.prod(s)) for s in SIZES.values())


def unpack(theta):
    """Per-world network weights from the population's parameter rows [worlds, N_PARAMS]."""
    out, k = {}, 0
    for name, shape in SIZES.items():
        n = int(np.prod(shape))
        out[name] = theta[:, k:k + n].reshape((theta.shape[0],) + shape)
        k += n
    return out


def policy(net, obs, limit):
    q, u = obs[:, 0], obs[:, 1]
    x = np.stack([np.cos(q), np.sin(q), u / 8.0], axis=1)                # [worlds, 3]
    h = np.tanh(np.einsum("wi,wih->wh", x, net["W1"]) + net["b1"])      # [worlds, HIDDEN]
    a = np.einsum("wh,whk->wk", h, net["W2"]) + net["b2"]               # [worlds, 1]
    return limit * np.tanh(a)


def reward(batch, obs, actions):
    # Height of the rod's center (1 upright, -1 hanging), minus small speed and effort costs.
    q, u = obs[:, 0], obs[:, 1]
    return -np.cos(q) - 0.01 * u**2 - 0.001 * actions[:, 0] ** 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generations", type=int, default=30)
    ap.add_argument("--population", type=int, default=256)
    ap.add_argument("--elite", type=float, default=0.1, help="fraction kept each generation")
    ap.add_argument("--seconds", type=float, default=5.0, help="episode length")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    scene = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pendulum.json")
    model = lockstep.load(scene)
    control_dt, substeps = 0.02, 4                         # 50 Hz control, 4 RK4 steps of 5 ms
    steps = int(round(args.seconds / control_dt))
    env = lockstep.VectorEnv(model, args.population, reward, observations=("q", "u"),
                             max_episode_steps=steps, dt=control_dt / substeps, substeps=substeps,
                             reset_noise=0.1)
    limit = env.single_action_space.high

    rng = np.random.default_rng(args.seed)
    mean, std = np.zeros(N_PARAMS), np.full(N_PARAMS, 1.0)
    n_elite = max(2, int(args.elite * args.population))
    t0 = time.perf_counter()
    print(f"CEM on '{model.name}': {args.population} candidate policies ({N_PARAMS} parameters each), "
          f"one per world, {args.seconds:g} s episodes; return = sum of rewards per 50 Hz step (max {steps})")
    for gen in range(args.generations):
        theta = mean + std * rng.standard_normal((args.population, N_PARAMS))
        net = unpack(theta)
        obs, _ = env.reset(seed=args.seed + gen)
        ret = np.zeros(args.population)
        for _ in range(steps):
            obs, r, term, trunc, _ = env.step(policy(net, obs, limit))
            ret += r
        elite = np.argsort(ret)[-n_elite:]
        mean = theta[elite].mean(axis=0)
        std = theta[elite].std(axis=0) + 0.02
        print(f"generation {gen:3d}   mean return {ret.mean():8.1f}   elite mean {ret[elite].mean():8.1f}   "
              f"best {ret.max():8.1f}   ({time.perf_counter() - t0:5.1f} s)", flush=True)

    # The final mean policy on fresh starts: fraction of the last second spent near upright.
    theta = np.broadcast_to(mean, (args.population, N_PARAMS)).copy()
    net = unpack(theta)
    obs, _ = env.reset(seed=12345)
    upright = np.zeros(args.population)
    for t in range(steps):
        obs, r, term, trunc, _ = env.step(policy(net, obs, limit))
        if t >= steps - int(1.0 / control_dt):
            upright += np.cos(obs[:, 0]) < -0.95
    print(f"mean policy: {100 * upright.mean() / int(1.0 / control_dt):.0f}% of the last second within 18 degrees "
          f"of upright, over {args.population} starts")


if __name__ == "__main__":
    main()
