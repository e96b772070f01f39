"""The Python module against closed forms, Simbody-printed references, the command line, and
itself: views are views, resets, per-world parameters, determinism, and every bad input."""
import gc
import os
import subprocess
import threading
import time

import numpy as np
import pytest

import lockstep
from conftest import ROOT, cli_path, needs_cuda, scene


# ---- models ------------------------------------------------------------------------------------

def test_load_scene_names_and_info():
    m = lockstep.load(scene("chain-7.json"))
    assert m.coordinate_names == [f"joint{i}" for i in range(1, 8)]
    assert m.nq == m.nu == 7
    assert "gravity.z" in m.parameter_names and "body.link7.mass" in m.parameter_names
    assert m.dt == 1e-3
    info = m.info
    assert info.startswith("scene         chain-7 (")
    assert "nq 7" in info and "joint1 joint2" in info
    cli = cli_path()
    if cli:  # the same text as the command line
        out = subprocess.run([cli, "info", scene("chain-7.json")], capture_output=True, text=True, check=True)
        assert info == out.stdout


def test_load_urdf_fixed_and_free_root():
    fixed = lockstep.load(os.path.join(ROOT, "models", "panda.urdf"))
    free = lockstep.load(os.path.join(ROOT, "models", "panda.urdf"), root="free")
    assert free.nq == fixed.nq + 7 and free.nu == fixed.nu + 6
    assert free.coordinate_names[0].startswith("root.")
    scene_free = lockstep.load(scene("panda.json"), root="free")
    assert scene_free.nq == free.nq
    assert "root" in scene_free.info


def test_load_errors_carry_the_engine_message():
    with pytest.raises(lockstep.InputError, match="no_such_file.json"):
        lockstep.load("no_such_file.json")
    with pytest.raises(ValueError, match="root must be"):
        lockstep.load(scene("chain-7.json"), root="floating")
    with pytest.raises(ValueError, match='no "urdf" object'):
        lockstep.load(scene("chain-7.json"), root="free")
    bad = {"bodies": [{"name": "a", "parent": "ground", "mobilizer": "pin", "mass": -1, "inertia": [1, 1, 1]}]}
    with pytest.raises(lockstep.InputError, match=r"<dict>: bodies\[0\]"):
        lockstep.load(bad)


# ---- the chain-7 check value and the Simbody reference ----------------------------------------

def test_chain7_check_value():
    # docs/scenes.md: summing udot[0] over q0 = 0.3 + 1e-9 k, k = 0..199999 (other q = 0.3, u = 0)
    # gives 2.11259e+06 in Simbody 3.7 and MuJoCo 2.2.2 (tests/test_dynamics.cpp).
    n = 200000
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), n, dtype="float64")
    q = np.full((n, 7), 0.3)
    q[:, 0] += 1e-9 * np.arange(n)
    b.set_state(q, np.zeros(7))
    b.evaluate()
    assert abs(b.udot[:, 0].sum() - 2.11259e6) <= 0.000005e6


def _quaternion_xyz(a):
    """The quaternion (w, x, y, z) of R = Rx(a0) Ry(a1) Rz(a2) (body-fixed XYZ)."""
    def axis(i, t):
        q = np.zeros(4)
        q[0], q[1 + i] = np.cos(t / 2), np.sin(t / 2)
        return q

    def mul(p, q):
        w1, v1, w2, v2 = p[0], p[1:], q[0], q[1:]
        return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])

    return mul(mul(axis(0, a[0]), axis(1, a[1])), axis(2, a[2]))


def test_bushing_matches_simbody_reference_case1():
    # docs/reference-values.md (bushing case 1) (tests/test_forces.cpp): two free bodies and a LinearBushing.
    m, com = 1.234, np.array([0.1, 0.2, 0.3])
    S = np.array([[1.0, 0.01, 0.02], [0.01, 1.1, 0.03], [0.02, 0.03, 1.2]])
    central = m * S - m * (com @ com * np.eye(3) - np.outer(com, com))
    body = {"parent": "ground", "mobilizer": "free", "mass": m, "com": com.tolist(), "inertia": central.tolist()}
    q = np.concatenate([_quaternion_xyz([0.3, -0.2, 0.5]), [0.1, 0.2, -0.3],
                        _quaternion_xyz([0.1, 0.25, -0.4]), [1, 0.6, 0.2]])
    u = [0.4, -0.1, 0.2, 0.05, 0.3, -0.2, -0.3, 0.5, 0.1, 0.2, -0.1, 0.4]
    model = lockstep.load({
        "gravity": [0, 0, 0],
        "bodies": [dict(body, name="body1", joint="j1"), dict(body, name="body2", joint="j2")],
        "linear_bushings": [{"name": "b", "body1": "body1", "body2": "body2",
                             "frame_on_body1": {"position": [0.5, 0, 0], "xyz_angles": [0.2, 0, 0.1]},
                             "frame_on_body2": {"position": [-0.2, 0.1, 0], "xyz_angles": [0, 0.3, 0]},
                             "stiffness": [1, 2, 3, 4, 5, 6], "damping": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}],
    })
    b = lockstep.Batch(model, 3, dtype="float64")
    b.set_state(q, u)
    b.evaluate()
    udot = [-0.159774729084, 2.17276079444, -1.8578658426, 0.0479038109544, 0.877684169256, 1.65750394147,
            0.253238764928, -3.92440194614, 2.7483979982, 0.38436558273, -1.58440662551, -2.59508607533]
    bq = [0.216737862773, 0.636196338114, -1.20272932695, 0.576694242593, 0.205624382824, 0.153861138546]
    bf = [-0.220017150359, -1.42097469389, 3.78036102615, -2.39248718891, -0.860209594157, -1.16222946803]
    for w in range(3):
        np.testing.assert_allclose(b.udot[w], udot, rtol=0, atol=1e-10 * 4)
        np.testing.assert_allclose(b.bushingState[w, :6], bq, rtol=0, atol=1e-10)
        np.testing.assert_allclose(b.bushingState[w, 6:], bf, rtol=0, atol=1e-10 * 4)
    assert abs(b.energy[0, 1] - 3.43994589784) <= 1e-10 * 3.44


# ---- the command line, bit for bit --------------------------------------------------------------

def test_python_equals_the_command_line_bit_for_bit(tmp_path):
    cli = cli_path()
    if not cli:
        pytest.skip("the lockstep command line is not built (scripts/build.sh)")
    out = tmp_path / "run.npz"
    worlds, steps = 16, 120
    subprocess.run([cli, "simulate", scene("chain-7-seed.json"), "--worlds", str(worlds), "--steps", str(steps),
                    "--precision", "double", "--device", "cpu", "--record-every", str(steps), "--out", str(out)],
                   check=True, capture_output=True)
    rec = np.load(out)
    b = lockstep.Batch(lockstep.load(scene("chain-7-seed.json")), worlds, dtype="float64")
    np.testing.assert_array_equal(rec["q"][0], b.q)
    b.step(steps)
    np.testing.assert_array_equal(rec["q"][-1], b.q)
    np.testing.assert_array_equal(rec["u"][-1], b.u)


# ---- views are views ------------------------------------------------------------------------------

def test_views_share_the_batch_memory():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 5, dtype="float64")
    q = b.q
    assert q.shape == (5, 7) and q.dtype == np.float64 and q.strides == (8, 5 * 8)
    assert b.time.shape == (5,) and b.status.dtype == np.int32
    assert b.q.__array_interface__["data"][0] == q.__array_interface__["data"][0]
    q[2, 3] = 1.25            # Python -> engine
    assert b.q[2, 3] == 1.25
    b.tau[:, 0] = 2.0
    b.step(10)                # engine -> the same array object
    assert np.all(b.time == pytest.approx(0.01)) and q[0, 0] != 0.3
    assert np.shares_memory(q, b.q)
    f32 = lockstep.Batch(lockstep.load(scene("chain-7.json")), 3)
    assert f32.q.dtype == np.float32 and f32.q.strides == (4, 12)


def test_every_registry_field_is_a_property():
    b = lockstep.Batch(lockstep.load(scene("chain-7-seed.json")), 4, dtype="float64")
    assert lockstep.FIELD_NAMES[:4] == ("q", "u", "z", "time")
    for name in lockstep.FIELD_NAMES:
        v = getattr(b, name)
        assert isinstance(v, np.ndarray) and v.shape[0] == 4, name
        # A field of an element the scene lacks (ground contacts here) is empty: nothing to share.
        assert v.size == 0 or np.shares_memory(v, b.field(name)), name


def test_views_keep_the_batch_alive():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 64, dtype="float64")
    q, before = b.q, b.q.copy()
    del b
    gc.collect()
    np.testing.assert_array_equal(q, before)  # still the batch's memory, not freed
    q += 1.0


def test_dlpack_round_trip():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 6, dtype="float64")
    assert b.q.__dlpack_device__() == (1, 0)  # kDLCPU
    v = np.from_dlpack(b.q)
    assert np.shares_memory(v, b.q)
    v[1, 1] = -4.0
    assert b.q[1, 1] == -4.0


def test_torch_zero_copy_when_installed():
    torch = pytest.importorskip("torch")
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 6, dtype="float64")
    tau = torch.from_dlpack(b.tau)
    tau[:, 2] = 3.0
    assert np.all(b.tau[:, 2] == 3.0)
    assert tau.data_ptr() == b.tau.__array_interface__["data"][0]


# Every field's memory starts on a 64-byte boundary (the engine's aligned host storage), for any world
# count: NumPy, torch and JAX then all alias it. JAX takes a host buffer without a copy only at 64 bytes
# (it copied the 16-byte-aligned std::vector storage of before, silently).
ALIGNMENT_WORLDS = (1, 3, 5, 7, 100, 1001)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _aligned_fields(dtype):
    """(worlds, name, NumPy view) of every non-empty field of chain-7-seed batches of several sizes."""
    model = lockstep.load(scene("chain-7-seed.json"))
    for worlds in ALIGNMENT_WORLDS:
        b = lockstep.Batch(model, worlds, dtype=dtype)
        for name in lockstep.FIELD_NAMES:
            v = b.field(name)
            if v.size:
                yield b, worlds, name, v


def _poke(b, name, view, value):
    """Writes `value` at the last world's last component through `view`; True when the batch's own
    field shows it (the view aliases the engine's memory)."""
    index = (-1,) * view.ndim
    view[index] = value
    return b.field(name)[index] == value


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fields_are_64_byte_aligned_and_numpy_aliases_them(dtype):
    for b, worlds, name, v in _aligned_fields(dtype):
        assert _address(v) % 64 == 0, (worlds, name, _address(v) % 64)
        w = np.from_dlpack(v)
        assert _address(w) == _address(v), (worlds, name)
        assert _poke(b, name, w, 3), (worlds, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_aliases_every_field(dtype):
    torch = pytest.importorskip("torch")
    for b, worlds, name, v in _aligned_fields(dtype):
        for t in (torch.from_dlpack(v), torch.as_tensor(v)):
            assert t.data_ptr() == _address(v), (worlds, name)
            assert _poke(b, name, t, 5), (worlds, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jax_aliases_every_field(dtype):
    jax = pytest.importorskip("jax")
    x64 = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)  # float64 fields stay float64 (no conversion, no copy)
    try:
        for b, worlds, name, v in _aligned_fields(dtype):
            x = jax.dlpack.from_dlpack(v)
            assert x.unsafe_buffer_pointer() == _address(v), (worlds, name, _address(v) % 64)
            # JAX arrays are immutable: a change the engine makes shows in the JAX array instead.
            index = (-1,) * v.ndim
            v[index] = 7
            assert np.asarray(x)[index] == 7, (worlds, name)
    finally:
        jax.config.update("jax_enable_x64", x64)


def test_field_assignment_checks_shape():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 4, dtype="float64")
    b.tau = np.ones((4, 7))
    b.tau = 0.5
    assert np.all(b.tau == 0.5)
    with pytest.raises(ValueError, match="field 'tau' of shape"):
        b.tau = np.ones((3, 7))


# ---- resets, states, parameters ----------------------------------------------------------------

def test_reset_by_index_and_by_mask():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 6, dtype="float64")
    q0 = b.q.copy()
    b.step(50)
    moved = b.q.copy()
    b.reset(indices=[1, 4])
    np.testing.assert_array_equal(b.q[[1, 4]], q0[[1, 4]])
    np.testing.assert_array_equal(b.q[[0, 2, 3, 5]], moved[[0, 2, 3, 5]])
    assert b.time[1] == 0 and b.time[0] > 0
    b.reset(mask=np.array([True, False, False, False, False, True]))
    np.testing.assert_array_equal(b.q[[0, 5]], q0[[0, 5]])
    np.testing.assert_array_equal(b.q[[2, 3]], moved[[2, 3]])
    b.reset()
    np.testing.assert_array_equal(b.q, q0)


def test_set_state_of_some_worlds():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 4, dtype="float64")
    q = np.arange(14, dtype=float).reshape(2, 7) / 10
    b.set_state(q, np.ones((2, 7)), indices=[3, 0])
    np.testing.assert_array_equal(b.q[[3, 0]], q)
    np.testing.assert_array_equal(b.u[[3, 0]], 1.0)
    np.testing.assert_array_equal(b.u[[1, 2]], 0.0)


def test_parameters_by_name():
    model = lockstep.load(scene("chain-7.json"))
    b = lockstep.Batch(model, 4, dtype="float64")
    assert set(b.params) == set(model.parameter_names)
    np.testing.assert_array_equal(b.params["gravity.y"], -9.81)
    b.params["body.link7.mass"] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(b.params["body.link7.mass"], [1, 2, 3, 4])
    b.params["gravity.y"] = 0.0
    b.step(100)
    # Without gravity nothing moves from rest; the other worlds are not touched by the setter.
    np.testing.assert_array_equal(b.u, 0.0)
    b.params["gravity.y"] = np.array([-9.81, 0, 0, 0])
    b.reset()
    b.step(100)
    assert np.all(b.u[0] != 0) and np.all(b.u[1:] == 0)


def test_parameter_errors():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 4, dtype="float64")
    with pytest.raises(ValueError, match="no per-world parameter named 'body.nobody.mass'"):
        b.params["body.nobody.mass"]
    with pytest.raises(ValueError, match="no per-world parameter named"):
        b.params["body.nobody.mass"] = 1.0
    with pytest.raises(ValueError, match="mass"):
        b.params["body.link1.mass"] = -1.0
    with pytest.raises(ValueError, match="expected one value or 4"):
        b.params["body.link1.mass"] = [1.0, 2.0]


def test_determinism_and_world_independence():
    model = lockstep.load(scene("chain-7-seed.json"))
    a = lockstep.Batch(model, 8, dtype="float64")
    c = lockstep.Batch(model, 8, dtype="float64")
    alone = lockstep.Batch(model, 1, dtype="float64")
    for batch in (a, c):
        batch.tau[:] = np.linspace(-1, 1, 8 * model.nu).reshape(8, model.nu)
        batch.step(200)
    alone.tau[:] = a.tau[5]
    alone.step(200)
    np.testing.assert_array_equal(a.q, c.q)
    np.testing.assert_array_equal(a.q[5], alone.q[0])


def test_step_releases_the_gil():
    # While one thread is inside step(), another runs Python code; with the GIL held it could not
    # run at all in the middle of the step.
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 1024, dtype="float64")
    span = []

    def work():
        t0 = time.perf_counter()
        b.step(300)
        span.extend([t0, time.perf_counter()])

    worker = threading.Thread(target=work)
    stamps = []
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    t0, t1 = span
    middle = [t for t in stamps if t0 + 0.1 * (t1 - t0) < t < t1 - 0.1 * (t1 - t0)]
    assert len(middle) > 100, f"{len(middle)} ticks in the middle of a {t1 - t0:.3f} s step"


# ---- errors ---------------------------------------------------------------------------------------

def test_bad_inputs_raise():
    model = lockstep.load(scene("chain-7.json"))
    with pytest.raises(ValueError, match="device must be"):
        lockstep.Batch(model, 2, device="tpu")
    with pytest.raises(ValueError, match="dtype must be"):
        lockstep.Batch(model, 2, dtype="float16")
    with pytest.raises(ValueError, match="worlds must be at least 1"):
        lockstep.Batch(model, 0)
    with pytest.raises(TypeError, match="lockstep.Model"):
        lockstep.Batch("chain-7.json", 2)
    b = lockstep.Batch(model, 3, dtype="float64")
    with pytest.raises(IndexError, match="world 3 is outside the batch"):
        b.reset(indices=[0, 3])
    with pytest.raises(ValueError, match=r"mask must have shape \(3,\)"):
        b.reset(mask=[True, False])
    with pytest.raises(ValueError, match="not both"):
        b.reset(indices=[0], mask=[True, True, True])
    with pytest.raises(ValueError, match=r"q must have shape \(3, 7\)"):
        b.set_state(np.zeros((3, 6)), np.zeros(7))
    with pytest.raises(IndexError, match="world 7 is outside"):
        b.describe_status(7)
    with pytest.raises(ValueError, match="integrator must be"):
        b.step(1, integrator="leapfrog")
    with pytest.raises(ValueError, match="no per-world field named 'qq'"):
        b.field("qq")
    with pytest.raises(TypeError):
        b.set_state(np.zeros((3, 7)), np.zeros((3, 7)), indices=[0.5, 1, 2])


def test_status_and_describe_status():
    b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 3, dtype="float64")
    assert b.describe_status(0) == "ok" and np.all(b.status == 0)
    b.q[1] = np.nan
    b.step(1)
    assert b.status[1] != 0 and b.status[0] == 0
    assert b.describe_status(1) != "ok" and b.describe_status(1) == lockstep.describe_status(int(b.status[1]))


@needs_cuda
def test_cuda_batch_matches_cpu_and_refuses_host_arrays():
    model = lockstep.load(scene("chain-7.json"))
    g = lockstep.Batch(model, 32, device="cuda", dtype="float64")
    c = lockstep.Batch(model, 32, device="cpu", dtype="float64")
    assert g.q.__dlpack_device__()[0] == 2  # kDLCUDA
    with pytest.raises(TypeError, match="device memory"):
        g.tau = np.zeros((32, 7))
    g.step(100)
    c.step(100)
    g.download()
    np.testing.assert_allclose(g.host_field("q"), c.q, rtol=0, atol=1e-9)
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(g.tau)
    assert t.is_cuda and tuple(t.shape) == (32, 7)
