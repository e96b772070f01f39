"""Pinocchio's analytic ABA derivatives and MuJoCo's finite-difference transition Jacobians per call, the
anchors of Lockstep's linearize (bench/bench_derivatives.cpp; bench/README.md, "Derivatives").

    .venv/bin/python bench/bench_derivatives.py

Pinocchio (PyPI `pin`): computeABADerivatives (d udot / d q, v, tau) on panda, ur5 and solo12 (fixed base)
at a random state, the median over repeats of a timed loop of calls from Python; a call of
pin.aba on the same state is timed too, so that the Python call's own cost can be judged. MuJoCo's
side is bench_mujoco_step.cpp (C, no Python in the loop). Prints one line per robot and the CPU model.
"""
import os
import platform
import statistics
import time

import numpy as np
import pinocchio as pin

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def per_call(f, calls=2000, repeats=7):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    print(f"CPU: {cpu_model()}; Pinocchio {pin.__version__}")
    rng = np.random.default_rng(0)
    for robot in ("panda.urdf", "ur5_robot.urdf", "solo12.urdf"):
        m = pin.buildModelFromUrdf(os.path.join(ROOT, "models", robot))
        d = m.createData()
        lo, hi = m.lowerPositionLimit, m.upperPositionLimit
        q = lo + (hi - lo) * rng.uniform(0.2, 0.8, size=m.nq)
        v = rng.uniform(-1, 1, size=m.nv)
        tau = rng.uniform(-1, 1, size=m.nv)
        derivatives = per_call(lambda: pin.computeABADerivatives(m, d, q, v, tau))
        aba = per_call(lambda: pin.aba(m, d, q, v, tau))
        print(f"{robot:16s} nv {m.nv:2d}  computeABADerivatives {derivatives * 1e6:7.2f} us   aba {aba * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
