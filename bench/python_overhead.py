#!/usr/bin/env python3
"""The Python overhead per Batch.step at 1, 64 and 4096 worlds (not a test; issue 14's target is under
10% at 4096 worlds).

For each size the same K steps are timed on the same batch:
  C++:    K calls of Batch::step(dt, 1) made by a loop in C++ (the extension's time_step_calls)
  Python: K calls of batch.step()  each crossing into C++ (argument conversion, GIL release and
                                   reacquire, the scene's dt and integrator looked up)
  loop:   K iterations of {write actions into batch.tau, batch.step(), read batch.q}, as a
          learning loop does
and, for scale, one call batch.step(n=K) (the K steps inside one engine call). Overhead = time per
step / C++ time per step - 1, the best of several repeats of each. The CPU backend runs OpenMP
threads: on a machine busy with other work the per-call times are noisy (OMP_NUM_THREADS=1 gives
steadier figures).

    .venv/bin/python bench/python_overhead.py [--scene scenes/chain-7.json] [--dtype float32]
"""
import argparse
import os
import time

import numpy as np

import lockstep


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", default=os.path.join(root, "scenes", "chain-7.json"))
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--worlds", type=int, nargs="+", default=[1, 64, 4096])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    model = lockstep.load(args.scene)
    print(f"scene {model.name}, {args.dtype}, device {args.device}, dt {model.dt:g} s, {model.integrator}")
    print(f"{'worlds':>7} {'steps':>6} {'step(n=K) us':>13} {'C++ us/step':>12} {'Python us/step':>15} "
          f"{'overhead':>9} {'loop us/step':>13} {'loop overhead':>14}")
    for worlds in args.worlds:
        batch = lockstep.Batch(model, worlds, device=args.device, dtype=args.dtype)
        # About 0.5 s of engine time per measurement, at least 50 steps.
        t1 = best_of(3, lambda: batch.step(10)) / 10
        k = max(50, int(0.5 / max(t1, 1e-9)))
        one_call = best_of(args.repeats, lambda: batch.step(k)) / k
        cpp = min(batch._b.time_step_calls(k, model.dt, model.integrator) for _ in range(args.repeats)) / k

        def python_calls():
            for _ in range(k):
                batch.step()

        actions = np.zeros((worlds, model.nu), dtype=batch.dtype)

        def learning_loop():
            tau = batch.tau
            for _ in range(k):
                tau[...] = actions
                batch.step()
                batch.q

        py = best_of(args.repeats, python_calls) / k
        loop = best_of(args.repeats, learning_loop) / k if args.device == "cpu" else float("nan")
        print(f"{worlds:7d} {k:6d} {one_call * 1e6:13.2f} {cpp * 1e6:12.2f} {py * 1e6:15.2f} {100 * (py / cpp - 1):8.1f}% "
              f"{loop * 1e6:13.2f} {100 * (loop / cpp - 1):13.1f}%", flush=True)


if __name__ == "__main__":
    main()
