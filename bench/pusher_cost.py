"""What Pusher-v5's pair contacts (its fingers' capsules against the object's cylinder) cost per
world-step under MuJoCo's law: lockstep/Pusher-v5's engine step (one Euler step of 10 ms, all
worlds) from states where every world's fingers press on the object (the narrow phase and the
extra constraint rows at work), from the same arm states with the object out of reach (the broad
phase alone rejects every pair), and on the same file with the object's contype 0 (no pair
contacts at all), same machine, same process. Each timed step starts from the chosen states again
(set_state is timed in all three alike).

    .venv/bin/python bench/pusher_cost.py --envs 4096 --seconds 5

bench/README.md ("Pusher-v5") records the figures with the machine's CPU.
"""
import argparse
import os
import tempfile
import time

import mujoco
import numpy as np

from lockstep import tasks
from bench_tasks import cpu_model


def pushing_states(m, count, rng):
    """MuJoCo qpos, qvel of Gymnasium's pusher where a finger presses 1 to 5 mm into the object's side:
    a random arm pose and speeds, the object placed beside a random point of a finger within its height."""
    d = mujoco.MjData(m)
    fingers = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE and m.geom_contype[g]]
    obj = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER and m.geom_contype[g]][0]
    home = m.body_pos[m.geom_bodyid[obj]]
    qpos_out, qvel_out = [], []
    while len(qpos_out) < count:
        qpos, qvel = m.qpos0.copy(), np.zeros(m.nv)
        qpos[:7] = rng.uniform(m.jnt_range[:7, 0], m.jnt_range[:7, 1])
        qvel[:7] = rng.uniform(-1, 1, 7)
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        g = fingers[rng.integers(len(fingers))]
        p = d.geom_xpos[g] + rng.uniform(-1, 1) * m.geom_size[g][1] * d.geom_xmat[g].reshape(3, 3)[:, 2]
        if not home[2] - 0.04 < p[2] < home[2] + 0.04:
            continue
        angle = rng.uniform(0, 2 * np.pi)
        centre = p + (m.geom_size[obj][0] + m.geom_size[g][0] - rng.uniform(0.001, 0.005)) * np.array(
            [np.cos(angle), np.sin(angle), 0])
        qpos[7], qpos[8] = centre[1] - home[1], centre[0] - home[0]  # obj_slidey, obj_slidex
        qpos_out.append(qpos)
        qvel_out.append(qvel)
    return np.array(qpos_out), np.array(qvel_out)


def step_rate(env, q, u, seconds):
    """World-steps/s of one engine step from the states q, u (set again before each step)."""
    batch, dt = env.batch, env.layout["timestep"]
    batch.tau[...] = 0
    batch.set_state(q, u)
    batch.step(1, dt)  # warm-up
    steps, start = 0, time.perf_counter()
    while True:
        batch.set_state(q, u)
        batch.step(1, dt)
        steps += 1
        wall = time.perf_counter() - start
        if wall >= seconds and steps >= 3:
            return env.num_envs * steps / wall


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    env = tasks.make("Pusher-v5", num_envs=a.envs)
    xml = open(os.path.join(tasks.ASSETS, "pusher_v5.xml")).read()
    m = mujoco.MjModel.from_xml_string(xml)
    qpos, qvel = pushing_states(m, a.envs, np.random.default_rng(0))
    q, u = env.state.to_lockstep(qpos, qvel)
    far_qpos = qpos.copy()
    far_qpos[:, 7:9] += 2.0  # the object 2 m away along x and y: beyond every finger's bounding sphere
    far_q, far_u = env.state.to_lockstep(far_qpos, qvel)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pusher_without_pairs.xml")
        bare_xml = xml.replace('density="0.01" contype="1"', 'density="0.01" contype="0"')
        if bare_xml == xml:
            raise SystemExit("pusher_cost.py: the object's geom is not where pusher_v5.xml had it (contype)")
        with open(path, "w") as f:
            f.write(bare_xml)
        bare = tasks.make("Pusher-v5", num_envs=a.envs, xml_file=path)
    env.batch.set_state(q, u)
    env.batch.evaluate()
    names = env.model.field_components("softContact")
    active = [i for i, c in enumerate(names) if c.endswith(".active")]  # the plane contacts' points, then the pairs'
    touching = np.asarray(env.batch.softContact)[:, active] > 0.5
    print(f"CPU: {cpu_model()}; {a.envs} worlds, float64, one Euler step of {env.layout['timestep']} s")
    print(f"contact points per world at the pushing states: {touching.sum(1).mean():.2f} of {touching.shape[1]} "
          f"slots, finger-object {touching[:, -3:].sum(1).mean():.2f} of 3")
    rates = {"fingers on the object": step_rate(env, q, u, a.seconds),
             "object out of reach": step_rate(env, far_q, far_u, a.seconds),
             "no pair contacts (object contype 0)": step_rate(bare, q, u, a.seconds)}
    for name, r in rates.items():
        print(f"{name:38s} {r:12.0f} world-steps/s  {1e6 / r:7.3f} us per world-step")


if __name__ == "__main__":
    main()
