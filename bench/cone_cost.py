"""What MuJoCo's elliptic friction cones cost beside its pyramids, in Lockstep and in MuJoCo itself:
models/mjcf/bin.xml (a box, a ball and a capsule thrown into a bin of five static boxes) at its 10 ms
Euler step, once with the file's pyramidal cones and once with <option cone="elliptic"/>. For each:
the worlds thrown at random and stepped 3 s (everything has landed: the bodies rest on the floor and
on each other), then
- Lockstep's step of all worlds at once (float64, the CPU's threads), world-steps/s, and its Newton
  iterations per solve (the field softSolver, averaged over the worlds at rest);
- MuJoCo's mj_step (PyPI's, its default Newton solver and tolerance) of 512 of the same states in
  turn on one thread, world-steps/s (its Python loop's own cost measured apart) and its iterations
  (solver_niter);
- the worlds flagged during the 3 s.

    OMP_NUM_THREADS=2 .venv/bin/python bench/cone_cost.py --worlds 4096 --seconds 5

bench/README.md ("Elliptic cones") records the figures with the machine's CPU.
"""
import argparse
import os
import tempfile

import mujoco
import numpy as np

import lockstep
from bench_tasks import cpu_model
from bin_cost import BIN, thrown_into_the_bin
from env_overhead import seconds_per_call


def measure(path, worlds, seconds):
    model = lockstep.load({"mjcf": {"path": path, "contact_law": "mujoco"}})
    m = mujoco.MjModel.from_xml_path(path)
    n, rng = worlds, np.random.default_rng(0)
    qpos = thrown_into_the_bin(m, n, rng)
    batch = lockstep.Batch(model, n, dtype="float64")
    batch.set_state(*model.from_mujoco(qpos, rng.uniform(-2, 2, (n, m.nv))))
    batch.step(300)  # 3 s
    flagged = int(np.count_nonzero(batch.status))
    rest_qpos, rest_qvel = np.array(batch.mujocoQpos), np.array(batch.mujocoQvel)
    batch.evaluate()
    healthy = np.asarray(batch.status) == 0
    iterations = float(np.array(batch.softSolver)[healthy, 0].mean())
    ours = n / seconds_per_call(lambda: batch.step(1), seconds)  # on from rest, every world

    d = mujoco.MjData(m)
    sample = [w for w in range(0, n, max(1, n // 512)) if healthy[w]]
    niter = []

    def theirs(stepping=True):
        def step():
            for w in sample:
                d.qpos[:], d.qvel[:] = rest_qpos[w], rest_qvel[w]
                if stepping:
                    mujoco.mj_step(m, d)
                    niter.append(d.solver_niter[0])
        return step

    mujoco_rate = len(sample) / seconds_per_call(theirs(), seconds)
    loop = len(sample) / seconds_per_call(theirs(False), seconds)
    # MuJoCo's time less its Python loop's, per world-step
    mujoco_us = 1e6 / mujoco_rate - 1e6 / loop
    return flagged, iterations, ours, float(np.mean(niter)), mujoco_us


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    text = open(BIN).read()
    assert '<option timestep=".01"/>' in text
    print(f"CPU: {cpu_model()}, {os.cpu_count()} threads; {a.worlds} worlds, float64, Euler steps of 10 ms, at rest "
          "in the bin after 3 s")
    print("| cone | flagged in 3 s | Lockstep world-steps/s | Lockstep Newton iterations per solve | "
          "MuJoCo us per world-step (one thread) | MuJoCo iterations per step |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for cone in ("pyramidal", "elliptic"):
            path = os.path.join(tmp, f"bin_{cone}.xml")
            with open(path, "w") as f:
                f.write(text.replace('<option timestep=".01"/>', f'<option timestep=".01" cone="{cone}"/>'))
            flagged, iterations, ours, theirs_iterations, mujoco_us = measure(path, a.worlds, a.seconds)
            print(f"| {cone} | {flagged} | {ours:,.0f} | {iterations:.2f} | {mujoco_us:.2f} | {theirs_iterations:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
