"""Hostile and careless use of the Python surfaces (issue 38): extreme actions and NaN options of the
tasks, integer tensors given to the differentiable step, Batch.render's arguments and its cache of
renderers, a closed environment's frames, and MJCF names that are not UTF-8. Each test failed on
330fb27."""
import os
import resource

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import lockstep  # noqa: E402
from lockstep import tasks  # noqa: E402
from conftest import scene  # noqa: E402


# ---- item 7: rewards of extreme actions are Gymnasium's, NaN options are refused -------------------

@pytest.mark.parametrize("name", ["Ant-v5", "Hopper-v5", "Reacher-v5"])
def test_extreme_actions_cost_what_gymnasium_says(name):
    env = tasks.make(name, num_envs=4)
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape)
    a[0, 0], a[1, 0], a[2, 0] = 1e150, 1e160, np.inf
    with np.errstate(over="ignore"):
        _, reward, _, _, info = env.step(a)
    # The control cost of 1e150 is finite and huge, that of 1e160 and inf overflows: -inf, as NumPy
    # and Gymnasium compute it (it read 0.0, as if the action cost nothing).
    assert reward[0] < -1e290
    assert reward[1] == -np.inf and reward[2] == -np.inf
    assert np.isfinite(reward[3])


def test_nan_weights_and_a_zero_engine_step_are_refused_by_name():
    with pytest.raises(ValueError, match="ctrl_cost_weight must be a finite number"):
        tasks.make("Ant-v5", ctrl_cost_weight=float("nan"))
    with pytest.raises(ValueError, match="forward_reward_weight must be a finite number"):
        tasks.make("Hopper-v5", forward_reward_weight=float("inf"))
    with pytest.raises(ValueError, match="healthy_z_range must be a number"):
        tasks.make("Hopper-v5", healthy_z_range=(0.7, float("nan")))
    tasks.make("Hopper-v5", healthy_z_range=(0.7, float("inf"))).close()  # an open range is fine
    # item 23: engine_dt=0 raised ZeroDivisionError
    for bad in (0, -1e-3, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="engine_dt must be a positive number"):
            tasks.make("Hopper-v5", engine_dt=bad)


# ---- item 23: a closed environment's frames -----------------------------------------------------

def test_render_after_close_is_a_closed_environment_error():
    env = gym.make_vec("lockstep/Reacher-v5", num_envs=2, render_mode="rgb_array", width=32, height=32)
    env.reset(seed=0)
    frames = env.render()  # drawn when read
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError, match="closed"):
        frames[0]
    with pytest.raises(gym.error.ClosedEnvironmentError, match="closed"):
        env.render()
    one = gym.make("lockstep/Reacher-v5", render_mode="rgb_array", width=32, height=32)
    one.reset(seed=0)
    one.close()
    with pytest.raises(gym.error.ClosedEnvironmentError):
        one.unwrapped.render()


# ---- item 11: the differentiable step takes floating-point tensors --------------------------------

def test_autograd_step_refuses_integer_tensors():
    torch = pytest.importorskip("torch")
    from lockstep.autograd import step
    batch = lockstep.Batch(lockstep.load(scene("double_pendulum.json")), 2, dtype="float64")
    model = batch.model
    q = torch.zeros((2, model.nq), dtype=torch.float64)
    u = torch.zeros((2, model.nu), dtype=torch.float64)
    tau = torch.zeros((2, model.nu), dtype=torch.float64)
    for name, bad in (("q", q.long()), ("u", u.int()), ("tau", tau.bool())):
        args = {"q": q, "u": u, "tau": tau, name: bad}
        with pytest.raises(TypeError, match=f"step: {name} must be a floating-point tensor"):
            step(batch, args["q"], args["u"], args["tau"])
    q1, u1 = step(batch, q + 0.5, u, tau)  # floats still work
    assert q1.dtype == torch.float64 and torch.all(torch.isfinite(q1))


# ---- item 12: Batch.render's arguments ------------------------------------------------------------

def test_render_checks_its_arguments():
    batch = lockstep.Batch(lockstep.load(scene("chain-7.json")), 2)
    with pytest.raises(TypeError, match="width must be a whole number of pixels, not 32.7"):
        batch.render(width=32.7, height=24)
    with pytest.raises(ValueError, match="height must be between 1 and 8192"):
        batch.render(width=32, height=0)
    for camera, message in (({"distance": float("inf")}, "camera distance must be a finite number"),
                            ({"lookat": (0, 0, 0), "distance": -1}, "camera distance must be a finite number > 0"),
                            ({"lookat": (0, float("nan"), 0)}, "camera lookat must be three finite numbers"),
                            ({"lookat": (0, 0)}, "camera lookat must be three finite numbers"),
                            ({"azimuth": float("inf")}, "camera azimuth must be a finite number")):
        with pytest.raises(ValueError, match=message):
            batch.render(width=32, height=24, camera=camera)
    # A distance without lookat is kept: the camera follows the worlds from that distance.
    near = batch.render(width=64, height=48, camera={"distance": 1.0})
    far = batch.render(width=64, height=48, camera={"distance": 20.0})
    auto = batch.render(width=64, height=48)
    assert not np.array_equal(near, far) and not np.array_equal(far, auto)
    # One folder as a string is one folder, not its characters.
    batch.render(width=32, height=24, mesh_paths="/tmp")
    assert list(batch._renderers)[-1][3] == ("/tmp",)


# ---- item 16: the renderers kept are bounded, and can be freed ------------------------------------

def test_render_keeps_a_bounded_number_of_renderers():
    batch = lockstep.Batch(lockstep.load(scene("chain-7.json")), 2)

    def rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    for size in range(16, 16 + 40):
        batch.render(width=size, height=size)
        assert len(batch._renderers) <= 4
    before = rss_mb()
    for size in range(100, 100 + 20):
        batch.render(width=size, height=size)
    assert rss_mb() - before < 200  # each renderer holds tens of MB; 60 of them took 2 GB
    batch.close_renderers()
    assert len(batch._renderers) == 0
    assert batch.render(width=40, height=30).shape == (30, 40, 3)


# ---- item 10: MJCF names that are not UTF-8 ---------------------------------------------------------

def test_mjcf_names_that_are_not_utf8_are_refused_at_load(tmp_path):
    path = tmp_path / "latin1.xml"
    path.write_bytes(b'<mujoco><worldbody><body name="caf\xe9"><joint/><geom size=".1"/></body></worldbody></mujoco>')
    with pytest.raises(lockstep.InputError, match=r"body 'caf\\xe9': name: not UTF-8"):
        lockstep.load(os.fspath(path))
