"""The episode layer every vector environment shares (lockstep.episodes): one rollout through
lockstep.VectorEnv and through a task (lockstep/InvertedDoublePendulum-v5) of the same model, with
the same actions, seeds and randomization, a world the engine flags and episodes that end by
termination and by truncation, in each autoreset mode, gives the same episode events; and each
info "_key" mask is an array of its own."""
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import lockstep  # noqa: E402
from lockstep import tasks  # noqa: E402
from lockstep.arrays import NumpyOps  # noqa: E402
from lockstep.mujoco_state import MujocoState  # noqa: E402
from conftest import scene  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

WORLDS, MAX_STEPS, STEPS = 5, 6, 20
FLAGGED_WORLD, FLAGGED_AT = 3, 2  # world 3's state is made non-finite after step 2
# The cart's force per world: 0 keeps the poles upright (truncated at MAX_STEPS), the others topple
# them (terminated when the tip falls below 1 m) at different steps.
CART_FORCE = np.array([0.0, 0.25, -1.0, 0.5, 1.0])
VARY = [{"parameter": "body.cart.mass", "distribution": "uniform", "low": 5.0, "high": 15.0}]


def task_and_vector_env(mode):
    """The task, and a VectorEnv of its model whose reward, termination and info terms are the
    task's (InvertedDoublePendulum-v5's, from MuJoCo's site_xpos and qvel), with no reset noise."""
    task = tasks.make("InvertedDoublePendulum-v5", num_envs=WORLDS, max_episode_steps=MAX_STEPS,
                      autoreset_mode=mode, randomize=VARY, reset_noise_scale=0.0)

    def mujoco(batch):
        return MujocoState(batch, task.layout, NumpyOps(np.float64))

    def reward(batch, obs, actions):
        s = mujoco(batch)
        tip, qvel = s.site_xpos("tip"), s.qvel()
        x, y = tip[:, 0], tip[:, 2]
        alive = 10.0 * ~(y <= 1)
        dist = 0.01 * x ** 2 + (y - 2) ** 2
        vel = 1e-3 * qvel[:, 1] ** 2 + 5e-3 * qvel[:, 2] ** 2
        return alive - dist - vel, {"reward_survive": alive, "distance_penalty": -dist, "velocity_penalty": -vel}

    def terminated(batch, obs):
        return mujoco(batch).site_xpos("tip")[:, 2] <= 1

    env = lockstep.VectorEnv(task.model, WORLDS, reward, terminated, observations=("q", "u"),
                             max_episode_steps=MAX_STEPS, dt=task.engine_dt, substeps=task.substeps,
                             action_high=np.inf, autoreset_mode=mode, randomize=VARY)
    return task, env


def actions_of(task, env):
    """The same generalized forces in both: the task's motor control is the cart's tau."""
    a = CART_FORCE.astype(np.float32)[:, None]
    tau = np.zeros((WORLDS, env.batch.model.nu))
    tau[:, task._act_u] = a
    return a, tau


def step_reports(info):
    """What each world's step reported: info's terms, and under SAME_STEP (Gymnasium's final_info)
    those of the worlds that finished from info["final_info"], as one dict of arrays and masks."""
    if "final_info" not in info:
        return info
    final, out = info["final_info"], {}
    for key in [k for k in info if not k.startswith("_") and k not in ("final_obs", "final_info")] + \
            [k for k in final if not k.startswith("_") and k not in info]:
        top = info.get("_" + key, np.zeros(WORLDS, dtype=bool))
        fin = final.get("_" + key, np.zeros(WORLDS, dtype=bool))
        assert not (top & fin).any(), key  # a world reports a term in one place
        values = np.array(info[key] if key in info else final[key], copy=True)
        values[fin] = final[key][fin]
        out[key], out["_" + key] = values, top | fin
    return out


def assert_same_step(task_out, env_out, task, env):
    (t_obs, t_rew, t_term, t_trunc, t_info), (e_obs, e_rew, e_term, e_trunc, e_info) = task_out, env_out
    # The same worlds in the same state (the task observes MuJoCo's quantities, the VectorEnv q and u).
    np.testing.assert_array_equal(task.batch.q, env.batch.q)
    np.testing.assert_array_equal(task.batch.u, env.batch.u)
    # (A flagged world keeps the state it failed from: here the NaN written into it, observed as 0.)
    np.testing.assert_array_equal(e_obs, np.nan_to_num(np.concatenate([env.batch.q, env.batch.u], axis=1)))
    np.testing.assert_array_equal(t_obs[:, 0], e_obs[:, 0])  # the cart's position
    np.testing.assert_array_equal(t_term, e_term)
    np.testing.assert_array_equal(t_trunc, e_trunc)
    np.testing.assert_array_equal(t_rew, e_rew)
    np.testing.assert_array_equal(task._episode_steps, env._episode_steps)
    np.testing.assert_array_equal(task.batch.params["body.cart.mass"], env.batch.params["body.cart.mass"])
    assert sorted(t_info) == sorted(e_info)
    assert sorted(t_info.get("final_info", {})) == sorted(e_info.get("final_info", {}))
    for key in ("_final_info", "_final_obs"):
        if key in t_info:
            np.testing.assert_array_equal(t_info[key], e_info[key], err_msg=key)
    t_info, e_info = step_reports(t_info), step_reports(e_info)
    for key in t_info:
        if key.startswith("_"):
            np.testing.assert_array_equal(t_info[key], e_info[key], err_msg=key)
    for key in ("reward_survive", "distance_penalty", "velocity_penalty"):
        took = t_info["_" + key]
        np.testing.assert_array_equal(t_info[key][took], e_info[key][took], err_msg=key)
    if "_status" in t_info:
        np.testing.assert_array_equal(t_info["status"], e_info["status"])
    if "_final_obs" in t_info:
        done = t_info["_final_obs"]
        t_final, e_final = t_info["final_obs"][done], e_info["final_obs"][done]
        np.testing.assert_array_equal(t_final[:, 0], e_final[:, 0])                       # cart position
        np.testing.assert_array_equal(t_final[:, 5:8], np.clip(e_final[:, 3:6], -10, 10))  # qvel, as observed


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_the_same_rollout_through_vector_env_and_a_task_follows_the_same_episode_rules(mode):
    task, env = task_and_vector_env(mode)
    t_obs, t_info = task.reset(seed=list(range(100, 100 + WORLDS)))
    e_obs, e_info = env.reset(seed=list(range(100, 100 + WORLDS)))
    assert t_info == e_info == {}
    np.testing.assert_array_equal(task.batch.q, env.batch.q)
    start_q = np.array(env.batch.q)
    masses = np.array(env.batch.params["body.cart.mass"])
    assert np.unique(masses).size == WORLDS and np.all((masses >= 5) & (masses <= 15))
    a, tau = actions_of(task, env)
    seen = {"terminated": 0, "truncated by time": 0, "flagged": 0, "restarted": 0}
    finished = np.zeros(WORLDS, dtype=bool)
    for t in range(STEPS):
        if t == FLAGGED_AT + 1:
            task.batch.u[FLAGGED_WORLD, 1] = np.nan
            env.batch.u[FLAGGED_WORLD, 1] = np.nan
        t_out, e_out = task.step(a), env.step(tau)
        assert_same_step(t_out, e_out, task, env)
        obs, reward, terminated, truncated, info = e_out
        if mode == AutoresetMode.SAME_STEP:
            # Gymnasium's: a world that finished reports its step in final_info, and nothing at the top.
            done = terminated | truncated
            np.testing.assert_array_equal(info["_reward_survive"], ~done)
            np.testing.assert_array_equal(info.get("_final_info", np.zeros(WORLDS, dtype=bool)), done)
            assert "_status" not in info or not info["_status"].any()
        info = step_reports(info)
        flagged = info.get("_status", np.zeros(WORLDS, dtype=bool))
        seen["terminated"] += terminated.sum()
        seen["truncated by time"] += (truncated & ~flagged).sum()
        seen["flagged"] += flagged.sum()
        # A flagged world is truncated, not terminated, with reward 0 and the engine's reason.
        assert np.all(truncated[flagged]) and not np.any(terminated[flagged]) and np.all(reward[flagged] == 0)
        if flagged.any():
            assert all(info["status"][flagged]) and not any(info["status"][~flagged])
        took = info["_reward_survive"]
        if mode == AutoresetMode.NEXT_STEP:
            # The worlds that finished last step start again instead of stepping: first observation,
            # reward 0, no flag, their info terms masked out.
            np.testing.assert_array_equal(~took, finished)
            np.testing.assert_array_equal(obs[finished, :3], start_q[finished])
            assert np.all(reward[finished] == 0) and not np.any((terminated | truncated)[finished])
            seen["restarted"] += finished.sum()
        else:
            assert took.all()
        done = terminated | truncated
        if mode == AutoresetMode.SAME_STEP:
            # The worlds that finished start again in the same step; their last observation in final_obs.
            np.testing.assert_array_equal(e_out[4].get("_final_obs", np.zeros(WORLDS, dtype=bool)), done)
            np.testing.assert_array_equal(obs[done, :3], start_q[done])
            np.testing.assert_array_equal(env._episode_steps[done], 0)
            seen["restarted"] += done.sum()
        else:
            assert "final_obs" not in info and "final_info" not in info
        if mode == AutoresetMode.DISABLED and done.any():
            # Nothing restarts by itself: the finished worlds are reset by mask, in both.
            (t_obs, _), (e_obs, _) = task.reset(options={"reset_mask": done}), env.reset(options={"reset_mask": done})
            np.testing.assert_array_equal(task.batch.q, env.batch.q)
            np.testing.assert_array_equal(t_obs[:, 0], e_obs[:, 0])
            np.testing.assert_array_equal(e_obs[done, :3], start_q[done])
            np.testing.assert_array_equal(env._episode_steps[done], 0)
            seen["restarted"] += done.sum()
        finished = done
    assert all(count > 0 for count in seen.values()), seen
    # Each world that restarted drew a new mass, the same in both environments.
    assert not np.array_equal(np.array(env.batch.params["body.cart.mass"]), masses)


def test_each_info_mask_is_an_array_of_its_own():
    env = tasks.make("HalfCheetah-v5", num_envs=2)
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape, dtype=np.float32)
    *_, first = env.step(a)
    masks = [key for key in first if key.startswith("_")]
    assert {"_x_position", "_reward_ctrl"} <= set(masks)
    assert len({id(first[key]) for key in masks}) == len(masks)
    first["_x_position"][0] = False  # the caller's to change: no other key's mask, no later step's
    assert first["_reward_ctrl"][0]
    *_, second = env.step(a)
    assert all(second[key].all() for key in masks)


def test_vector_env_reports_its_reward_terms_with_masks():
    env = lockstep.VectorEnv(lockstep.load(scene("chain-7.json")), 2,
                             lambda b, o, a: (-np.abs(o[:, 0]), {"angle": o[:, 0]}), action_high=1.0,
                             max_episode_steps=2)
    env.reset(seed=0)
    zero = np.zeros((2, 7))
    for _ in range(2):
        obs, reward, terminated, truncated, info = env.step(zero)
        np.testing.assert_array_equal(info["angle"], obs[:, 0])
        np.testing.assert_array_equal(reward, -np.abs(obs[:, 0]))
        assert info["_angle"].all()
    assert truncated.all() and not terminated.any()
    obs, reward, terminated, truncated, info = env.step(zero)  # NEXT_STEP: both restart, no step taken
    assert not info["_angle"].any() and np.all(reward == 0)


def test_stable_baselines3_wraps_a_vector_env():
    pytest.importorskip("stable_baselines3")
    from lockstep.sb3 import VecEnv
    env = lockstep.VectorEnv(lockstep.load(scene("chain-7.json")), 2, lambda b, o, a: -np.abs(o[:, 0]),
                             action_high=1.0, max_episode_steps=2)
    venv = VecEnv(env)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    first = venv.reset()
    zero = np.zeros((2, 7))
    venv.step(zero)
    obs, reward, done, infos = venv.step(zero)
    assert done.all() and all(i["TimeLimit.truncated"] for i in infos)
    np.testing.assert_array_equal(obs, first)  # restarted in the same step
    assert all(i["terminal_observation"].shape == (14,) for i in infos)
