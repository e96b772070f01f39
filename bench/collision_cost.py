"""What contacts between bodies cost under the compliant law's implicit step, beside MuJoCo on the
same scene: K balls (radius 5 cm, 0.2 kg, free bodies) dropped into a box of five half-spaces
(scene collision_geoms: K (K - 1) / 2 pair contacts and 5 K plane contacts), 10 ms steps.
Lockstep steps all worlds at once (float64, the CPU's threads) from the settled heap (3 s after the
drop), from the balls 3 m above one another, from 10 m up, floating without gravity (every pair
and wall out of reach: the narrow phase, the reach test and the implicit step's metric alone), and
without collision geoms (the free fall's step). MuJoCo (PyPI's mujoco, its default law and solver,
Euler at 10 ms) steps the same balls in the same box on one thread, one world, from its own settled
heap (mj_step in a Python loop).

    OMP_NUM_THREADS=2 .venv/bin/python bench/collision_cost.py --balls 8 27 --worlds 1024 --seconds 5

bench/README.md ("Contacts between bodies under the compliant law") records the figures.
"""
import argparse
import time

import mujoco
import numpy as np

import lockstep
from bench_tasks import cpu_model

RADIUS, MASS = 0.05, 0.2


def layout(k):
    """The balls' starting places: layers of a square grid 12 cm apart, from 10 cm up; the box's
    half-width leaves each layer a ball's width of play."""
    side = int(np.ceil(np.sqrt(k / 3)))  # at least three layers
    half = 0.06 * side + 0.05
    places = [(-0.06 * (side - 1) + 0.12 * (i % side) + 0.01 * (i // side % 2),
               -0.06 * (side - 1) + 0.12 * (i // side % side), 0.1 + 0.12 * (i // (side * side)))
              for i in range(k)]
    return places, half


def scene(k, collide=True):
    places, half = layout(k)
    inertia = 0.4 * MASS * RADIUS ** 2
    bodies = [{"name": f"ball{i}", "mobilizer": "free", "X_PF": {"position": list(p)}, "mass": MASS,
               "inertia": {"xx": inertia, "yy": inertia, "zz": inertia}} for i, p in enumerate(places)]
    planes = [("floor", [0, 0, 1], [0, 0, 0]), ("x-", [1, 0, 0], [-half, 0, 0]), ("x+", [-1, 0, 0], [half, 0, 0]),
              ("y-", [0, 1, 0], [0, -half, 0]), ("y+", [0, -1, 0], [0, half, 0])]
    geoms = [{"name": n, "body": "ground", "shape": "plane", "normal": nn, "point": pt} for n, nn, pt in planes]
    geoms += [{"name": f"ball{i}", "body": f"ball{i}", "shape": "sphere", "radius": RADIUS} for i in range(k)]
    s = {"gravity": [0, 0, -9.81], "bodies": bodies, "simulation": {"dt": 0.01, "integrator": "implicit"}}
    if collide:
        s["collision_geoms"] = {"stiffness": 1e7, "dissipation": 1, "friction": 0.5, "stiction_velocity": 1e-3,
                                "geoms": geoms}
    return s


def mjcf(k):
    places, half = layout(k)
    walls = "".join(f'<geom type="plane" size="1 1 .1" pos="{p}" zaxis="{n}"/>'
                    for n, p in [("1 0 0", f"{-half} 0 0"), ("-1 0 0", f"{half} 0 0"),
                                 ("0 1 0", f"0 {-half} 0"), ("0 -1 0", f"0 {half} 0")])
    balls = "".join(f'<body pos="{x} {y} {z}"><freejoint/><geom type="sphere" size="{RADIUS}" mass="{MASS}"/></body>'
                    for x, y, z in places)
    return (f'<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="1 1 .1"/>{walls}{balls}'
            f'</worldbody></mujoco>')


def lockstep_rate(model, n, steps, seconds, lift=False):
    b = lockstep.Batch(model, n, dtype="float64")
    if lift:  # each ball 3 m above the one before, from 10 m up, floating (the model without gravity)
        q = np.array(b.q)
        for i in range(model.nu // 6):
            q[:, 7 * i + 6] += 10.0 + 3.0 * i
        b.set_state(q, np.zeros_like(np.array(b.u)))
    else:
        b.step(300)  # 3 s: the heap has settled
    b.step(1)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        b.step(steps)
        done += steps
    wall = time.perf_counter() - start
    return n * done / wall, b


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--balls", nargs="+", type=int, default=[8, 27])
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    print(f"CPU: {cpu_model()}")
    for k in a.balls:
        model = lockstep.load(scene(k))
        settled, b = lockstep_rate(model, a.worlds, 10, a.seconds)
        flagged = int(np.count_nonzero(np.asarray(b.status)))
        b.evaluate()
        active = np.array(b.softContact).reshape(a.worlds, -1, 20)[:, :, 0] > 0.5
        floating = scene(k)
        floating["gravity"] = [0, 0, 0]
        apart, _ = lockstep_rate(lockstep.load(floating), a.worlds, 10, a.seconds, lift=True)
        free, _ = lockstep_rate(lockstep.load(scene(k, collide=False)), a.worlds, 10, a.seconds)
        m = mujoco.MjModel.from_xml_string(mjcf(k))
        d = mujoco.MjData(m)
        for _ in range(300):
            mujoco.mj_step(m, d)
        loop, start = 0, time.perf_counter()
        while time.perf_counter() - start < a.seconds:
            for _ in range(100):
                mujoco.mj_step(m, d)
            loop += 100
        mj = loop / (time.perf_counter() - start)
        print(f"{k} balls ({k * (k - 1) // 2} pairs, {5 * k} plane contacts), {a.worlds} worlds:")
        print(f"  Lockstep settled: {settled:,.0f} world-steps/s ({1e6 / settled:.2f} us), "
              f"{active.sum(axis=1).mean():.1f} points in contact per world, {flagged} worlds flagged")
        print(f"  Lockstep apart: {apart:,.0f} world-steps/s ({1e6 / apart:.2f} us)")
        print(f"  Lockstep without collision geoms: {free:,.0f} world-steps/s ({1e6 / free:.2f} us)")
        print(f"  MuJoCo mj_step, one world, one thread, settled: {mj:,.0f} steps/s ({1e6 / mj:.2f} us), "
              f"{d.ncon} contacts")


if __name__ == "__main__":
    main()
