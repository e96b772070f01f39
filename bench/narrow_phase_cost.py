"""What one pair contact's narrow phase costs, kind by kind, beside MuJoCo's: two free bodies, one
geom each, at random relative poses within reach (most of them touching), under MuJoCo's contact law.

For each kind of pair, Lockstep's Batch.evaluate() (float64, one thread) of `--worlds` such worlds is
timed with the pair and with the same file whose geoms do not collide (contype 0); the difference per
world is the pair's cost: its broad phase, narrow phase and the rows it adds to the solve. MuJoCo's
mj_collision is timed on the same poses, one world after the other (its broad and narrow phase
only, no solve), and its mj_forward with and without the pair likewise.

    OMP_NUM_THREADS=1 .venv/bin/python bench/narrow_phase_cost.py --worlds 2048 --seconds 2

bench/README.md records the figures with the machine's CPU.
"""
import argparse
import os
import tempfile
import time

import mujoco
import numpy as np

import lockstep
from bench_tasks import cpu_model

SHAPES = {"sphere": 'type="sphere" size=".1"', "capsule": 'type="capsule" size=".04 .12"',
          "ellipsoid": 'type="ellipsoid" size=".12 .07 .05"', "ellipsoid2": 'type="ellipsoid" size=".09 .11 .04"',
          "box": 'type="box" size=".1 .07 .05"', "box2": 'type="box" size=".12 .08 .1"',
          "cylinder": 'type="cylinder" size=".08 .1"'}
PAIRS = [("sphere", "ellipsoid"), ("capsule", "ellipsoid"), ("capsule", "cylinder"), ("capsule", "box"),
         ("box", "box2"), ("ellipsoid", "box"), ("ellipsoid", "ellipsoid2"), ("ellipsoid", "cylinder")]


def xml(first, second, collide=True):
    off = "" if collide else ' contype="0" conaffinity="0"'
    return f"""<mujoco><option gravity="0 0 0"/><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom {SHAPES[first]}{off}/></body>
  <body name="b" pos="0 0 2"><freejoint/><geom {SHAPES[second]} {off}/></body>
</worldbody></mujoco>"""


def poses(m, worlds, rng):
    """qpos of `worlds` random relative poses: a at (0, 0, 1), b's centre within the bounding spheres'
    reach in a cube about it, both turned at random."""
    reach = m.geom_rbound[0] + m.geom_rbound[1]
    q = np.zeros((worlds, 14))
    for body in (0, 1):
        v = rng.normal(size=(worlds, 4))
        q[:, 7 * body + 3:7 * body + 7] = v / np.linalg.norm(v, axis=1, keepdims=True)
    q[:, 2] = 1
    q[:, 7:10] = q[:, 0:3] + rng.uniform(-reach, reach, (worlds, 3)) / np.sqrt(3)
    return q


def timed(call, seconds):
    call()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        n += 1
    return (time.perf_counter() - start) / n


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=2048)
    p.add_argument("--seconds", type=float, default=2.0)
    a = p.parse_args()
    print(f"CPU: {cpu_model()}; {a.worlds} worlds, float64, one thread; MuJoCo {mujoco.__version__}")
    print(f"{'pair':<22}{'touching':>9}{'Lockstep us/world':>19}{'MuJoCo collision us':>21}{'MuJoCo forward us':>19}")
    folder = tempfile.mkdtemp()
    rng = np.random.default_rng(1)
    for first, second in PAIRS:
        costs, touching, q = {}, 0, None
        for collide in (True, False):
            path = os.path.join(folder, f"{first}_{second}_{int(collide)}.xml")
            with open(path, "w") as f:
                f.write(xml(first, second, collide))
            m = mujoco.MjModel.from_xml_path(path)
            d = mujoco.MjData(m)
            if q is None:
                q = poses(m, a.worlds, rng)
            model = lockstep.load({"mjcf": {"path": path, "contact_law": "mujoco"}})
            batch = lockstep.Batch(model, a.worlds, dtype="float64", threads=1)
            batch.set_state(*model.from_mujoco(q, np.zeros((a.worlds, m.nv))))
            ours = timed(batch.evaluate, a.seconds) / a.worlds
            sample = q[:256]

            def each(step):
                for row in sample:
                    d.qpos[:] = row
                    step(m, d)

            def collision(m, d):
                mujoco.mj_kinematics(m, d)
                mujoco.mj_collision(m, d)

            theirs = timed(lambda: each(collision), a.seconds / 2) / len(sample)
            forward = timed(lambda: each(mujoco.mj_forward), a.seconds / 2) / len(sample)
            if collide:
                for row in sample:
                    d.qpos[:] = row
                    mujoco.mj_forward(m, d)
                    touching += d.ncon > 0
            costs[collide] = (ours, theirs, forward)
        pair = [1e6 * (costs[True][k] - costs[False][k]) for k in range(3)]
        print(f"{first + '-' + second:<22}{touching / len(sample):>9.0%}{pair[0]:>19.2f}{pair[1]:>21.2f}{pair[2]:>19.2f}")


if __name__ == "__main__":
    main()
