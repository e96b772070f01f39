"""The tasks' observations and rewards come from the engine's fields on the batch's device: MuJoCo's
qpos, qvel and per-body quantities are per-world fields (physics/mujoco_bodies.h), so a step moves
nothing of the observations' size between host and device. Checked on the CPU twin of the CUDA path:
torch arrays, every host<->device conversion of the task's array operations recorded."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
gym = pytest.importorskip("gymnasium")
import lockstep  # noqa: E402,F401  (registers lockstep/<task>)
from lockstep import tasks  # noqa: E402
from lockstep.arrays import TorchOps  # noqa: E402
from lockstep.mujoco_state import MujocoState  # noqa: E402

N = 256


def computing_in_torch(env):
    """The task computing with torch tensors, as on CUDA (on the CPU it computes with NumPy)."""
    env.xp = TorchOps(env.batch.dtype, "cpu")
    env.state = MujocoState(env.batch, env.layout, env.xp)
    env._status, env._as_torch = env.xp.view(env.batch.field("status")), None
    return env


@pytest.mark.parametrize("name", sorted(tasks.TASKS))
def test_a_step_moves_no_observation_between_host_and_device(name):
    env = computing_in_torch(tasks.make(name, num_envs=N, array="torch"))
    try:
        env.reset(seed=1)
        xp = env.xp
        moved = []
        for method in ("to_numpy", "from_numpy", "asarray"):
            original = getattr(xp, method)

            def recorder(a, *args, _original=original, _method=method, **kwargs):
                # Host to device: a host array (NumPy, a list); device to host: to_numpy of anything.
                if _method == "to_numpy" or not isinstance(a, torch.Tensor):
                    kind = str(a.dtype).replace("torch.", "") if hasattr(a, "dtype") else type(a).__name__
                    moved.append((_method, int(np.prod(np.shape(a))), kind))
                return _original(a, *args, **kwargs)

            setattr(xp, method, recorder)
        actions = torch.zeros((N,) + env.single_action_space.shape, dtype=torch.float64)
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(actions)
        assert isinstance(obs, torch.Tensor) and obs.shape[0] == N
        # Only the per-world flags cross (Gymnasium's terminations are NumPy): no number of the
        # observations, rewards or model constants, and nothing larger than one value per world.
        floats = [m for m in moved if "float" in m[2]]
        assert not floats, f"{name}: a step moved numbers between host and device: {floats}"
        assert max((size for _, size, _ in moved), default=0) <= N, f"{name}: {moved}"
        assert obs.shape[1] >= 2  # the observations themselves were not among them
    finally:
        env.close()
