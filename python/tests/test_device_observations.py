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

N = 256


@pytest.mark.parametrize("name", sorted(tasks.TASKS))
def test_a_step_moves_no_observation_between_host_and_device(name):
    env = gym.make_vec(f"lockstep/{name}", num_envs=N, array="torch")
    try:
        env.reset(seed=1)
        xp = env.unwrapped.xp if hasattr(env, "unwrapped") else env.xp
        moved = []
        for method in ("to_numpy", "from_numpy", "asarray"):
            original = getattr(xp, method)

            def recorder(a, *args, _original=original, _method=method, **kwargs):
                # Host to device: a host array (NumPy, a list); device to host: to_numpy of anything.
                if _method == "to_numpy" or not isinstance(a, torch.Tensor):
                    moved.append((_method, int(np.prod(np.shape(a)))))
                return _original(a, *args, **kwargs)

            setattr(xp, method, recorder)
        actions = torch.zeros((N,) + env.single_action_space.shape, dtype=torch.float64)
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(actions)
        assert isinstance(obs, torch.Tensor) and obs.shape[0] == N
        # The per-world masks and flags, and constants of the task: nothing as large as two values per world.
        largest = max((size for _, size in moved), default=0)
        assert largest < 2 * N, f"{name}: a step converted an array of {largest} values: {moved}"
        assert obs.shape[1] >= 2  # the observations themselves were not among them
    finally:
        env.close()
