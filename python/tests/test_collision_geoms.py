"""Contacts between moving bodies under the compliant law (docs/scene-format.md, "Collision geoms";
docs/contact-laws.md): a scene's spheres, capsules and half-spaces touch pairwise in the implicit
step. Closed forms (Hertz's static penetration of a pair, with Simbody's HuntCrossleyForce rule for
two materials; momentum and energy through a collision), drops into a box at 10 ms with nothing
passing through anything, the step's derivatives against differences, and refusals."""
import json
import os

import numpy as np
import pytest

import lockstep

G = 9.81
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hertz_k(E1: float, E2: float) -> float:
    """Simbody's HuntCrossleyForce (its header's formulas): k = s1 E1^(2/3), s1 = E2^(2/3) / (E1^(2/3) +
    E2^(2/3)), and the force (4/3) k^(3/2) sqrt(R) x^(3/2)."""
    a, b = E1 ** (2 / 3), E2 ** (2 / 3)
    return b / (a + b) * a


def resting_ball(dt: float, E1: float, E2: float) -> dict:
    """A 2 kg ball of radius 0.1 (material E1) on a Translation mobilizer, set on top of a fixed ball of
    radius 0.3 (material E2) on Ground."""
    return {"gravity": [0, 0, -G],
            "bodies": [{"name": "ball", "mobilizer": "translation", "mass": 2.0,
                        "inertia": {"xx": 0.008, "yy": 0.008, "zz": 0.008}}],
            "collision_geoms": {"dissipation": 2, "friction": 0.5,
                                "geoms": [{"name": "top", "body": "ball", "shape": "sphere", "radius": 0.1,
                                           "stiffness": E1},
                                          {"name": "base", "body": "ground", "shape": "sphere", "radius": 0.3,
                                           "center": [0, 0, -0.3], "stiffness": E2}]},
            "initial_state": {"joints": {"ball": {"q": [0, 0, 0.1]}}},
            "simulation": {"dt": dt, "integrator": "implicit"}}


@pytest.mark.parametrize("dt", [0.001, 0.01])
def test_a_ball_resting_on_a_ball_sinks_to_the_pairs_hertz_penetration(dt):
    E1, E2 = 1e8, 3e8
    model = lockstep.load(resting_ball(dt, E1, E2))
    assert "pair_contact.top/base.stiffness" in model.parameter_names
    b = lockstep.Batch(model, 3, dtype="float64")
    # The pair's E: its E^(2/3) / 2 is Simbody's k of the two materials.
    np.testing.assert_allclose(b.params["pair_contact.top/base.stiffness"], (2 * hertz_k(E1, E2)) ** 1.5, rtol=1e-14)
    E = np.array([(2 * hertz_k(E1, E2)) ** 1.5, 1e8, 4e8])
    b.params["pair_contact.top/base.stiffness"] = E
    b.step(int(round(3.0 / dt)))
    assert (b.status == 0).all()
    x = 0.1 - np.asarray(b.q)[:, 2]
    R = 0.1 * 0.3 / 0.4
    k = 0.5 * E ** (2 / 3)
    np.testing.assert_allclose(x, (2 * G / (4 / 3 * k * np.sqrt(R * k))) ** (2 / 3), rtol=1e-8)
    np.testing.assert_allclose(np.asarray(b.q)[:, :2], 0, atol=1e-12)  # straight down the line of centres


def head_on(dt: float, dissipation: float) -> dict:
    """Two equal 1 kg balls of radius 0.1 on Translation mobilizers, no gravity: the first at x = -0.3
    moving at 1 m/s towards the second at rest at x = 0.3."""
    ball = {"mobilizer": "translation", "mass": 1.0, "inertia": {"xx": 0.004, "yy": 0.004, "zz": 0.004}}
    return {"gravity": [0, 0, 0],
            "bodies": [dict(ball, name="a"), dict(ball, name="b")],
            "collision_geoms": {"stiffness": 1e7, "dissipation": dissipation, "friction": 0.3,
                                "geoms": [{"name": "a", "body": "a", "shape": "sphere", "radius": 0.1},
                                          {"name": "b", "body": "b", "shape": "sphere", "radius": 0.1}]},
            "initial_state": {"joints": {"a": {"q": [-0.3, 0, 0], "u": [1, 0, 0]}, "b": {"q": [0.3, 0, 0]}}},
            "simulation": {"dt": dt, "integrator": "implicit"}}


@pytest.mark.parametrize("dt", [0.001, 0.01])
def test_a_head_on_collision_keeps_momentum_never_gains_energy_and_passes_it_on(dt):
    """Momentum to 1e-12 at every step (the pair's forces are equal and opposite); the energy, kinetic
    plus Hertz's elastic 2/5 K x^(5/2), never grows in a step; the second ball leaves faster than the
    first. The implicit step is backward Euler's in the contact's stiffness: over the ten steps of
    1 ms the contact lasts, it keeps a restitution of about 0.6 of the elastic 1 (0 at 10 ms, where
    the contact lasts about a step); Hunt and Crossley's dissipation lowers it."""
    k = 0.5 * 1e7 ** (2 / 3)
    K = 4 / 3 * k * np.sqrt(0.05 * k)
    restitution = []
    for c in (0.0, 0.5):
        model = lockstep.load(head_on(dt, c))
        b = lockstep.Batch(model, 1, dtype="float64")
        energy = [0.5]
        for _ in range(int(round(1.0 / dt))):
            b.step(1)
            u = np.asarray(b.u)[0]
            q = np.asarray(b.q)[0]
            assert abs(u[0] + u[3] - 1) < 1e-12 and abs(u[1]) + abs(u[4]) < 1e-12
            x = max(0.0, 0.2 - (q[3] - q[0]))
            assert x < 0.01  # never through each other (a centimetre of 20 cm)
            energy.append(0.5 * (u[0] ** 2 + u[3] ** 2) + 0.4 * K * x ** 2.5)
        assert (b.status == 0).all()
        assert np.all(np.diff(energy) <= 1e-12), np.diff(energy).max()
        restitution.append(u[3] - u[0])
    elastic, damped = restitution
    assert (0.5 < elastic < 1) if dt == 0.001 else (0 < elastic < 0.5), elastic
    assert damped < elastic - (0.02 if dt == 0.001 else 0), (damped, elastic)


def box_positions(b, bodies):
    """Each body's origin in Ground, (worlds, bodies, 3), and its z axis."""
    pose = b.quantity("bodyPose").reshape(b.worlds, bodies, 7)
    w, x, y, z = (pose[:, :, 3 + i] for i in range(4))
    axis = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=-1)
    return pose[:, :, :3], axis


def segment_distance(p1, d1, p2, d2):
    """The distance between segments p1 + s d1 and p2 + t d2, s and t in [-1, 1] (arrays of points and
    half-axes; a zero half-axis is a point): Ericson's clamped nearest points."""
    r = p1 - p2
    a, e = np.sum(d1 * d1, axis=-1), np.sum(d2 * d2, axis=-1)
    b, c, f = np.sum(d1 * d2, axis=-1), np.sum(d1 * r, axis=-1), np.sum(d2 * r, axis=-1)
    denom = a * e - b * b
    safe = lambda x: np.where(x > 1e-12, x, 1.0)  # noqa: E731
    s = np.where(denom > 1e-12 * np.maximum(a * e, 1e-300), np.clip((b * f - c * e) / safe(denom), -1, 1), 0.0)
    t = np.where(e > 1e-12, (b * s + f) / safe(e), 0.0)
    t = np.clip(t, -1, 1)
    s = np.where(a > 1e-12, np.clip((b * t - c) / safe(a), -1, 1), 0.0)
    return np.linalg.norm(p1 + s[..., None] * d1 - p2 - t[..., None] * d2, axis=-1)


def test_random_drops_into_the_box_at_ten_ms_pass_through_nothing():
    """scenes/balls-in-a-box.json: 256 worlds, each with its bodies dropped from its own random
    positions and orientations, 3 s at the scene's 10 ms: no world is flagged, nothing passes through
    a wall or another body at any step, and the heap settles."""
    with open(os.path.join(ROOT, "scenes", "balls-in-a-box.json")) as f:
        scene = json.load(f)
    model = lockstep.load(scene)
    n = 256
    b = lockstep.Batch(model, n, dtype="float64")
    rng = np.random.default_rng(7)
    q = np.array(b.q)
    names = [body["name"] for body in scene["bodies"]]
    for i, body in enumerate(scene["bodies"]):
        quat = rng.normal(size=(n, 4))
        q[:, 7 * i:7 * i + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        origin = np.array(body["X_PF"]["position"])
        # Balls 20 cm apart, then the rods (their ends 13 cm from their centres) 30 cm apart, within
        # the walls at any orientation.
        rod = body["name"].startswith("rod")
        spread = 0.1 if rod else 0.15
        height = 1.6 + 0.3 * (i - 6) if rod else 0.3 + 0.2 * i
        target = np.column_stack([rng.uniform(-spread, spread, n), rng.uniform(-spread, spread, n),
                                  height + rng.uniform(0, 0.05, n)])
        # (p_FM is in F, which X_PF may turn: the rods'.)
        angles = body["X_PF"].get("xyz_angles", [0, 0, 0])
        R = np.eye(3)
        for k, a in enumerate(angles):
            c, s = np.cos(a), np.sin(a)
            Rk = np.eye(3)
            i1, i2 = (k + 1) % 3, (k + 2) % 3
            Rk[i1, i1], Rk[i1, i2], Rk[i2, i1], Rk[i2, i2] = c, -s, s, c
            R = R @ Rk
        q[:, 7 * i + 4:7 * i + 7] = (target - origin) @ R
    b.set_state(q, np.zeros_like(np.array(b.u)))
    radius = {g["name"]: g["radius"] for g in scene["collision_geoms"]["geoms"] if g["shape"] != "plane"}
    half = np.array([0.1 if names[i].startswith("rod") else 0.0 for i in range(len(names))])
    r = np.array([radius[name] for name in names])
    worst_wall = worst_pair = 0.0
    for step in range(300):
        b.step(1)
        pos, axis = box_positions(b, len(names))
        tips = np.concatenate([pos + half[None, :, None] * axis, pos - half[None, :, None] * axis], axis=1)
        reach = np.concatenate([r, r])
        # Each end's depth into the walls and the floor (negative: clear of them).
        depth = np.max(np.concatenate([np.abs(tips[:, :, :2]) + reach[None, :, None] - 0.25,
                                       (reach[None] - tips[:, :, 2])[..., None]], axis=2), axis=2)
        if step == 0:
            assert np.max(depth) < -0.01  # (the drops start clear of the walls and of each other)
        worst_wall = max(worst_wall, np.max(depth / reach[None]))
        final_wall, final_pair = np.max(depth), 0.0
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                d = segment_distance(pos[:, i], half[i] * axis[:, i], pos[:, j], half[j] * axis[:, j])
                worst_pair = max(worst_pair, np.max(r[i] + r[j] - d) / (r[i] + r[j]))
                final_pair = max(final_pair, np.max(r[i] + r[j] - d))
    assert not np.any(np.asarray(b.status)), np.flatnonzero(np.asarray(b.status))
    # Through the impacts (up to 6 m/s, and rods spinning at 50 rad/s: their ends swing 5 cm in a
    # step) no core (a ball's centre, a rod's segment) reaches a wall or another core: nothing passes
    # through (the deepest, 0.72 of a radius into a wall and 0.65 of two radii into another geom, are
    # those of the rods' fast-swinging ends). Settled, each carries its load a fraction of a
    # millimetre in.
    assert worst_wall < 1 and worst_pair < 1, (worst_wall, worst_pair)
    assert final_wall < 1e-3 and final_pair < 1e-3, (final_wall, final_pair)
    u = np.asarray(b.u).reshape(n, len(names), 6)
    speed, spin = np.linalg.norm(u[:, :, 3:], axis=2), np.linalg.norm(u[:, :, :3], axis=2)
    print(f"after 3 s: fastest body {speed.max():.3g} m/s, {spin.max():.3g} rad/s; deepest in a wall "
          f"{worst_wall:.2f} of its radius, into another {worst_pair:.2f} of the two radii")
    # Settled: what still moves rolls on the floor (no rolling resistance: a rod 0.25 m/s at most).
    assert speed.max() < 0.5 and np.mean(speed) < 0.02, (speed.max(), np.mean(speed))


def test_the_pair_step_jacobian_equals_central_differences():
    """Two balls pressed together and sliding across each other at a step of 5 ms: the step's
    Jacobian (the implicit function theorem at the solve's solution) against central differences."""
    scene = head_on(0.005, 0.5)
    scene["initial_state"] = {"joints": {"a": {"q": [-0.0999, 0, 0.002], "u": [0.2, 0.1, -0.3]},
                                         "b": {"q": [0.0999, 0, 0], "u": [-0.1, 0.05, 0.2]}}}
    model = lockstep.load(scene)
    b = lockstep.Batch(model, 1, dtype="float64")
    q0, u0 = np.array(b.q[0]), np.array(b.u[0])
    A, _, _ = b.linearize()
    nu = model.nu
    h = 1e-7
    c = lockstep.Batch(model, 4 * nu, dtype="float64")
    qs, us = [], []
    for k in range(2 * nu):
        for sign in (1, -1):
            q, u = q0.copy(), u0.copy()
            (q if k < nu else u)[k % nu] += sign * h
            qs.append(q)
            us.append(u)
    c.set_state(np.array(qs), np.array(us))
    c.step(1)
    assert not np.any(np.asarray(c.status))
    x = np.concatenate([np.asarray(c.q), np.asarray(c.u)], axis=1)
    D = ((x[0::2] - x[1::2]) / (2 * h)).T
    assert np.abs(A[0]).max() > 1.5  # the contact acts
    np.testing.assert_allclose(A[0], D, atol=1e-5 * np.abs(D).max())


def test_a_world_alone_steps_as_the_same_world_in_a_batch():
    with open(os.path.join(ROOT, "scenes", "balls-in-a-box.json")) as f:
        model = lockstep.load(json.load(f))
    b = lockstep.Batch(model, 5, dtype="float64")
    b.params["pair_contact.ball0/ball1.stiffness"] = [1e7, 2e7, 3e7, 4e7, 5e7]
    b.step(120)
    one = lockstep.Batch(model, 1, dtype="float64")
    one.params["pair_contact.ball0/ball1.stiffness"] = 4e7
    one.step(120)
    np.testing.assert_array_equal(np.asarray(one.q)[0], np.asarray(b.q)[3])
    np.testing.assert_array_equal(np.asarray(one.u)[0], np.asarray(b.u)[3])


@pytest.mark.parametrize("change, message", [
    (lambda s: s.pop("simulation"), "collision_geoms: contacts between bodies are the compliant law's"),
    (lambda s: s["collision_geoms"]["geoms"][0].update(shape="box"),
     r"shape: must be \"sphere\", \"capsule\" or \"plane\""),
    (lambda s: s["collision_geoms"]["geoms"][1].update(body="ball", shape="plane"), "must be ground"),
    (lambda s: s["collision_geoms"]["geoms"][1].update(name="top"), "is already used"),
    (lambda s: s["collision_geoms"]["geoms"][0].update(radius=-1), r"geoms\[0\].radius: must be > 0"),
    (lambda s: s["collision_geoms"]["geoms"][1].update({"shape": "capsule", "from": [0, 0, 0], "to": [0, 0, 1]}),
     "center: does not apply to a capsule"),
    (lambda s: s["collision_geoms"]["geoms"][0].update({"shape": "capsule", "from": [0, 0, 0], "to": [0, 0, 0]}),
     r"geoms\[0\].to: must differ"),
    (lambda s: s["collision_geoms"].update(stiction_velocity=0), "stiction_velocity: must be > 0"),
    (lambda s: s["collision_geoms"]["geoms"][0].update(body="nobody"), "nobody"),
    (lambda s: s["collision_geoms"]["geoms"][1].update(radius=1e11),
     r"geoms\[1\].radius: is beyond 1e6 m \(1e\+11\): contact distances there lose their precision"),
    (lambda s: s["collision_geoms"]["geoms"][1].update(center=[0, 2e6, 0]), r"geoms\[1\].center: is beyond 1e6 m"),
    (lambda s: s["collision_geoms"]["geoms"][0].update({"shape": "capsule", "from": [0, 0, -3e6], "to": [0, 0, 0]}),
     r"geoms\[0\].from: is beyond 1e6 m"),
    (lambda s: s["collision_geoms"]["geoms"].append({"body": "ground", "shape": "plane", "point": [0, 0, -1e7]}),
     r"geoms\[2\].point: is beyond 1e6 m"),
])
def test_bad_collision_geoms_are_refused_naming_the_field(change, message):
    scene = resting_ball(0.01, 1e8, 1e8)
    change(scene)
    with pytest.raises(Exception, match=message):
        lockstep.load(scene)


def spinning_rod(dt: float) -> dict:
    """A free rod (a capsule of radius 3 cm between z = -0.1 and 0.1; 0.3 kg, I 1.1e-3, 1.1e-3, 1.35e-4)
    spinning fast about its axis and slowly across it, in no gravity, far above a floor (a collision
    geom, so that the model steps under the compliant law)."""
    return {"gravity": [0, 0, 0],
            "bodies": [{"name": "rod", "mobilizer": "free", "X_PF": {"position": [0, 0, 5]}, "mass": 0.3,
                        "inertia": {"xx": 1.1e-3, "yy": 1.1e-3, "zz": 1.35e-4}}],
            "collision_geoms": {"geoms": [{"name": "floor", "body": "ground", "shape": "plane"},
                                          {"name": "rod", "body": "rod", "shape": "capsule", "from": [0, 0, -0.1],
                                           "to": [0, 0, 0.1], "radius": 0.03}]},
            "initial_state": {"joints": {"rod": {"u": [3, -2, 150, 0.1, 0, 0]}}},
            "simulation": {"dt": dt, "integrator": "implicit"}}


@pytest.mark.parametrize("dt", [0.001, 0.01])
def test_a_tumbling_rod_keeps_its_energy_and_angular_momentum(dt):
    """The implicit step takes a free body's gyroscopic torque linearly implicitly (Kahan's midpoint):
    a rod spinning at 150 rad/s about its axis and tumbling slowly keeps its kinetic energy and the
    magnitude of its angular momentum to 1e-9 over 10 s, where semi-implicit Euler's explicit term
    gains energy in every step and spins the rod up without bound at 10 ms."""
    model = lockstep.load(spinning_rod(dt))
    b = lockstep.Batch(model, 1, dtype="float64")
    I = np.diag([1.1e-3, 1.1e-3, 1.35e-4])

    def invariants():
        pose = b.quantity("bodyPose")[0]
        w, x, y, z = pose[3:7]
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        u = np.asarray(b.u)[0]
        omega, v = u[:3], u[3:]
        IG = R @ I @ R.T
        return 0.5 * omega @ IG @ omega + 0.5 * 0.3 * v @ v, np.linalg.norm(IG @ omega), 0.3 * v

    e0, l0, p0 = invariants()
    for _ in range(10):
        b.step(int(round(1.0 / dt)))
        e, l, p = invariants()
        assert abs(e - e0) < 1e-9 * e0 and abs(l - l0) < 1e-9 * l0, (e / e0 - 1, l / l0 - 1)
        np.testing.assert_allclose(p, p0, atol=1e-13)
    assert (b.status == 0).all()


def test_an_mjcf_robot_under_the_compliant_law_collides_its_limbs_in_the_implicit_step():
    """Gymnasium's humanoid.xml (every geom a sphere or a capsule, contype and conaffinity 1) under
    the compliant law: the implicit step has a pair contact for every pair MuJoCo's rules let touch
    (the same pairs as under MuJoCo's law); an explicit step warns that the limbs pass through each
    other. Falling with random torques for 2 s at 5 ms, no world is flagged."""
    from lockstep.mujoco_task import _asset
    xml = _asset("humanoid.xml")
    mujoco_law = lockstep.load({"mjcf": {"path": xml, "contact_law": "mujoco"}})
    pairs = {p.split(".")[1] for p in mujoco_law.parameter_names if p.startswith("pair_contact.")}
    assert len(pairs) > 50
    model = lockstep.load({"mjcf": {"path": xml, "contact_law": "compliant"},
                           "simulation": {"integrator": "implicit", "dt": 0.005}})
    assert {p.split(".")[1] for p in model.parameter_names if p.startswith("pair_contact.")} == pairs
    explicit = lockstep.load({"mjcf": {"path": xml, "contact_law": "compliant"}})
    assert not any(p.startswith("pair_contact.") for p in explicit.parameter_names)
    assert any("pass through each other" in w for w in explicit.warnings)
    b = lockstep.Batch(model, 16, dtype="float64")
    rng = np.random.default_rng(3)
    for _ in range(20):
        b.field("tau")[:] = rng.uniform(-0.4, 0.4, size=(16, model.nu))
        b.step(20)
    assert not np.any(np.asarray(b.status)), np.asarray(b.status)
    b.evaluate()
    active = np.array(b.softContact).reshape(16, -1, 20)[:, :, 0] > 0.5
    assert active.any()


def test_collision_geoms_are_bounded_before_the_model_is_built():
    """Every two geoms are tested for contact: a file cannot make the model grow with the square of
    its size (4,096 geoms, 20,000 contacts at most; docs/scene-format.md, "Limits")."""
    scene = resting_ball(0.01, 1e8, 1e8)
    scene["collision_geoms"]["geoms"] = [{"body": "ground", "shape": "sphere", "radius": 0.1}] * 4097
    with pytest.raises(Exception, match="has 4097 geoms, over the limit of 4096"):
        lockstep.load(scene)
    ball = {"mobilizer": "translation", "mass": 1.0, "inertia": {"xx": 0.004, "yy": 0.004, "zz": 0.004}}
    scene["bodies"] = [dict(ball, name=f"b{k}") for k in range(3)]
    scene["initial_state"] = {}
    scene["collision_geoms"]["geoms"] = [{"body": f"b{k % 3}", "shape": "sphere", "radius": 0.01}
                                         for k in range(300)]
    with pytest.raises(Exception, match="make more than 20000 contacts"):
        lockstep.load(scene)
    scene["collision_geoms"]["exclude"] = [["b0", "b1"]]
    assert len(lockstep.load(scene).parameter_names) > 0  # 2 x 100 x 100 pairs: within the limit


def test_an_mjcf_geom_that_touches_only_other_bodies_takes_its_own_material(tmp_path):
    """Two free capsules whose contype and conaffinity meet each other's but not the floor's: the
    scene's per-geom material (`geoms`) applies to them (their pair's E is pairMaterial's)."""
    xml = tmp_path / "two.xml"
    xml.write_text('''<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
      <body pos="0 0 1"><freejoint/><geom name="a" type="capsule" size=".05 .2" contype="2" conaffinity="2"/></body>
      <body pos="0 0 2"><freejoint/><geom name="b" type="capsule" size=".05 .2" contype="2" conaffinity="2"/></body>
      </worldbody></mujoco>''')
    scene = {"mjcf": {"path": str(xml), "contact_law": "compliant", "contact": {"stiffness": 1e6},
                      "geoms": {"b": {"stiffness": 8e6}}},
             "simulation": {"integrator": "implicit", "dt": 0.01}}
    model = lockstep.load(scene)
    b = lockstep.Batch(model, 1, dtype="float64")
    k = hertz_k(1e6, 8e6)
    np.testing.assert_allclose(b.params["pair_contact.a/b.stiffness"], (2 * k) ** 1.5, rtol=1e-14)
    scene["mjcf"]["geoms"] = {"c": {"stiffness": 8e6}}
    with pytest.raises(Exception, match="no geom named 'c' touches the ground or another body"):
        lockstep.load(scene)


def test_far_pairs_are_skipped_only_where_no_lane_could_touch_within_the_step():
    """The compliant law's broad phase (softPairOutOfReach) skips a pair whose bounding spheres stay
    apart whatever the bodies do within the step. A ball shot at 60 m/s from 0.4 m away, at 10 ms
    steps, is stopped by the other (the pair's reach, not its distance, brings it into the solve);
    a slow world steps alike alone (its pack skips the pair) and beside the fast one (its pack does
    not), bit for bit; and far apart, every value of the pair's point reads 0."""
    speeds = np.array([1.0, 60.0, 0.0, 30.0])
    model = lockstep.load(head_on(0.01, 0.5))
    b = lockstep.Batch(model, len(speeds), dtype="float64")
    q, u = np.array(b.q), np.zeros_like(np.asarray(b.u))
    u[:, 0] = speeds
    b.set_state(q, u)
    gap = []
    for _ in range(60):
        b.step(1)
        x = np.asarray(b.q)
        gap.append(x[:, 3] - x[:, 0])
    gap = np.array(gap)
    assert (np.asarray(b.status) == 0).all()
    assert gap[:, [1, 3]].min() > 0.1, gap[:, [1, 3]].min()  # centres 0.2 apart at touching: never half as deep
    np.testing.assert_allclose(np.asarray(b.u)[[1, 3], 0] + np.asarray(b.u)[[1, 3], 3], speeds[[1, 3]], rtol=1e-12)
    assert (np.asarray(b.u)[[1, 3], 3] > 0.499 * speeds[[1, 3]]).all()  # at least half (restitution 0 at 10 ms)
    slow = lockstep.Batch(model, 1, dtype="float64")
    slow.set_state(q[:1], u[:1])
    slow.step(60)
    np.testing.assert_array_equal(np.asarray(slow.q)[0], np.asarray(b.q)[0])
    np.testing.assert_array_equal(np.asarray(slow.u)[0], np.asarray(b.u)[0])
    # Far apart (the fast worlds' balls flew off), at rest: the point reads 0 everywhere.
    names = model.field_components("softContact")
    pair = np.array(["a/b" in c for c in names])
    assert pair.sum() > 0
    q = np.zeros_like(q)
    q[:, 0], q[:, 3] = -1.0, 1.0
    b.set_state(q, np.zeros_like(u))
    b.evaluate()
    assert np.all(np.asarray(b.softContact)[:, pair] == 0)


def test_a_compliant_force_that_overflows_flags_its_world_and_the_others_go_on():
    """Balls of radii 20 and 60 m of stiffness 1e308 give a Hertz constant beyond double's range: that
    world is flagged by the contact solve (its forces are not finite), its neighbours step on."""
    scene = resting_ball(0.01, 1e8, 3e8)
    scene["collision_geoms"]["geoms"][0]["radius"] = 20.0
    scene["collision_geoms"]["geoms"][1].update(radius=60.0, center=[0, 0, -60.0])
    scene["initial_state"] = {"joints": {"ball": {"q": [0, 0, 20.0]}}}
    b = lockstep.Batch(lockstep.load(scene), 3, dtype="float64")
    E = np.array(b.params["pair_contact.top/base.stiffness"])
    E[1] = 1e308
    b.params["pair_contact.top/base.stiffness"] = E
    b.step(100)
    assert list(np.asarray(b.status) != 0) == [False, True, False]
    assert "forces were not finite" in b.describe_status(1)
    assert np.all(np.abs(np.asarray(b.q)[[0, 2], 2] - 20.0) < 1e-3)


def two_trees(order):
    """Two free balls a and b dropped onto the floor, a capsule c on a pin under a; the bodies listed
    in `order` (a before c)."""
    ball = {"mass": 1.0, "inertia": {"xx": 0.004, "yy": 0.004, "zz": 0.004}}
    bodies = {"a": dict(ball, name="a", mobilizer="free", X_PF={"position": [0, 0, 0.3]}),
              "b": dict(ball, name="b", mobilizer="free", X_PF={"position": [0.05, 0.02, 0.6]}),
              "c": dict(ball, name="c", parent="a", mobilizer="pin", X_PF={"position": [0, 0, 0.15]})}
    return {"gravity": [0, 0, -9.81], "bodies": [bodies[n] for n in order],
            "collision_geoms": {"stiffness": 1e7, "dissipation": 1, "friction": 0.5, "geoms": [
                {"name": "floor", "body": "ground", "shape": "plane"},
                {"name": "a", "body": "a", "shape": "sphere", "radius": 0.1},
                {"name": "b", "body": "b", "shape": "sphere", "radius": 0.1},
                {"name": "c", "body": "c", "shape": "capsule", "from": [0, 0, 0], "to": [0.1, 0, 0.1],
                 "radius": 0.03}]},
            "simulation": {"dt": 0.01, "integrator": "implicit"}}


def test_trees_whose_bodies_interleave_step_as_when_listed_one_after_the_other():
    """The mass matrix is zero between two trees, and the solve keeps to each tree's block of speeds
    (crba.h, forEachSpeedInTree). With the bodies listed a, b, c (c a's child), tree a's speeds hold
    b's among them; listed a, c, b, they follow one another. Both step alike, to rounding, through
    the drop onto the floor and each other."""
    steps, worlds = 40, 4
    rng = np.random.default_rng(5)
    u0 = rng.normal(0, 0.5, (worlds, 13))  # speeds in the order a (6), b (6), c (1)
    finals = []
    for order in (["a", "b", "c"], ["a", "c", "b"]):
        batch = lockstep.Batch(lockstep.load(two_trees(order)), worlds, dtype="float64")
        u = u0 if order[1] == "b" else np.concatenate([u0[:, :6], u0[:, 12:], u0[:, 6:12]], axis=1)
        batch.set_state(np.array(batch.q), u)
        batch.step(steps)
        assert (np.asarray(batch.status) == 0).all()
        q = np.asarray(batch.q)  # q in the order a (7), then the others
        finals.append(q if order[1] == "b" else np.concatenate([q[:, :7], q[:, 8:], q[:, 7:8]], axis=1))
    z = finals[0][:, [6, 13]] + [0.3, 0.6]  # the balls' heights: on the floor (radius 0.1) or above
    assert (z > 0.09).all() and (z < 0.3).all(), z  # fallen, through nothing
    np.testing.assert_allclose(finals[0], finals[1], rtol=0, atol=1e-9)


def test_a_ball_hovering_at_rest_within_a_steps_fall_is_caught_in_that_step():
    """A ball at rest 0.5 mm above another, at 10 ms: gravity alone closes the gap within the step
    (h^2 g = 0.98 mm), so the reach test's acceleration term, and the broad phase's bound on it,
    bring the pair into the first step's solve: the ball is stopped there, not a step later. Alone
    (its pack skips what it may) and beside a fast world (its pack skips nothing) alike, bit for
    bit."""
    scene = resting_ball(0.01, 1e8, 3e8)
    scene["initial_state"] = {"joints": {"ball": {"q": [0, 0, 0.1005]}}}
    model = lockstep.load(scene)
    alone = lockstep.Batch(model, 1, dtype="float64")
    alone.step(1)
    assert np.asarray(alone.u)[0, 2] > -0.8 * G * 0.01, np.asarray(alone.u)[0]  # free fall: -G h (-0.055 here)
    batch = lockstep.Batch(model, 4, dtype="float64")
    q, u = np.array(batch.q), np.zeros_like(np.asarray(batch.u))
    q[1:, 2] = 2.0
    u[1:, 2] = -300.0  # 1.5 m from the base at 300 m/s: within a step's reach
    batch.set_state(q, u)
    batch.step(1)
    np.testing.assert_array_equal(np.asarray(batch.q)[0], np.asarray(alone.q)[0])
    np.testing.assert_array_equal(np.asarray(batch.u)[0], np.asarray(alone.u)[0])
