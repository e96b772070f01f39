"""The compliant law's implicit step from Python (docs/contact-laws.md): a scene asking for
"integrator": "implicit" steps its ground contacts and joint stops as convex constraints at its dt;
their parameters are per-world by name; a step of another size, or RK4, is refused naming the
constraint."""
import numpy as np
import pytest

import lockstep

G = 9.81


def scene(dt: float) -> dict:
    """A 2 kg ball of radius 0.1 on a Translation mobilizer, set on the floor, and a pendulum falling
    onto its stop at -0.5 rad, both under the implicit step at dt."""
    return {"gravity": [0, 0, -G],
            "bodies": [{"name": "ball", "mobilizer": "translation", "mass": 2.0,
                        "inertia": {"xx": 0.008, "yy": 0.008, "zz": 0.008}},
                       {"name": "rod", "mobilizer": "pin", "X_PF": {"xyz_angles": [1.5707963267948966, 0, 0]},
                        "mass": 1.0, "com": [0.5, 0, 0], "inertia": {"xx": 1e-4, "yy": 1e-4, "zz": 1e-4}}],
            "ground": {"stiffness": 1e8, "dissipation": 2, "static_friction": 0.5, "dynamic_friction": 0.5,
                       "transition_velocity": 1e-4, "contact_spheres": [{"body": "ball", "radius": 0.1}]},
            "limits": {"stiffness": 200, "dissipation": 0.5,
                       "stops": [{"coordinate": "rod", "lower": -0.5, "upper": 10}]},
            "initial_state": {"joints": {"ball": {"q": [0, 0, 0.1]}, "rod": {"q": 0}}},
            "simulation": {"dt": dt, "integrator": "implicit"}}


def hertz_penetration(E: np.ndarray, R: float, weight: float) -> np.ndarray:
    k = 0.5 * E ** (2 / 3)
    return (weight / (4 / 3 * k * np.sqrt(R * k))) ** (2 / 3)


@pytest.mark.parametrize("dt", [0.001, 0.005, 0.01])
def test_ball_and_stop_settle_where_the_law_carries_their_weight(dt):
    model = lockstep.load(scene(dt))
    assert model.integrator == "euler" and model.dt == dt
    b = lockstep.Batch(model, 3, dtype="float64")
    E = np.array([1e8, 2e8, 4e8])
    b.params["plane_contact.ball.stiffness"] = E
    b.step(int(round(4.0 / dt)))
    assert (b.status == 0).all()
    q = np.asarray(b.q)
    np.testing.assert_allclose(0.1 - q[:, 2], hertz_penetration(E, 0.1, 2 * G), rtol=1e-8)
    # The stop: k x = m g l cos(q) at rest, x = -0.5 - q (to 1e-6: at 1 ms its last swing has not
    # quite died out in 4 s).
    x = -0.5 - q[:, 3]
    np.testing.assert_allclose(200 * x, G * 0.5 * np.cos(q[:, 3]), rtol=1e-6)


def test_a_step_other_than_the_laws_is_refused_naming_the_constraint():
    model = lockstep.load(scene(0.01))
    b = lockstep.Batch(model, 1, dtype="float64")
    with pytest.raises(ValueError, match="plane contact 'ball' is under the compliant law's implicit step of 0.01"):
        b.step(1, dt=0.005)
    with pytest.raises(ValueError, match="semi-implicit Euler"):
        b.step(1, integrator="rk4")
    with pytest.raises(ValueError, match="stiction_velocity"):
        b.params["plane_contact.ball.stiction_velocity"] = 0.0
    b.step(1)
    assert b.status[0] == 0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dt", [0.001, 0.01])
def test_stops_pressed_far_in_push_out_without_a_failed_solve(dtype, dt):
    """Gymnasium's ant.xml at MuJoCo's qpos0 (its ankles 0.52 rad past their range) under the implicit
    law: the stops push the ankles out into the range, and no solve fails. In float the stops'
    elastic torque (5e3 N m) rounds the gradient above 1e-5 of the few N m they give while the ankles
    leave at the dissipation's speed: the tolerance counts that elastic force too."""
    from lockstep.mujoco_task import _asset
    xml = _asset("ant.xml")
    model = lockstep.load({"name": "ant", "mjcf": {"path": xml, "contact_law": "compliant"},
                           "simulation": {"integrator": "implicit", "dt": dt}})
    b = lockstep.Batch(model, 4, dtype=dtype)
    ankles = [model.coordinate_names.index(f"ankle_{k}") for k in range(1, 5)]
    assert np.all(np.abs(b.quantity("q")[:, ankles]) < 1e-12)
    steps = int(round(1.0 / dt))
    for _ in range(steps // 10):
        b.step(10, dt)
        assert np.all(b.quantity("status") == 0)
    inside = np.abs(b.quantity("q")[:, ankles])
    assert np.all(inside > 0.52 - 0.05), inside  # (the lower ends at +-30 degrees, minus the stop's give)
