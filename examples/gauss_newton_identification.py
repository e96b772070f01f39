#!/usr/bin/env python3
"""System identification by Gauss-Newton on Lockstep's exact derivatives (docs/derivatives.md): a
bushing's stiffness and a link's mass recovered from a recorded trajectory, from 1,024 starting
guesses at once, one per world.

The mechanism: three links on pins swinging under gravity, the last one held by a LinearBushing to
Ground. A "recording" is made with the true parameters (stiffness 80 N/m along x, link2 1.3 kg).
Every world then starts from its own guess (stiffness 20 to 300, mass 0.3 to 4) and, per iteration,
re-simulates the recording's time span with its parameters while carrying the trajectory's
sensitivity to them, S_{k+1} = A_k S_k + C_k (A, C from Batch.linearize: d x+ / d x and d x+ / d p,
every world at once), and takes the Gauss-Newton step dp = -(sum S^T S)^-1 sum S^T (x - x_recorded).

    .venv/bin/python examples/gauss_newton_identification.py [--worlds 1024] [--iterations 8]

Prints, per iteration, how many worlds are within 1e-6 (relative) of the true values and the
median relative error; exits non-zero when fewer than 90% of the worlds got there. On an AMD EPYC
(2 cores, double): 146 worlds after 3 iterations, 482 after 4, 830 after 5, 927 after 6 (median
error 1.4e-15), 7.6 s per iteration (150 linearizations of 1,024 worlds, 49 us per world).
"""
import argparse
import sys
import time

import numpy as np

import lockstep

SCENE = {
    "name": "three-links-on-a-bushing",
    "gravity": [0, -9.81, 0],
    "bodies": [
        {"name": "link1", "parent": "ground", "mobilizer": "pin", "mass": 1.0, "com": [0, -0.25, 0],
         "inertia": {"xx": 0.02, "yy": 0.005, "zz": 0.02}},
        {"name": "link2", "parent": "link1", "mobilizer": "pin", "X_PF": {"position": [0, -0.5, 0]}, "mass": 1.0,
         "com": [0, -0.25, 0], "inertia": {"xx": 0.02, "yy": 0.005, "zz": 0.02}},
        {"name": "link3", "parent": "link2", "mobilizer": "pin", "X_PF": {"position": [0, -0.5, 0]}, "mass": 1.0,
         "com": [0, -0.25, 0], "inertia": {"xx": 0.02, "yy": 0.005, "zz": 0.02}},
    ],
    "linear_bushings": [
        {"name": "hold", "body1": "ground", "frame_on_body1": {"position": [0.3, -1.5, 0]}, "body2": "link3",
         "frame_on_body2": {"position": [0, -0.5, 0]}, "stiffness": [1, 1, 1, 50, 50, 50],
         "damping": [0.1, 0.1, 0.1, 1, 1, 1]},
    ],
}
PARAMS = ["bushing.hold.stiffness.3", "body.link2.mass"]
TRUE = np.array([80.0, 1.3])
DT, STEPS = 2e-3, 150
Q0, U0 = np.array([0.6, -0.4, 0.3]), np.array([0.0, 1.0, -1.0])


def simulate(batch, p, sensitivities):
    """Every world's trajectory (worlds, STEPS + 1, 2nu) under its parameters p (worlds, 2), and with
    sensitivities also sum S^T S and sum S^T r against the recording (set below)."""
    worlds = batch.worlds
    for j, name in enumerate(PARAMS):
        batch.params[name] = p[:, j]
    batch.set_state(Q0, U0)
    q, u = batch.field("q"), batch.field("u")
    nu = len(Q0)
    xs = np.zeros((worlds, STEPS + 1, 2 * nu))
    xs[:, 0] = np.concatenate([Q0, U0])
    S = np.zeros((worlds, 2 * nu, len(PARAMS)))
    JtJ = np.zeros((worlds, len(PARAMS), len(PARAMS)))
    Jtr = np.zeros((worlds, len(PARAMS)))
    for k in range(STEPS):
        if sensitivities:
            A, _, C = batch.linearize(PARAMS, dt=DT, integrator="rk4")
            S = np.einsum("wij,wjk->wik", A, S) + C
        batch.step(1, dt=DT, integrator="rk4")
        xs[:, k + 1, :nu], xs[:, k + 1, nu:] = q, u
        if sensitivities:
            r = xs[:, k + 1] - simulate.recording[k + 1]
            JtJ += np.einsum("wik,wil->wkl", S, S)
            Jtr += np.einsum("wik,wi->wk", S, r)
    return xs, JtJ, Jtr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worlds", type=int, default=1024)
    ap.add_argument("--iterations", type=int, default=8)
    args = ap.parse_args()
    model = lockstep.load(SCENE)
    truth = lockstep.Batch(model, 1, dtype="float64")
    simulate.recording = simulate(truth, TRUE[None], False)[0][0]

    rng = np.random.default_rng(0)
    p = np.stack([rng.uniform(20, 300, args.worlds), rng.uniform(0.3, 4.0, args.worlds)], axis=1)
    batch = lockstep.Batch(model, args.worlds, dtype="float64")
    t0 = time.perf_counter()
    for it in range(args.iterations):
        _, JtJ, Jtr = simulate(batch, p, True)
        step = -np.linalg.solve(JtJ, Jtr[..., None])[..., 0]
        # Keep the parameters physical: at most halve or double in one step.
        p = np.clip(p + step, 0.5 * p, 2.0 * p)
        rel = np.abs(p - TRUE) / TRUE
        near = int(np.sum(rel.max(axis=1) < 1e-6))
        print(f"iteration {it + 1}: {near:5d} of {args.worlds} worlds within 1e-6 of the true values; "
              f"median relative error {np.median(rel.max(axis=1)):.2e} ({time.perf_counter() - t0:.1f} s)", flush=True)
    print(f"true stiffness {TRUE[0]}, mass {TRUE[1]}; world 0 found {p[0, 0]:.9g}, {p[0, 1]:.9g}")
    if near < 0.9 * args.worlds:
        print("fewer than 90% of the worlds converged", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
