"""What RL code expects of a vector environment (issue 39's findings, docs/environments.md): checkpoints
restored bit for bit (get_state / set_state, pickling), Gymnasium's seeds, call / get_attr / set_attr,
final_info, float32 spaces, curricula, torch arrays and their normalization, frames for SB3's video
recorder, skrl's wrapper="auto", and one world as a gymnasium.Env."""
import pickle

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import lockstep  # noqa: E402
from lockstep import tasks  # noqa: E402
from conftest import scene  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

TORSO = [{"parameter": "body.torso.mass", "distribution": "uniform", "low": 4.0, "high": 8.0}]


def actions(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    low, high = env.single_action_space.low, env.single_action_space.high
    return [rng.uniform(low, high, env.action_space.shape).astype(np.float32) for _ in range(steps)]


def assert_same_steps(got, expected):
    """Two sequences of step() results equal bit for bit: arrays, flags and every info array."""
    for (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in zip(got, expected, strict=True):
        for a, b in ((o1, o2), (r1, r2), (te1, te2), (tr1, tr2)):
            np.testing.assert_array_equal(a, b)
        assert sorted(i1) == sorted(i2)
        for key in i1:
            if isinstance(i1[key], dict):
                assert_same_steps([(o1, r1, te1, tr1, i1[key])], [(o2, r2, te2, tr2, i2[key])])
            else:
                np.testing.assert_array_equal(i1[key], i2[key], err_msg=key)


# --- 2. checkpoints ---

@pytest.mark.parametrize("name,mode", [("HalfCheetah-v5", AutoresetMode.NEXT_STEP),
                                       ("Ant-v5", AutoresetMode.SAME_STEP)])
def test_a_checkpoint_restores_the_worlds_and_the_episodes_bit_for_bit(name, mode):
    """Checkpointed at the step where every episode ends (resets pending under NEXT_STEP), the next
    steps (new episodes: fresh reset noise and torso masses) are those of the original run, restored
    into the same environment after it went on (its cached MuJoCo state then stale: HalfCheetah's
    first reward was 11.1 off) and into a new one."""
    kw = dict(num_envs=3, max_episode_steps=6, randomize=TORSO, autoreset_mode=mode)
    env = tasks.make(name, **kw)
    env.reset(seed=5)
    acts = actions(env, 14)
    for a in acts[:6]:
        last = env.step(a)
    if mode == AutoresetMode.NEXT_STEP:
        assert last[3].all()  # every episode ends here: their resets are pending in the checkpoint
    state = pickle.loads(pickle.dumps(env.get_state()))
    masses = np.array(env.batch.params["body.torso.mass"])
    q, time = np.array(env.batch.q), np.array(env.batch.time)
    expected = [env.step(a) for a in acts[6:]]
    assert not np.array_equal(env.batch.params["body.torso.mass"], masses)  # new episodes drew new masses

    for target in (env, tasks.make(name, **kw)):
        obs = target.set_state(state)
        np.testing.assert_array_equal(obs, last[0])
        np.testing.assert_array_equal(target.batch.q, q)
        np.testing.assert_array_equal(target.batch.time, time)
        np.testing.assert_array_equal(target.batch.params["body.torso.mass"], masses)
        assert_same_steps([target.step(a) for a in acts[6:]], expected)


def test_a_task_pickles_as_its_arguments_and_its_checkpoint():
    env = gym.make_vec("lockstep/Hopper-v5", num_envs=2, max_episode_steps=4, randomize=[
        {"parameter": "body.torso.mass", "distribution": "normal", "mean": 3.5, "sd": 0.2}])
    env.reset(seed=1)
    acts = actions(env, 9)
    for a in acts[:3]:
        env.step(a)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.spec.id == "lockstep/Hopper-v5" and copy is not env
    assert_same_steps([copy.step(a) for a in acts[3:]], [env.step(a) for a in acts[3:]])


def test_a_vector_env_does_not_pickle_and_says_what_to_use():
    env = lockstep.VectorEnv(scene("chain-7.json"), 2, lambda b, o, a: -np.abs(o[:, 0]), action_high=1.0)
    with pytest.raises(TypeError, match="get_state"):
        pickle.dumps(env)
    env.reset(seed=0)
    state = env.get_state()
    zero = np.zeros((2, 7))
    expected = [env.step(zero) for _ in range(3)]
    env.set_state(state)
    assert_same_steps([env.step(zero) for _ in range(3)], expected)


def test_a_checkpoint_undoes_a_randomization_started_after_it():
    env = tasks.make("Hopper-v5", num_envs=2)
    env.reset(seed=0)
    nominal = np.array(env.batch.params["body.foot.mass"])
    state = env.get_state()
    env.set_randomization([{"parameter": "body.foot.mass", "distribution": "uniform", "low": 9, "high": 10}])
    env.reset()
    assert np.all(env.batch.params["body.foot.mass"] >= 9)
    env.set_state(state)
    np.testing.assert_array_equal(env.batch.params["body.foot.mass"], nominal)
    assert env.randomize == []


def test_set_state_refuses_another_environments_checkpoint():
    state = tasks.make("Hopper-v5", num_envs=2).get_state()
    with pytest.raises(ValueError, match="2 worlds"):
        tasks.make("Hopper-v5", num_envs=3).set_state(state)
    with pytest.raises(ValueError, match="Walker2d"):
        tasks.make("Walker2d-v5", num_envs=2).set_state(state)


# --- 3. seeds ---

def test_gymnasiums_sync_vector_env_seeds_environment_i_with_seed_plus_i():
    """What the seeds below follow: Gymnasium 1.x's SyncVectorEnv.reset(seed=s) resets sub-environment
    i with seed s + i."""
    seen = []

    class Recorder(gym.Env):
        observation_space = action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            seen.append(seed)
            return 0, {}

    gym.vector.SyncVectorEnv([Recorder] * 3).reset(seed=7)
    assert seen == [7, 8, 9]


def test_each_world_starts_from_its_own_seed_whatever_the_others_and_their_number():
    def starts(n, seed):
        env = tasks.make("Ant-v5", num_envs=n, randomize=TORSO)
        obs, _ = env.reset(seed=seed)
        return obs, np.array(env.batch.params["body.torso.mass"]), env

    obs, mass, env = starts(3, [10, 11, 12])
    other, other_mass, _ = starts(3, [10, 99, 12])  # one seed changed: only its world starts elsewhere
    np.testing.assert_array_equal(other[[0, 2]], obs[[0, 2]])
    np.testing.assert_array_equal(other_mass[[0, 2]], mass[[0, 2]])
    assert not np.array_equal(other[1], obs[1]) and other_mass[1] != mass[1]
    more, more_mass, more_env = starts(5, 10)  # an int s is [s, s+1, ...], whatever the number of worlds
    np.testing.assert_array_equal(more[:3], obs)
    np.testing.assert_array_equal(more_mass[:3], mass)
    # The next episode of world 1 depends on its seed and episode count alone, not on which worlds reset.
    env.reset(options={"reset_mask": np.array([False, True, False])})
    more_env.reset(options={"reset_mask": np.array([True, True, True, False, True])})
    np.testing.assert_array_equal(more_env.batch.q[1], env.batch.q[1])
    assert not np.array_equal(env.batch.q[1], starts(3, [10, 11, 12])[2].batch.q[1])


def test_an_unseeded_environment_starts_at_random():
    a, _ = tasks.make("Hopper-v5", num_envs=2).reset()
    b, _ = tasks.make("Hopper-v5", num_envs=2).reset()
    assert not np.array_equal(a, b)


# --- 5. call, get_attr, set_attr; skrl's wrapper="auto"; one world as a gymnasium.Env ---

def test_call_get_attr_and_set_attr_as_gymnasiums_vector_envs():
    env = gym.make_vec("lockstep/Reacher-v5", num_envs=3, render_mode="rgb_array", width=32, height=24)
    assert env.get_attr("dt") == (env.unwrapped.dt,) * 3
    assert env.call("render")[2].shape == (24, 32, 3)  # one frame per sub-environment
    env.set_attr("max_episode_steps", 7)
    assert env.get_attr("max_episode_steps") == (7,) * 3
    env.set_attr("max_episode_steps", [9, 9, 9])
    assert env.unwrapped.max_episode_steps == 9
    with pytest.raises(ValueError, match="one value for all"):
        env.set_attr("max_episode_steps", [1, 2, 3])
    assert env.call("set_options", reward_control_weight=0.5) == (None,) * 3
    assert env.get_attr("options")[0]["reward_control_weight"] == 0.5


def test_skrl_wraps_a_task_and_a_vector_env_with_wrapper_auto():
    pytest.importorskip("skrl")
    torch = pytest.importorskip("torch")
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.envs.wrappers.torch.gymnasium_envs import GymnasiumWrapper
    for env in (gym.make_vec("lockstep/Hopper-v5", num_envs=2, autoreset_mode=AutoresetMode.SAME_STEP),
                lockstep.VectorEnv(scene("chain-7.json"), 2, lambda b, o, a: -np.abs(o[:, 0]), action_high=1.0,
                                   autoreset_mode=AutoresetMode.SAME_STEP)):
        wrapped = wrap_env(env, wrapper="auto", verbose=False)
        assert isinstance(wrapped, GymnasiumWrapper)
        obs, _ = wrapped.reset()
        obs, reward, *_ = wrapped.step(torch.zeros((2,) + wrapped.action_space.shape))
        assert obs.shape == (2,) + wrapped.observation_space.shape and reward.shape == (2, 1)
        wrapped.render()  # skrl's trainers call it: the environment's call("render")


def test_gymnasium_make_gives_one_world_as_an_env():
    from gymnasium.utils.env_checker import check_env
    env = gym.make("lockstep/Hopper-v5", max_episode_steps=5)
    assert isinstance(env.unwrapped, gym.Env) and not isinstance(env.unwrapped, gym.vector.VectorEnv)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=4)
    vector = gym.make_vec("lockstep/Hopper-v5", num_envs=3, max_episode_steps=5)
    vector_obs, _ = vector.reset(seed=2)  # world 2 gets seed 4
    np.testing.assert_array_equal(obs, vector_obs[2])
    assert obs.shape == env.observation_space.shape and info == {}
    for t in range(5):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert isinstance(reward, float) and isinstance(truncated, bool)
        assert "reward_ctrl" in info
    assert truncated or terminated


# --- 6. final_info; NEXT_STEP masks ---

def test_same_step_gives_final_info_as_gymnasium():
    env = tasks.make("HalfCheetah-v5", num_envs=2, max_episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP)
    env.reset(seed=0)
    a = np.zeros((2, 6), dtype=np.float32)
    *_, info = env.step(a)
    assert "final_info" not in info
    obs, reward, terminated, truncated, info = env.step(a)
    assert truncated.all()
    assert info["_final_info"].all() and info["_final_obs"].all()
    final = info["final_info"]
    assert final["_x_position"].all() and np.all(final["x_position"] != 0)
    assert not info["_x_position"].any()  # the top-level info is the new episodes' (Gymnasium's SyncVectorEnv)


def test_next_step_resets_carry_no_reward_terms():
    env = tasks.make("HalfCheetah-v5", num_envs=2, max_episode_steps=2)
    env.reset(seed=0)
    a = np.zeros((2, 6), dtype=np.float32)
    env.step(a)
    *_, info = env.step(a)
    assert info["_reward_ctrl"].all()
    obs, reward, terminated, truncated, info = env.step(a)  # both restart instead of stepping
    assert not any(info[key].any() for key in info if key.startswith("_"))
    assert np.all(reward == 0)


# --- 7. float32 ---

@pytest.mark.parametrize("array", ["numpy", "torch"])
def test_float32_observations_and_their_space(array):
    if array == "torch":
        pytest.importorskip("torch")
    env = tasks.make("Ant-v5", num_envs=2, dtype="float32", array=array)
    assert env.single_observation_space.dtype == np.float32 and env.observation_space.dtype == np.float32
    obs, _ = env.reset(seed=0)
    obs2, *_ = env.step(np.zeros((2, 8), dtype=np.float32))
    for o in (obs, obs2):
        o = o.numpy() if array == "torch" else o
        assert o.dtype == np.float32 and o in env.observation_space


# --- 8. curricula ---

def test_randomization_and_options_change_between_episodes():
    env = gym.make_vec("lockstep/Hopper-v5", num_envs=4, randomize=[
        {"parameter": "body.torso.mass", "distribution": "uniform", "low": 3.0, "high": 3.5}])
    nominal = tasks.make("Hopper-v5", num_envs=1).batch.params["body.torso.mass"][0]
    env.reset(seed=0)
    first = np.array(env.unwrapped.batch.params["body.torso.mass"])
    assert np.all((first >= 3.0) & (first <= 3.5))
    # Gymnasium's set_attr takes a list as one value per sub-environment: a list value goes in one.
    env.set_attr("randomize", [[{"parameter": "body.torso.mass", "distribution": "uniform", "low": 6.0, "high": 7.0}]] * 4)
    np.testing.assert_array_equal(env.unwrapped.batch.params["body.torso.mass"], first)  # in effect at resets
    mask = np.array([True, True, False, False])
    env.reset(options={"reset_mask": mask})
    masses = np.array(env.unwrapped.batch.params["body.torso.mass"])
    assert np.all((masses[mask] >= 6.0) & (masses[mask] <= 7.0))
    np.testing.assert_array_equal(masses[~mask], first[~mask])
    env.unwrapped.set_randomization(None)  # the worlds return to the model's mass as they reset
    env.reset()
    np.testing.assert_array_equal(env.unwrapped.batch.params["body.torso.mass"], nominal)

    a = np.full((4, 3), 0.5, dtype=np.float32)
    *_, info = env.step(a)
    env.unwrapped.set_options(ctrl_cost_weight=2e-3)  # twice Gymnasium's
    *_, twice = env.step(a)
    np.testing.assert_allclose(twice["reward_ctrl"], 2 * info["reward_ctrl"])
    with pytest.raises(TypeError):
        env.unwrapped.options["ctrl_cost_weight"] = 1.0  # read-only: set_options checks
    with pytest.raises(ValueError, match="observation"):
        env.unwrapped.set_options(exclude_current_positions_from_observation=False)
    with pytest.raises(TypeError, match="unknown option"):
        env.unwrapped.set_options(ctrl_weight=1.0)


# --- 9. torch ---

def test_torch_arrays_in_the_engines_dtype_and_every_info_array_torch():
    torch = pytest.importorskip("torch")
    env = tasks.make("Hopper-v5", num_envs=3, dtype="float32", array="torch", max_episode_steps=2,
                     autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == torch.float32
    for _ in range(2):
        obs, reward, terminated, truncated, info = env.step(torch.zeros((3, 3)))
    assert obs.dtype == torch.float32 and reward.dtype == torch.float32
    assert terminated.dtype == truncated.dtype == torch.bool
    arrays = {**info, **{"final_info." + k: v for k, v in info["final_info"].items()}}
    del arrays["final_info"]
    assert all(isinstance(v, torch.Tensor) for v in arrays.values()), \
        {k: type(v) for k, v in arrays.items() if not isinstance(v, torch.Tensor)}


@pytest.mark.parametrize("array", ["numpy", "torch"])
def test_normalization_runs_on_numpy_and_torch_arrays(array):
    torch = pytest.importorskip("torch") if array == "torch" else None
    from lockstep.wrappers import NormalizeObservation, NormalizeReward, RunningMeanStd
    env = NormalizeReward(NormalizeObservation(gym.make_vec("lockstep/Hopper-v5", num_envs=8, array=array,
                                                            max_episode_steps=7,
                                                            autoreset_mode=AutoresetMode.SAME_STEP)))
    env.reset(seed=0)
    for a in actions(env, 20):
        obs, reward, *_ = env.step(torch.as_tensor(a) if torch else a)
    assert type(obs) is type(reward) and (obs.dtype == torch.float64 if torch else obs.dtype == np.float64)
    rms = env.env.obs_rms
    assert type(rms.mean) is type(obs) and rms.count > 8 * 20
    # Frozen, and shifted so that every normalized value is far below 0: final_obs is normalized too
    # (under SAME_STEP, which Gymnasium's wrapper refuses).
    env.env.update_running_mean = False
    rms.mean = rms.mean + 1e3
    finals = 0
    for a in actions(env, 10):
        obs, reward, terminated, truncated, info = env.step(torch.as_tensor(a) if torch else a)
        assert (obs < -10).all()
        if "final_obs" in info:
            finals += 1
            assert (info["final_obs"][info["_final_obs"]] < -10).all()
    assert finals
    # The statistic is that of every observation seen: equal to NumPy's over the same data.
    x = np.random.default_rng(0).normal(3.0, 2.0, (100, 4))
    r = RunningMeanStd(epsilon=0.0)
    for part in np.split(x, 4):
        r.update(torch.as_tensor(part) if torch else part)
    np.testing.assert_allclose(np.asarray(r.mean), x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(r.var), x.var(0), rtol=1e-12)


# --- 10. frames for SB3's VecVideoRecorder ---

def test_stable_baselines3_video_recorder_gets_the_frames(tmp_path):
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("moviepy")
    from stable_baselines3.common.vec_env import VecVideoRecorder
    from lockstep.sb3 import VecEnv
    env = VecEnv(gym.make_vec("lockstep/Hopper-v5", num_envs=2, render_mode="rgb_array", width=64, height=48))
    images = env.get_images()
    assert len(images) == 2 and images[0].shape == (48, 64, 3) and images[0].dtype == np.uint8
    recorder = VecVideoRecorder(env, str(tmp_path), record_video_trigger=lambda step: step == 0, video_length=5)
    recorder.reset()
    for _ in range(6):
        recorder.step(np.zeros((2, 3), dtype=np.float32))
    recorder.close()
    assert list(tmp_path.glob("*.mp4"))
