"""Exact derivatives from Python (Batch.linearize, docs/derivatives.md): d udot / d (q, u, tau) against
Pinocchio's analytic ABA derivatives on three robots, the step's Jacobians against central differences,
the views' shapes, and a differentiable rollout in PyTorch against torch.autograd.gradcheck."""
import os

import numpy as np
import pytest

import lockstep

from conftest import ROOT, scene

MODELS = os.path.join(ROOT, "models")


def _without_damping_limits_or_stops(batch):
    """Joint damping, effort limits and joint stops off: Pinocchio's ABA has none of them."""
    for name in batch.model.parameter_names:
        if name.startswith("damping."):
            batch.params[name] = 0.0
        elif name.startswith("effort_limit."):
            batch.params[name] = np.inf
        elif name.startswith("stop.") and name.endswith(".stiffness"):
            batch.params[name] = 0.0


@pytest.mark.parametrize("robot", ["panda.urdf", "ur5_robot.urdf", "solo12.urdf"])
def test_evaluation_derivatives_equal_pinocchios_aba_derivatives(robot):
    pin = pytest.importorskip("pinocchio")
    path = os.path.join(MODELS, robot)
    model = lockstep.load(path)
    worlds = 4
    b = lockstep.Batch(model, worlds, dtype="float64")
    _without_damping_limits_or_stops(b)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    assert pm.nq == model.nq == pm.nv == model.nu
    # Lockstep's coordinates by name in Pinocchio's order (each of these robots has one per joint).
    names = [n for n in pm.names[1:]]
    order = [model.coordinate_names.index(n) for n in names]
    rng = np.random.default_rng(7)
    lo, hi = pm.lowerPositionLimit, pm.upperPositionLimit
    q = np.array([lo + (hi - lo) * rng.uniform(0.2, 0.8, size=pm.nq) for _ in range(worlds)])
    u = rng.uniform(-1, 1, size=(worlds, pm.nv))
    tau = rng.uniform(-2, 2, size=(worlds, pm.nv))
    inv = np.argsort(order)  # Pinocchio's index of each Lockstep coordinate
    b.set_state(q[:, inv], u[:, inv])
    b.field("tau")[:] = tau[:, inv]
    b.params["gravity.z"] = -9.81
    b.params["gravity.x"] = 0.0
    b.params["gravity.y"] = 0.0
    dx, dtau, _ = b.linearize_evaluation()
    assert dx.shape == (worlds, model.nu, 2 * model.nu) and dtau.shape == (worlds, model.nu, model.nu)
    nu = model.nu
    for w in range(worlds):
        pin.computeABADerivatives(pm, pd, q[w], u[w], tau[w])
        ours_q = dx[w][np.ix_(order, order)]
        ours_u = dx[w][:, nu:][np.ix_(order, order)]
        ours_tau = dtau[w][np.ix_(order, order)]
        for ours, theirs, what in ((ours_q, pd.ddq_dq, "dq"), (ours_u, pd.ddq_dv, "du"), (ours_tau, pd.Minv, "dtau")):
            theirs = np.array(theirs)
            if what == "dtau":
                theirs = np.triu(theirs) + np.triu(theirs, 1).T  # Pinocchio fills the upper triangle of Minv
            scale = np.abs(theirs).max()
            err = np.abs(ours - theirs).max() / scale
            assert err < 1e-10, f"{robot} world {w} d udot / {what}: {err:.2e} relative"


def test_step_jacobians_match_central_differences_and_keep_the_worlds():
    model = lockstep.load(scene("panda.json"))
    b = lockstep.Batch(model, 3, dtype="float64")
    rng = np.random.default_rng(3)
    q0 = np.array(b.field("q")[0])
    u0 = rng.uniform(-0.5, 0.5, size=model.nu)
    tau0 = rng.uniform(-1, 1, size=model.nu)
    b.set_state(q0, u0)
    b.field("tau")[:] = tau0
    params = ["gravity.z", model.parameter_names[0]]
    A, B, C = b.linearize(params, dt=1e-3, integrator="rk4")
    nu = model.nu
    assert A.shape == (3, 2 * nu, 2 * nu) and B.shape == (3, 2 * nu, nu) and C.shape == (3, 2 * nu, 2)
    assert np.array_equal(np.array(b.field("u")[0]), u0)  # the worlds are not changed
    assert np.array_equal(A[0], A[2])

    def stepped(q, u, tau, p):
        c = lockstep.Batch(model, 1, dtype="float64")
        c.set_state(q, u)
        c.field("tau")[:] = tau
        for name, value in zip(params, p):
            c.params[name] = value
        c.step(1, dt=1e-3, integrator="rk4")
        return np.concatenate([np.array(c.field("q")[0]), np.array(c.field("u")[0])])

    p0 = [b.params[n][0] for n in params]
    h = 1e-6
    J = np.zeros((2 * nu, 3 * nu + 2))
    for k in range(3 * nu + 2):
        plus, minus = [q0.copy(), u0.copy(), tau0.copy(), list(p0)], [q0.copy(), u0.copy(), tau0.copy(), list(p0)]
        for s, x in ((h, plus), (-h, minus)):
            if k < 3 * nu:
                x[k // nu][k % nu] += s  # panda: every coordinate's rate is its speed
            else:
                x[3][k - 3 * nu] += s * max(1.0, abs(p0[k - 3 * nu]))
        scale = h if k < 3 * nu else h * max(1.0, abs(p0[k - 3 * nu]))
        J[:, k] = (stepped(*plus) - stepped(*minus)) / (2 * scale)
    ours = np.concatenate([A[1], B[1], C[1]], axis=1)
    err = np.abs(ours - J).max() / max(1.0, np.abs(J).max())
    assert err < 1e-7, err


def test_autograd_step_refuses_mismatched_parameters():
    pytest.importorskip("torch")
    import torch
    from lockstep.autograd import step

    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 2, dtype="float64")
    q, u, tau = (torch.zeros(2, 7, dtype=torch.float64) for _ in range(3))
    with pytest.raises(ValueError, match="give p"):
        step(b, q, u, tau, params=["gravity.z"])
    with pytest.raises(ValueError, match="give p"):
        step(b, q, u, tau, p=torch.zeros(2, 1, dtype=torch.float64))


def test_linearize_refuses_unknown_parameters():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 2, dtype="float64")
    with pytest.raises(ValueError, match="no per-world parameter named"):
        b.linearize(["gravity.w"])
    with pytest.raises(TypeError):
        b.linearize([3])


def test_torch_rollout_gradient_matches_gradcheck():
    torch = pytest.importorskip("torch")
    from lockstep.autograd import step

    # A Free body (quaternion coordinates) hanging from a bushing and a Pin pendulum: chain-7-seed's
    # elements on random trees are covered in C++; here the coordinate maps of a quaternion.
    model = lockstep.load({
        "name": "free-and-pin",
        "gravity": [0, 0, -9.81],
        "bodies": [
            {"name": "box", "parent": "ground", "mobilizer": "free", "mass": 2.0, "com": [0.01, 0.02, 0.0],
             "inertia": [0.03, 0.04, 0.05, 0.001, 0.0, 0.002]},
            {"name": "arm", "parent": "box", "mobilizer": "pin", "mass": 0.5, "com": [0.0, 0.0, -0.2],
             "inertia": [0.01, 0.01, 0.002, 0, 0, 0], "X_PF": {"position": [0.1, 0, -0.05]}},
        ],
        "linear_bushings": [{"name": "hold", "body1": "ground", "body2": "box",
                             "stiffness": [5, 5, 5, 50, 50, 50], "damping": [0.5, 0.5, 0.5, 2, 2, 2]}],
    })
    worlds = 2
    b = lockstep.Batch(model, worlds, dtype="float64")
    rng = np.random.default_rng(1)
    q0 = np.array(b.field("q"), dtype=np.float64)
    q0[:, 4:7] += rng.uniform(-0.1, 0.1, size=(worlds, 3))
    quat = rng.normal(size=(worlds, 4))
    q0[:, 0:4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    q = torch.tensor(q0, requires_grad=True)
    u = torch.tensor(rng.uniform(-1, 1, size=(worlds, model.nu)), requires_grad=True)
    tau = torch.tensor(rng.uniform(-1, 1, size=(worlds, model.nu)), requires_grad=True)
    p = torch.tensor([[5.0], [7.0]], dtype=torch.float64, requires_grad=True)
    params = ["bushing.hold.stiffness.3"]

    def rollout(u, tau, p):
        qk, uk = q, u
        for _ in range(3):
            qk, uk = step(b, qk, uk, tau, params=params, p=p, dt=1e-3, integrator="rk4")
        return qk[:, 4:], uk  # the translation and the speeds (quaternion coordinates: below)

    assert torch.autograd.gradcheck(rollout, (u, tau, p), eps=1e-6, atol=1e-7, rtol=1e-6)

    # The gradient by the quaternion's coordinates: along the unit sphere it is the directional
    # derivative; along q itself (which the step normalizes away) zero.
    def loss(q):
        q1, u1 = step(b, q, u.detach(), tau.detach(), dt=1e-3, integrator="rk4")
        return (q1[:, 4:] ** 2).sum() + (u1 ** 2).sum() + (q1[:, 0:4] * torch.tensor([0.3, -0.2, 0.5, 0.1], dtype=torch.float64)).sum()

    g = torch.autograd.grad(loss(q), q)[0].numpy()
    assert np.allclose((g[:, 0:4] * q0[:, 0:4]).sum(axis=1), 0, atol=1e-9)
    d = rng.normal(size=(worlds, 4))
    d -= (d * q0[:, 0:4]).sum(axis=1, keepdims=True) * q0[:, 0:4]  # tangent to the sphere
    h = 1e-6
    with torch.no_grad():
        qp, qm = q0.copy(), q0.copy()
        qp[:, 0:4] += h * d
        qm[:, 0:4] -= h * d
        fd = (loss(torch.tensor(qp)).item() - loss(torch.tensor(qm)).item()) / (2 * h)
    assert abs((g[:, 0:4] * d).sum() - fd) < 1e-6 * max(1.0, abs(fd))


def test_derivative_study_reports_dgsm_beside_spearman():
    study = {
        "scene": scene("chain-7.json"), "worlds": 32, "steps": 50, "dt": 0.001, "precision": "double",
        "sensitivity": "derivative",
        "vary": [{"parameter": "body.link7.mass", "distribution": "uniform", "low": 0.8, "high": 1.2},
                 {"parameter": "q.joint1", "distribution": "normal", "mean": 0.3, "sd": 0.05}],
        "outputs": ["q.joint7", "u.joint1", "energy.total"],
    }
    r = lockstep.run_study(study, device="cpu")
    assert r["dgsm"].shape == (3, 2) and r["dgsm_bound"].shape == (3, 2)
    assert np.all(np.isfinite(r["dgsm"][:2])) and np.all(r["dgsm"][:2] > 0)
    assert np.all(np.isnan(r["dgsm"][2])) and "do not reach" in r["dgsm_undefined"][2][0]
    assert r["report"]["sensitivity"]["method"] == "derivative"
    # The measure is the mean squared derivative over the worlds: d u.joint1 / d q.joint1 of each of
    # the study's worlds by central differences, from its drawn values.
    model = lockstep.load(scene("chain-7.json"))
    n = len(r["status"])
    b = lockstep.Batch(model, 2 * n, dtype="float64")
    q0, u0 = np.array(b.field("q")[0]), np.array(b.field("u")[0])
    h = 1e-6
    q = np.tile(q0, (2 * n, 1))
    q[:, 0] = np.repeat(r["parameters"][:, 1], 2) + np.tile([h, -h], n)
    b.set_state(q, np.tile(u0, (2 * n, 1)))
    b.params["body.link7.mass"] = np.repeat(r["parameters"][:, 0], 2)
    b.step(50, dt=0.001, integrator="rk4")
    u = np.array(b.field("u")[:, 0])
    g = (u[0::2] - u[1::2]) / (2 * h)
    assert abs(np.mean(g ** 2) - r["dgsm"][1, 1]) < 1e-6 * r["dgsm"][1, 1]


def _steps_along_columns(c, q0, u0, tau0, columns, h):
    """Worlds 2i and 2i + 1 of batch c at q0 with the speed or action of column columns[i] (in
    [nu, 3nu): speeds, then actions) moved by +h and -h, stepped once: q and u of every world."""
    nu = len(u0)
    for i, k in enumerate(columns):
        for side, s in ((0, h), (1, -h)):
            u, tau = u0.copy(), tau0.copy()
            if k < 2 * nu:
                u[k - nu] += s
            else:
                tau[k - 2 * nu] += s
            c.set_state(q0, u, indices=[2 * i + side])
            c.field("tau")[2 * i + side] = tau
    c.step(1)
    return np.array(c.field("q")), np.array(c.field("u"))


# free-bushing-grid-16 is left out: its full Jacobian (1,536 speeds, 4,608 directions) takes over two
# minutes of one core; free-bushing-grid-4 has the same elements.
SHIPPED = sorted(f for f in os.listdir(os.path.join(ROOT, "scenes"))
                 if f.endswith(".json") and f != "free-bushing-grid-16.json")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_scenes_step_jacobians_match_central_differences(name):
    """Every shipped scene at its initial state (assembled, as a batch starts), moving, one step of its
    own dt and integrator: the columns of A and B by a few speeds and actions against central
    differences of the engine's own step (the position columns are checked in C++ on random trees
    of every mobilizer, and on panda above)."""
    model = lockstep.load(scene(name))
    b = lockstep.Batch(model, 1, dtype="float64")
    q0, u0 = np.array(b.field("q")[0]), np.array(b.field("u")[0])
    rng = np.random.default_rng(sum(map(ord, name)))
    nu = model.nu
    u0 = u0 + rng.uniform(-0.2, 0.2, size=nu)  # moving, so that damping and friction act
    tau0 = rng.uniform(-0.1, 0.1, size=nu)
    b.set_state(q0, u0)
    b.field("tau")[:] = tau0
    A, B, _ = b.linearize()
    J = np.concatenate([A[0], B[0]], axis=1)
    assert J.shape == (2 * nu, 3 * nu) and np.all(np.isfinite(J)), name
    columns = rng.choice(np.arange(nu, 3 * nu), size=min(6, 2 * nu), replace=False)
    h = 1e-6
    c = lockstep.Batch(model, 2 * len(columns), dtype="float64")
    # Every world of c as world 0 of b: a scene may give each world its own values (targets, gains).
    for p in model.parameter_names:
        c.params[p] = b.params[p][0]
    c.field("target")[:] = np.array(b.field("target")[0])
    qs, us = _steps_along_columns(c, q0, u0, tau0, columns, h)
    assert not np.any(np.array(c.status)), name
    for i, k in enumerate(columns):
        du = (us[2 * i] - us[2 * i + 1]) / (2 * h)
        err = np.abs(J[nu:, k] - du).max() / max(1.0, np.abs(du).max())
        assert err < 1e-6, f"{name} column {k}: d u+ {err:.2e}"
        if not model.quaternions:  # every coordinate's increment is its own
            dq = (qs[2 * i] - qs[2 * i + 1]) / (2 * h)
            err = np.abs(J[:nu, k] - dq).max() / max(1.0, np.abs(dq).max())
            assert err < 1e-6, f"{name} column {k}: d q+ {err:.2e}"


def test_mujoco_law_step_jacobians_match_central_differences_on_ant():
    """Ant under MuJoCo's law (models/mjcf/ant.xml: its feet on the floor with friction pyramids, its
    ankles at their limits), after a rollout of random actions at the XML's own step (RK4, 10 ms): the
    columns of A by the speeds and of B by the actions against central differences of the engine's own
    step. The soft solve's derivatives come from the implicit function theorem at its solution
    (docs/derivatives.md); the C++ tests check the positions' columns, the cones and MuJoCo's own
    finite differences (tests/frontend/test_soft_constraints.cpp, SoftDerivatives)."""
    model = lockstep.load(os.path.join(MODELS, "mjcf", "ant.xml"), contact_law="mujoco")
    nu = model.nu
    assert model.nq == nu + 1  # the free torso's quaternion first, then the hinges
    b = lockstep.Batch(model, 1, dtype="float64")
    rng = np.random.default_rng(8)
    for step in range(1000):  # until at least two feet are on the floor
        b.field("tau")[:] = rng.uniform(-1, 1, size=nu) * (np.arange(nu) >= 6)
        b.step(1)
        assert b.status[0] == 0, b.describe_status(0)
        b.evaluate()
        if step >= 50 and np.sum(np.array(b.softContact[0]).reshape(-1, 20)[:, 0] > 0.5) >= 2:
            break
    else:
        pytest.fail("no state with two feet on the floor")
    q0, u0, tau0 = np.array(b.field("q")[0]), np.array(b.field("u")[0]), np.array(b.field("tau")[0])
    A, B, _ = b.linearize()
    J = np.concatenate([A[0], B[0]], axis=1)
    assert np.all(np.isfinite(J))
    h = 1e-6
    columns = np.arange(nu, 3 * nu)
    c = lockstep.Batch(model, 2 * len(columns), dtype="float64")
    qs, us = _steps_along_columns(c, q0, u0, tau0, columns, h)
    assert not np.any(np.array(c.status))
    worst = 0.0
    for i, k in enumerate(columns):
        du = (us[2 * i] - us[2 * i + 1]) / (2 * h)
        dq = (qs[2 * i, 7:] - qs[2 * i + 1, 7:]) / (2 * h)  # the hinges' increments are their own
        ours = np.concatenate([J[6:nu, k], J[nu:, k]])
        theirs = np.concatenate([dq, du])
        worst = max(worst, np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))
    assert worst < 1e-6, worst


def test_mujoco_law_jacobians_chained_over_a_slide_to_rest_equal_differences_of_the_rollout(tmp_path):
    """A box pushed along the floor under MuJoCo's law slides and comes to rest within 100 steps of 5 ms
    (MuJoCo's Euler): the product of the steps' A along the rollout (what a derivative study chains)
    gives d x(end) / d vx(0), against central differences of the whole rollout."""
    xml = tmp_path / "box.xml"
    xml.write_text("""<mujoco><option timestep="0.005"/><worldbody>
      <geom name="floor" type="plane" size="5 5 .1" friction="0.8"/>
      <body name="box" pos="0 0 0.06"><freejoint name="root"/>
        <geom type="box" size="0.1 0.15 0.05" mass="2"/></body></worldbody></mujoco>""")
    model = lockstep.load(str(xml), contact_law="mujoco")
    nu = model.nu

    def rollout(vx, chained):
        b = lockstep.Batch(model, 1, dtype="float64")
        u = np.zeros(nu)
        u[3] = vx  # Free: angular velocity, then linear
        b.set_state(np.array(b.field("q")[0]), u)
        S = np.zeros(2 * nu)
        S[nu + 3] = 1.0
        for _ in range(100):
            if chained:
                S = b.linearize()[0][0] @ S
            b.step(1)
            assert b.status[0] == 0, b.describe_status(0)
        return np.array(b.field("q")[0]), np.array(b.field("u")[0]), S

    for vx in (0.6, 0.9):
        _, u_end, S = rollout(vx, True)
        assert np.abs(u_end).max() < 1e-3  # at rest
        h = 1e-6
        differences = (rollout(vx + h, False)[0][4] - rollout(vx - h, False)[0][4]) / (2 * h)
        assert 0.03 < differences < 0.1
        assert S[3] == pytest.approx(differences, rel=1e-7)  # dq row 3: the free body's x
