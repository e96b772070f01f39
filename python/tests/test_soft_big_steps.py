"""MuJoCo's law at big steps (issue 35): scenes with known answers stepped at 1, 5 and 10 ms with the
file's RK4, against closed forms and against PyPI's MuJoCo 4.0 stepping the same file (mujoco_twin.Twin:
its Newton solver to convergence), whole rollouts long:
- a box dropped onto the floor comes to rest and stays: no creep, no drift, its weight on the floor;
- a capsule across a slope rolls down without slipping at g sin(a) / (1 + I / (m r^2));
- a box on a slope steeper than its friction allows slides down at g (sin(a) - mu cos(a)), and on a
  gentler one it stays.
Each with MuJoCo's two friction cones: its default pyramid and its elliptic cone."""
import numpy as np
import pytest

from mujoco_twin import _SOFT_WIDTH, Twin, mujoco

STEPS_MS = (1, 5, 10)
CONES = ("pyramidal", "elliptic")
G = 9.81


def scene(body: str, dt_ms: int, slope_deg: float = 0.0, friction: float = 1.0, cone: str = "pyramidal") -> str:
    """A free body over a floor tilted by slope_deg about y (downhill along +x), at dt_ms."""
    return f"""<mujoco><compiler angle="degree"/>
  <option timestep="{dt_ms / 1000}" integrator="RK4" gravity="0 0 -{G}" cone="{cone}"/>
  <worldbody>
    <geom name="floor" type="plane" size="10 10 .1" euler="0 {slope_deg} 0" friction="{friction}"/>
    <body name="body" pos="0 0 1"><joint name="root" type="free"/>{body}</body>
  </worldbody></mujoco>"""


def rollout(twin, qpos, seconds, qvel=None):
    """Both from qpos, at rest or at qvel, for `seconds`: Lockstep's qpos, qvel (MuJoCo's coordinates)
    at every step, and the largest difference from MuJoCo's (qpos, and qvel relative to
    max(1, |qvel|))."""
    twin.set_state(qpos, np.zeros(twin.m.nv) if qvel is None else qvel, np.zeros(twin.m.nu))
    n = int(round(seconds / twin.m.opt.timestep))
    ours, worst = [], 0.0
    for _ in range(n):
        twin.batch.step(1)
        mujoco.mj_step(twin.m, twin.d)
        assert twin.batch.status[0] == 0, twin.batch.describe_status(0)
        q, v = np.array(twin.batch.mujocoQpos[0]), np.array(twin.batch.mujocoQvel[0])
        worst = max(worst, np.abs(q - twin.d.qpos).max(), np.abs(v - twin.d.qvel).max() / max(1.0, np.abs(v).max()))
        ours.append((q, v))
    return ours, worst


def downhill(slope_deg):
    a = np.radians(slope_deg)
    return np.array([np.cos(a), 0.0, -np.sin(a)])  # along the floor, in the world


@pytest.mark.parametrize("cone", CONES)
@pytest.mark.parametrize("dt_ms", STEPS_MS)
def test_a_dropped_box_comes_to_rest_without_creep(dt_ms, cone, tmp_path):
    twin = Twin(tmp_path, scene('<geom type="box" size=".2 .15 .1" mass="2"/>', dt_ms, cone=cone), law="mujoco")
    qpos = np.array([0, 0, 0.12, np.cos(0.05), np.sin(0.05), 0, 0])  # 2 cm up, tilted 5.7 degrees
    states, worst = rollout(twin, qpos, 3.0)
    assert worst < 1e-8, f"{dt_ms} ms: Lockstep and MuJoCo 4.0 part by {worst:.1e}"
    (q1, v1), (q2, v2) = states[int(2.0 / twin.m.opt.timestep)], states[-1]
    assert np.abs(v2).max() < 1e-6, v2  # at rest
    assert np.abs(q2[:2] - q1[:2]).max() < 1e-7  # no creep over the last second
    assert 0.09 < q2[2] < 0.1  # on its face, pressed into the floor by less than a centimetre
    # Its weight on the floor: the contact forces' normal parts sum to m g.
    twin.batch.evaluate()
    contacts = np.array(twin.batch.softContact[0]).reshape(-1, _SOFT_WIDTH)
    assert np.sum(contacts[:, 8]) == pytest.approx(2 * G, rel=1e-6)
    # The same forces in Ground (what the viewer draws): straight up, m g in all.
    assert np.sum(contacts[:, 11:14], axis=0) == pytest.approx([0, 0, 2 * G], abs=1e-6 * 2 * G)


@pytest.mark.parametrize("cone", CONES)
@pytest.mark.parametrize("dt_ms", STEPS_MS)
def test_a_capsule_rolls_down_a_slope_at_the_rolling_acceleration(dt_ms, cone, tmp_path):
    slope, r, half = 10.0, 0.05, 0.2
    body = f'<geom type="capsule" size="{r} {half}" euler="90 0 0" mass="1"/>'  # its axis along y
    twin = Twin(tmp_path, scene(body, dt_ms, slope, cone=cone), law="mujoco")
    n = -np.cross(downhill(slope), [0, 1, 0])  # the floor's normal
    # Lying across the slope, 0.5 mm into it (a contact exactly at distance 0 is a tie: MuJoCo keeps
    # one whose distance rounds below 0 and drops one at 0, and so does Lockstep, rounding otherwise).
    qpos = np.concatenate([(r - 5e-4) * n, [1, 0, 0, 0]])
    states, worst = rollout(twin, qpos, 1.0)
    assert worst < 1e-8, f"{dt_ms} ms: Lockstep and MuJoCo 4.0 part by {worst:.1e}"
    mass, axial = twin.m.body_mass[1], twin.m.body_inertia[1].min()  # about its axis: the smallest
    expected = G * np.sin(np.radians(slope)) / (1 + axial / (mass * r * r))
    (_, v_half), (_, v_end) = states[int(0.5 / twin.m.opt.timestep) - 1], states[-1]
    along = downhill(slope)
    acceleration = (v_end[:3] - v_half[:3]) @ along / 0.5
    assert acceleration == pytest.approx(expected, rel=0.01), (acceleration, expected)
    assert abs(v_end[1]) < 1e-9  # straight down the slope
    spin = v_end[3:6]  # in the body frame: about its own axis, rolling (v = w r)
    assert np.linalg.norm(spin) * r == pytest.approx(v_end[:3] @ along, rel=0.02)


@pytest.mark.parametrize("cone", CONES)
@pytest.mark.parametrize("dt_ms", STEPS_MS)
@pytest.mark.parametrize("slope,friction", [(30.0, 0.3), (10.0, 0.5)])
def test_a_box_on_a_slope_slides_as_coulomb_friction_says(dt_ms, slope, friction, cone, tmp_path):
    box = f'<geom type="box" size=".1 .1 .05" mass="1" friction="{friction}"/>'  # MuJoCo takes the larger
    twin = Twin(tmp_path, scene(box, dt_ms, slope, friction, cone), law="mujoco")
    a = np.radians(slope)
    n = np.array([np.sin(a), 0.0, np.cos(a)])
    qpos = np.concatenate([(0.05 - 5e-4) * n, [np.cos(a / 2), 0, np.sin(a / 2), 0]])  # flat on it, 0.5 mm in
    states, worst = rollout(twin, qpos, 1.0)
    assert worst < 1e-8, f"{dt_ms} ms: Lockstep and MuJoCo 4.0 part by {worst:.1e}"
    (_, v_half), (_, v_end) = states[int(0.5 / twin.m.opt.timestep) - 1], states[-1]
    acceleration = (v_end[:3] - v_half[:3]) @ downhill(slope) / 0.5
    sliding = np.tan(a) > friction
    # MuJoCo's soft contacts (whose regularization grows with the step: timeconst at least 2 dt) slide
    # within 4% of Coulomb's law (measured: 0.1%, 1.6% and 2.8% off at 1, 5 and 10 ms), and hold (a creep below 1 mm/s)
    # where friction holds.
    if sliding:
        coulomb = G * (np.sin(a) - friction * np.cos(a))
        print(f"{dt_ms} ms, {cone}: sliding at {acceleration:.4f} m/s^2, Coulomb {coulomb:.4f}")
        assert acceleration == pytest.approx(coulomb, rel=0.04)
    else:
        assert abs(v_end[:3] @ downhill(slope)) < 1e-3


@pytest.mark.parametrize("dt_ms", STEPS_MS)
def test_a_sphere_hitting_another_keeps_the_momentum_and_never_gains_energy(dt_ms, tmp_path):
    """Two free spheres without gravity, frictionless (condim 1), the lighter hitting the heavier off
    centre at 2 m/s (a pair contact): the total momentum (to round-off) and the angular momentum
    about the origin (to RK4's error) stay as they were (the contact's forces are equal and
    opposite, along the line of centres), no sphere spins, the kinetic energy never grows and ends
    below its start (the law's damping), the spheres touch and then part, and the rollout is
    MuJoCo 4.0's."""
    masses, radii = np.array([1.0, 3.0]), (0.1, 0.15)
    twin = Twin(tmp_path, f"""<mujoco>
  <option timestep="{dt_ms / 1000}" integrator="RK4" gravity="0 0 0"/>
  <worldbody>
    <body name="a"><joint type="free"/><geom type="sphere" size="{radii[0]}" mass="{masses[0]}" condim="1"/></body>
    <body name="b"><joint type="free"/><geom type="sphere" size="{radii[1]}" mass="{masses[1]}" condim="1"/></body>
  </worldbody></mujoco>""", law="mujoco")
    qpos = np.array([-0.6, 0.08, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], dtype=np.float64)
    qvel = np.zeros(12)
    qvel[0] = 2.0

    def momenta(q, v):
        x, lin, spin = q.reshape(2, 7)[:, :3], v.reshape(2, 6)[:, :3], v.reshape(2, 6)[:, 3:]
        return ((masses[:, None] * lin).sum(0), (masses[:, None] * np.cross(x, lin)).sum(0),
                0.5 * (masses * (lin ** 2).sum(1)).sum(), spin)

    def gap(q):  # between the spheres' surfaces
        x = q.reshape(2, 7)[:, :3]
        return np.linalg.norm(x[1] - x[0]) - sum(radii)

    p0, l0, e0, _ = momenta(qpos, qvel)
    states, worst = rollout(twin, qpos, 0.8, qvel)
    drift, touched = 0.0, 0
    for q, v in states:
        p, l, e, spin = momenta(q, v)
        # RK4 keeps a linear invariant (the momentum) to round-off, a quadratic one (the angular
        # momentum) to its error.
        assert np.abs(p - p0).max() < 1e-12 and np.abs(l - l0).max() < 1e-4 * np.abs(l0).max(), (p - p0, l - l0)
        drift = max(drift, np.abs(l - l0).max() / np.abs(l0).max())
        assert np.abs(spin).max() < 1e-12
        assert e <= e0 * (1 + 1e-12)
        touched += gap(q) < 0
    (q_end, v_end) = states[-1]
    assert touched > 0 and gap(q_end) > 0  # hit, then parted
    e_end = momenta(q_end, v_end)[2]
    assert e_end < 0.99 * e0
    assert worst < 1e-8, f"{dt_ms} ms: Lockstep and MuJoCo 4.0 part by {worst:.1e}"
    print(f"{dt_ms} ms: kinetic energy kept {e_end / e0:.3f}; in contact for {touched} steps; angular "
          f"momentum drift {drift:.1e} of its size; from MuJoCo's rollout {worst:.1e}")
