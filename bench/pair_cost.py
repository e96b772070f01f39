"""What Humanoid-v5's contacts between its own limbs cost under MuJoCo's contact law: env-steps/s of
lockstep/Humanoid-v5 (contact_law="mujoco") with Gymnasium's humanoid.xml as it is (its limbs collide:
pair contacts) and with the limbs' self-collisions switched off (every geom's conaffinity 0 but the
floor's, so the limbs still touch the floor), beside Gymnasium's own Humanoid-v5 (sync vector env,
MuJoCo from PyPI) on the same two files, same machine, same process, random actions.

    OMP_NUM_THREADS=2 .venv/bin/python bench/pair_cost.py --envs 4096 --seconds 5

Also printed: how many pair contact points the model has (slots), and the mean number in contact per
world over 20 untimed env steps after the timed ones (each followed by an evaluate()).
bench/README.md records the figures with the machine's CPU.
"""
import argparse
import os
import tempfile
import time

import gymnasium as gym
import numpy as np

import lockstep  # noqa: F401  (registers lockstep/<task>)
from bench_tasks import cpu_model, rate


def without_self_collisions(xml: str) -> str:
    """Gymnasium's humanoid.xml with the limbs' conaffinity 0 and the floor's 1: each limb still
    touches the floor (its contype 1 meets the floor's conaffinity), no limb another."""
    xml = xml.replace('<geom conaffinity="1" condim="1" contype="1"', '<geom conaffinity="0" condim="1" contype="1"')
    return xml.replace('name="floor"', 'name="floor" conaffinity="1"')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="+", type=int, default=[4096])
    p.add_argument("--seconds", type=float, default=5.0)
    a = p.parse_args()
    source = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets", "humanoid.xml")
    text = open(source).read()
    folder = tempfile.mkdtemp()
    files = {"as it is (limbs collide)": source, "no self-collisions": os.path.join(folder, "humanoid_no_self.xml")}
    with open(files["no self-collisions"], "w") as f:
        f.write(without_self_collisions(text))
    print(f"CPU: {cpu_model()}; Lockstep float64, contact law mujoco")
    print(f"{'model':26s} {'envs':>5s} {'lockstep':>10s} {'gymnasium':>10s} {'ratio':>6s} {'pair points':>11s}")
    for label, path in files.items():
        for n in a.envs:
            env = gym.make_vec("lockstep/Humanoid-v5", num_envs=n, contact_law="mujoco", xml_file=path)
            names = env.model.field_components("softContact")
            slots = [i for i, c in enumerate(names) if "/" in c and c.endswith(".active")]
            env.reset(seed=0)
            rng = np.random.default_rng(0)
            low, high = env.action_space.low, env.action_space.high
            env.step(rng.uniform(low, high).astype(np.float32))
            steps, start = 0, time.perf_counter()
            while True:
                env.step(rng.uniform(low, high).astype(np.float32))
                steps += 1
                wall = time.perf_counter() - start
                if wall >= a.seconds:
                    break
            ours = n * steps / wall
            # Untimed: 20 more env steps, each followed by an evaluate() (a step leaves the
            # evaluation fields, softContact among them, as they were), counting the pairs' points.
            touching = 0.0
            for _ in range(20):
                env.step(rng.uniform(low, high).astype(np.float32))
                env.batch.evaluate()
                touching += float(np.asarray(env.batch.softContact)[:, slots].sum(1).mean()) / 20 if slots else 0.0
            env.close()
            ref = gym.make_vec("Humanoid-v5", num_envs=n, vectorization_mode="sync", xml_file=path)
            theirs = rate(ref, a.seconds)
            ref.close()
            print(f"{label:26s} {n:5d} {ours:10.0f} {theirs:10.0f} {ours / theirs:5.2f}x "
                  f"{touching:5.3f} of {len(slots)}", flush=True)


if __name__ == "__main__":
    main()
