"""What box pairs cost per world-step under MuJoCo's law, beside MuJoCo itself: models/mjcf/bin.xml
(five static boxes, a free box, a free ball and a free capsule; eighteen pairs, five of them box
pairs of eight slots and six capsule-box pairs of two) at its 10 ms Euler step, from states where
the three bodies rest on the bin's floor and on each other (each world's own, after 3 s of a
random throw), and from the same states lifted 1 m (nothing within reach: the broad phase alone). Lockstep steps all
worlds at once (float64, the CPU's threads); MuJoCo's mj_step (PyPI's, its default solver) steps
each world in turn on one thread, from a Python loop whose own cost (setting qpos and qvel) is
measured apart. Each timed step starts from the chosen states again. A world flagged during the 3 s
is replayed in MuJoCo, which says whether it finds that state unstable too (its mjWARN_BADQACC).

    OMP_NUM_THREADS=2 .venv/bin/python bench/bin_cost.py --worlds 4096 --seconds 5

bench/README.md ("Box pairs") records the figures with the machine's CPU.
"""
import argparse
import os

import mujoco
import numpy as np

import lockstep
from bench_tasks import cpu_model
from env_overhead import seconds_per_call

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "mjcf", "bin.xml")


def thrown_into_the_bin(m, n, rng):
    """n random throws (MuJoCo's qpos, and the random qvel drawn after it) of the bin's box, ball
    and capsule: stacked over the box's random place, each turned at random."""
    qpos = np.tile(m.qpos0, (n, 1))
    qpos[:, 0:3] = rng.uniform([-.2, -.2, .1], [.2, .2, .3], (n, 3))
    qpos[:, 7:10] = qpos[:, 0:3] + [0, 0, 0.12]  # the ball and the capsule stacked over the box
    qpos[:, 14:17] = qpos[:, 0:3] + [0, 0, 0.26]
    for col in (3, 10, 17):
        q = rng.standard_normal((n, 4))
        qpos[:, col:col + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
    return qpos


def rate(step, worlds, seconds):
    return worlds / seconds_per_call(step, seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    model = lockstep.load({"mjcf": {"path": BIN, "contact_law": "mujoco"}})
    m = mujoco.MjModel.from_xml_path(BIN)
    n, rng = a.worlds, np.random.default_rng(0)
    qpos = thrown_into_the_bin(m, n, rng)
    batch = lockstep.Batch(model, n, dtype="float64")
    qvel = rng.uniform(-2, 2, (n, m.nv))
    batch.set_state(*model.from_mujoco(qpos, qvel))
    batch.step(300)  # 3 s: everything has landed
    rest_qpos, rest_qvel = np.array(batch.mujocoQpos), np.array(batch.mujocoQvel)
    batch.evaluate()
    points = np.array(batch.softContact).reshape(n, -1, 20)[:, :, 0] > 0.5  # 20 values a point, "active" first
    lifted = rest_qpos.copy()
    lifted[:, [2, 9, 16]] += 1.0
    q, u = model.from_mujoco(rest_qpos, rest_qvel)
    far_q, far_u = model.from_mujoco(lifted, rest_qvel)

    def ours(q, u):
        def step():
            batch.set_state(q, u)
            batch.step(1)
        return step

    d = mujoco.MjData(m)
    sample = range(0, n, max(1, n // 512))  # MuJoCo on 512 of the states, in turn

    def theirs(qpos, stepping=True):
        def step():
            for w in sample:
                d.qpos[:], d.qvel[:] = qpos[w], rest_qvel[w]
                if stepping:
                    mujoco.mj_step(m, d)
        return step

    print(f"CPU: {cpu_model()}, {os.cpu_count()} threads; {n} worlds, float64, one Euler step of {model.dt} s")
    flagged = np.flatnonzero(batch.status)
    print(f"contact points per world at rest: {points.sum(1).mean():.2f} of {points.shape[1]} slots; "
          f"worlds flagged: {len(flagged)}")
    for w in flagged:  # the same world in MuJoCo: the step at which it reports the state unstable
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = qpos[w], qvel[w]
        unstable = None
        for k in range(300):
            mujoco.mj_step(m, d)
            if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
                unstable = k
                break
        print(f"  world {w}: {batch.describe_status(w)}; MuJoCo's mj_step of it: "
              f"{'unstable at step %d' % unstable if unstable is not None else 'stable for 3 s'}")
    def set_only():
        batch.set_state(far_q, far_u)

    rows = {"Lockstep, at rest in the bin": rate(ours(q, u), n, a.seconds),
            "Lockstep, lifted 1 m (broad phase)": rate(ours(far_q, far_u), n, a.seconds),
            "(Lockstep's set_state alone, lifted)": rate(set_only, n, a.seconds),
            "MuJoCo mj_step, one thread, at rest": rate(theirs(rest_qpos), len(sample), a.seconds),
            "MuJoCo mj_step, one thread, lifted": rate(theirs(lifted), len(sample), a.seconds),
            "(MuJoCo's Python loop without mj_step)": rate(theirs(lifted, False), len(sample), a.seconds)}
    for name, r in rows.items():
        print(f"{name:38s} {r:12.0f} world-steps/s  {1e6 / r:7.3f} us per world-step")


if __name__ == "__main__":
    main()
