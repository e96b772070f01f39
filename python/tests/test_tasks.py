"""Gymnasium's MuJoCo v5 tasks as Lockstep vector environments (lockstep.tasks), checked against
Gymnasium's own MuJoCo environments (the `mujoco` package: skipped without it): the same spaces,
the same observation and reward terms at the same state (the contact terms excepted: Lockstep's
contacts are not MuJoCo's), the same termination; and the vector environment's semantics."""
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import lockstep  # noqa: E402  (registers lockstep/<task>)
from lockstep import tasks  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

TASKS = list(tasks.TASKS)


def mujoco_env(name, **kwargs):
    """Gymnasium's own MuJoCo environment of a task, made with Gymnasium's keyword arguments."""
    pytest.importorskip("mujoco")
    pytest.importorskip("imageio")  # Gymnasium's MuJoCo environments import it
    return gym.make(name, **kwargs).unwrapped


# Observation slices that hold contact forces (not compared) per task, by Gymnasium's structure.
def contact_slice(name, obs_size):
    if name == "Ant-v5":
        return slice(obs_size - 13 * 6, obs_size)
    if name == "Humanoid-v5":
        return slice(obs_size - 13 * 6, obs_size)
    return slice(0, 0)


def set_world_state(env, world, qpos, qvel):
    """Gives world `world` of a Lockstep task MuJoCo's state qpos, qvel."""
    q, u = env.state.to_lockstep(qpos[None], qvel[None])
    env.batch.set_state(q, u, indices=[world])
    env.state.invalidate()


@pytest.mark.parametrize("name", TASKS)
def test_spaces_match_gymnasium(name):
    ref = mujoco_env(name)
    env = gym.make_vec(f"lockstep/{name}", num_envs=3)
    assert env.single_observation_space.shape == ref.observation_space.shape
    assert env.single_observation_space.dtype == ref.observation_space.dtype
    assert env.single_action_space.dtype == ref.action_space.dtype == np.float32
    np.testing.assert_array_equal(env.single_action_space.low, ref.action_space.low)
    np.testing.assert_array_equal(env.single_action_space.high, ref.action_space.high)
    assert env.unwrapped.dt == pytest.approx(ref.dt, rel=1e-15)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.action_space.shape == (3,) + ref.action_space.shape
    obs, info = env.reset(seed=1)
    assert obs.shape == (3,) + ref.observation_space.shape and np.all(np.isfinite(obs))
    env.close()


def progress_of(name, ref):
    """What Gymnasium's step() reads before stepping, from MuJoCo's data."""
    if name == "Ant-v5":
        return ref.data.body(ref._main_body).xpos[:2].copy()
    if name == "Humanoid-v5":
        from gymnasium.envs.mujoco.humanoid_v5 import mass_center
        return mass_center(ref.model, ref.data)
    return ref.data.qpos[0]


def reference_terms(name, ref, before, action):
    """Gymnasium's own reward and termination functions at MuJoCo's state after mj_forward.

    Gymnasium's step() reads xpos, xipos and site_xpos straight after mj_step, which computed them
    before its last integration (one MuJoCo timestep old); at the same state, with mj_forward, its
    reward functions are compared here (docs/environments.md)."""
    if name == "InvertedDoublePendulum-v5":
        x, _, y = ref.data.site_xpos[0]
        terminated = bool(y <= 1)
        reward, info = ref._get_rew(x, y, terminated)
        return reward, terminated, info
    if name in ("Reacher-v5", "Pusher-v5"):
        reward, info = ref._get_rew(action)
        return reward, False, info
    after = progress_of(name, ref)
    v = (after - before) / ref.dt
    reward, info = ref._get_rew(v if np.ndim(v) == 0 else v[0], action)
    terminated = (not ref.is_healthy) if hasattr(ref, "is_healthy") else False
    return reward, terminated, info


@pytest.mark.parametrize("name", TASKS)
def test_observations_rewards_and_termination_equal_gymnasiums_at_the_same_state(name):
    import mujoco
    ref = mujoco_env(name)
    env = tasks.make(name, num_envs=2)
    rng = np.random.default_rng(7)
    ref.reset(seed=3)
    terminations = 0
    for trial in range(6):
        # A state A (Gymnasium's reset state plus some motion), an action, and MuJoCo's step to B.
        qpos_a = ref.data.qpos.copy()
        qvel_a = ref.data.qvel.copy() + 0.3 * rng.standard_normal(ref.model.nv)
        if name == "Reacher-v5":
            qvel_a[-2:] = 0
        for j in env.state.free:  # Gymnasium's reset noise leaves quaternions off unit length
            a = j["qpos_adr"] + 3
            qpos_a[a:a + 4] /= np.linalg.norm(qpos_a[a:a + 4])
        ref.set_state(qpos_a, qvel_a)
        action = rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32)
        # Lockstep at A: the observation (the actuator forces of this action included).
        env.batch.tau[...] = 0
        env.batch.tau[:, env._act_u] = action
        set_world_state(env, 1, qpos_a, qvel_a)
        ref.data.ctrl[:] = action
        mujoco.mj_forward(ref.model, ref.data)
        ref_obs = ref._get_obs()
        obs = env._observe()[1]
        keep = np.ones(obs.size, dtype=bool)
        keep[contact_slice(name, obs.size)] = False
        np.testing.assert_allclose(obs[keep], ref_obs[keep], rtol=1e-10, atol=1e-10,
                                   err_msg=f"{name}: observation at state A (trial {trial})")
        before, ref_before = env._progress(), progress_of(name, ref)
        # MuJoCo steps from A to B; both score the step A -> B at B.
        ref.step(action)
        mujoco.mj_forward(ref.model, ref.data)
        ref_reward, ref_terminated, ref_info = reference_terms(name, ref, ref_before, action)
        set_world_state(env, 1, ref.data.qpos.copy(), ref.data.qvel.copy())
        reward, terminated, info = env._reward(before, np.asarray(action, dtype=np.float64)[None].repeat(2, 0))
        assert bool(terminated[1]) == ref_terminated, f"{name}: termination at B"
        for key, value in ref_info.items():
            if key == "reward_contact":  # Lockstep's contacts are not MuJoCo's
                continue
            # Gymnasium's control costs are float32 sums of the float32 actions.
            tol = 1e-6 if key == "reward_ctrl" else 1e-10
            np.testing.assert_allclose(info[key][1], value, rtol=tol, atol=tol, err_msg=f"{name}: {key}")
        contact = ref_info.get("reward_contact", 0.0), info["reward_contact"][1] if "reward_contact" in info else 0.0
        assert reward[1] - contact[1] == pytest.approx(ref_reward - contact[0], rel=1e-6, abs=1e-6)
        terminations += ref_terminated
        if ref_terminated:
            ref.reset(seed=trial)


def test_humanoid_com_inertia_velocity_and_actuator_forces_are_mujocos():
    """cinert, cvel and qfrc_actuator: MuJoCo's own arrays at the same state, body by body."""
    ref = mujoco_env("Humanoid-v5")
    import mujoco
    env = tasks.make("Humanoid-v5", num_envs=1)
    ref.reset(seed=0)
    qvel = np.random.default_rng(1).standard_normal(ref.model.nv)
    ref.set_state(ref.data.qpos.copy(), qvel)
    mujoco.mj_forward(ref.model, ref.data)
    set_world_state(env, 0, ref.data.qpos.copy(), qvel)
    s = env.state
    xmat, xpos, xipos = s.frames()
    np.testing.assert_allclose(xpos[0], ref.data.xpos, atol=1e-12)
    np.testing.assert_allclose(xipos[0], ref.data.xipos, atol=1e-12)
    c = s.subtree_com(xipos)
    np.testing.assert_allclose(s.cinert(xmat, xipos, c)[0, 1:], ref.data.cinert[1:], atol=1e-10)
    np.testing.assert_allclose(s.cvel(c)[0, 1:], ref.data.cvel[1:], atol=1e-10)
    np.testing.assert_allclose(s.qvel()[0], qvel, atol=1e-12)


def test_ant_contact_forces_are_lockstep_ground_forces_per_body():
    """Under the compliant law, cfrc_ext from the engine's bodyContact field: standing on the floor, the legs' forces carry the
    weight (sum of vertical forces = m g within 2% once settled) and the torso touches nothing."""
    env = tasks.make("Ant-v5", num_envs=2, include_cfrc_ext_in_observation=True,
                     contact_force_range=(-1e9, 1e9), contact_law="compliant")
    env.reset(seed=0)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    for _ in range(80):  # 4 s: settled
        env.step(zero)
    s = env.state
    _, _, xipos = s.frames()
    f = s.cfrc_ext(s.subtree_com(xipos))
    weight = sum(b["mass"] for b in s.layout["bodies"]) * 9.81
    np.testing.assert_allclose(f[:, :, 5].sum(axis=1), weight, rtol=0.01)
    assert np.all(f[:, 1] == 0) or np.all(np.abs(f[:, 1, 3:]) < 1e-9 * weight)


def test_reset_noise_keeps_quaternions_unit_and_seeds_reproduce():
    env = tasks.make("Ant-v5", num_envs=64)
    obs1, _ = env.reset(seed=123)
    q = env.state.qpos()
    np.testing.assert_allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0, atol=1e-14)
    assert np.std(q[:, 3:7], axis=0).max() > 1e-3  # the orientation was perturbed
    obs2, _ = env.reset(seed=123)
    np.testing.assert_array_equal(obs1, obs2)
    obs3, _ = env.reset(seed=list(range(64)))
    obs4, _ = env.reset(seed=list(range(64)))
    np.testing.assert_array_equal(obs3, obs4)
    assert not np.array_equal(obs1, obs3)


def test_next_step_autoreset_returns_the_first_observation_with_zero_reward():
    env = tasks.make("HalfCheetah-v5", num_envs=4, max_episode_steps=3)
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape, dtype=np.float32)
    for k in range(3):
        obs, reward, terminated, truncated, _ = env.step(a)
    assert truncated.all() and not terminated.any()
    obs, reward, terminated, truncated, _ = env.step(a)
    assert np.all(reward == 0) and not truncated.any() and not terminated.any()
    np.testing.assert_array_equal(env.state.qvel()[:, 0] == env.state.qvel()[:, 0], True)
    assert np.all(env._episode_steps == 0)


def test_same_step_autoreset_gives_final_observations():
    env = tasks.make("Hopper-v5", num_envs=4, max_episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape, dtype=np.float32)
    obs, _, _, truncated, info = env.step(a)
    assert "final_obs" not in info
    obs, _, _, truncated, info = env.step(a)
    assert truncated.all() and info["_final_obs"].all()
    assert not np.array_equal(info["final_obs"], obs)  # obs is the new episode's first
    assert np.all(env._episode_steps == 0)


def test_disabled_autoreset_and_reset_mask():
    env = tasks.make("Reacher-v5", num_envs=4, autoreset_mode="Disabled")
    obs0, _ = env.reset(seed=5)
    a = np.full(env.action_space.shape, 0.5, dtype=np.float32)
    for _ in range(3):
        obs, *_ = env.step(a)
    mask = np.array([True, False, True, False])
    obs_r, _ = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(obs_r[~mask], obs[~mask])
    assert not np.allclose(obs_r[mask], obs[mask])
    assert np.all(env._episode_steps[mask] == 0) and np.all(env._episode_steps[~mask] == 3)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": [1, 0]})


def test_a_flagged_world_is_finite_truncated_named_and_reset():
    env = tasks.make("InvertedDoublePendulum-v5", num_envs=3)
    env.reset(seed=0)
    env.batch.u[1, 1] = np.nan  # world 1 can no longer step
    a = np.zeros(env.action_space.shape, dtype=np.float32)
    obs, reward, terminated, truncated, info = env.step(a)
    assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward))
    assert truncated[1] and not terminated[1] and reward[1] == 0
    assert info["_status"][1] and not info["_status"][0] and "finite" in info["status"][1].lower() or info["status"][1]
    obs, reward, terminated, truncated, info = env.step(a)  # NEXT_STEP: world 1 starts again
    assert env.batch.status[1] == 0 and "_status" not in info
    assert np.all(np.isfinite(obs))


@pytest.mark.parametrize("name", ["Reacher-v5", "Hopper-v5"])
def test_bang_bang_actions_flag_no_world(name):
    """The engine's steps hold under the hardest actions: every control at a bound, at random."""
    env = tasks.make(name, num_envs=64)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    high = env.single_action_space.high
    for _ in range(300):
        obs, reward, terminated, truncated, info = env.step(
            (rng.choice([-1.0, 1.0], size=env.action_space.shape) * high).astype(np.float32))
        assert "_status" not in info, info.get("status")


def test_closed_environment_raises_a_clear_error():
    env = gym.make_vec("lockstep/Reacher-v5", num_envs=2)
    env.reset(seed=0)
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError, match="closed"):
        env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    with pytest.raises(gym.error.ClosedEnvironmentError, match="closed"):
        env.reset()


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(TypeError, match="forward_reward_wieght"):
        tasks.make("Hopper-v5", forward_reward_wieght=2)
    with pytest.raises(ValueError, match="engine_dt"):
        tasks.make("Hopper-v5", engine_dt=3e-4)
    with pytest.raises(ValueError, match="no task named"):
        tasks.make("Hoper-v5")
    with pytest.raises(ValueError, match='contact_law must be "mujoco" or "compliant", not \'mujok\''):
        tasks.make("Hopper-v5", contact_law="mujok")
    with pytest.raises(ValueError, match="kp"):
        tasks.make("Reacher-v5", action="target")
    with pytest.raises(ValueError, match="body.nothing.mass"):
        tasks.make("Hopper-v5", randomize=[{"parameter": "body.nothing.mass", "distribution": "uniform",
                                            "low": 1, "high": 2}])
    with pytest.raises(ValueError, match="distribution"):
        tasks.make("Hopper-v5", randomize=[{"parameter": "body.torso.mass", "distribution": "uniformm",
                                            "low": 1, "high": 2}])


def test_domain_randomization_draws_new_values_for_the_worlds_that_reset():
    vary = [{"parameter": "body.torso.mass", "distribution": "uniform", "low": 3.0, "high": 4.0}]
    env = tasks.make("Hopper-v5", num_envs=8, randomize=vary)
    env.reset(seed=11)
    m0 = np.array(env.batch.params["body.torso.mass"])
    assert np.all((m0 >= 3) & (m0 <= 4)) and np.unique(m0).size == 8
    env.reset(options={"reset_mask": np.arange(8) < 3})
    m1 = np.array(env.batch.params["body.torso.mass"])
    assert np.all(m1[3:] == m0[3:]) and np.all(m1[:3] != m0[:3]) and np.all((m1 >= 3) & (m1 <= 4))
    again = tasks.make("Hopper-v5", num_envs=8, randomize=vary)
    again.reset(seed=11)
    np.testing.assert_array_equal(np.array(again.batch.params["body.torso.mass"]), m0)


def test_position_targets_hold_a_joint():
    env = tasks.make("Reacher-v5", num_envs=2, action="target", kp=20.0, kd=10.0, max_episode_steps=1000)
    env.reset(seed=0)
    target = np.array([[0.5, -0.4], [-0.3, 0.2]], dtype=np.float32)
    for _ in range(200):
        env.step(target)
    np.testing.assert_allclose(env.state.qpos()[:, :2], target, atol=0.02)


def test_position_targets_are_limited_to_the_motors_strength():
    """action="target": each joint's PD torque is limited to what its motor can give, |gear| times
    the largest |ctrl| (MuJoCo's compiled actuator), and a far target meets that limit."""
    ref = mujoco_env("Reacher-v5").model
    env = tasks.make("Reacher-v5", num_envs=1, action="target", kp=1e6, kd=0.0)
    env.reset(seed=0)
    names = env.model.speed_names
    limits = []
    for i, u in enumerate(env._act_u):
        limit = abs(ref.actuator_gear[i, 0]) * np.abs(ref.actuator_ctrlrange[i]).max()
        assert env.batch.params[f"effort_limit.{names[u]}"][0] == pytest.approx(limit, rel=1e-12)
        limits.append(limit)
    env.step(np.array([[3.0, -3.0]], dtype=np.float32))
    effort = np.asarray(env.batch.field("actuator"))[0, 2 * env._act_u]  # effort, power per speed
    np.testing.assert_allclose(np.abs(effort), limits, rtol=1e-12)


def test_compliant_reset_state_holds_every_joint_inside_its_range():
    """Under the compliant law a task starts every limited hinge inside its range (Ant's qpos0 puts
    the ankles outside theirs, where a stop would start compressed): no stop pushes at the reset."""
    ref = mujoco_env("Ant-v5").model
    env = tasks.make("Ant-v5", num_envs=2, reset_noise_scale=0.0, contact_law="compliant")
    env.reset(seed=0)
    qpos = env.state.qpos()
    for j in np.flatnonzero(ref.jnt_limited):
        lo, hi = ref.jnt_range[j]
        assert np.all((lo <= qpos[:, ref.jnt_qposadr[j]]) & (qpos[:, ref.jnt_qposadr[j]] <= hi)), ref.joint(j).name
    assert np.all(np.asarray(env.batch.field("stopForce")) == 0)


def computing_in_torch(env):
    """The task computing with torch tensors on the CPU, as it does on CUDA (array="torch" on the CPU
    computes with NumPy and returns tensors that share the arrays' memory)."""
    from lockstep.arrays import TorchOps
    from lockstep.mujoco_state import MujocoState
    env.xp = TorchOps(env.batch.dtype, "cpu")
    env.state = MujocoState(env.batch, env.layout, env.xp)
    env._status, env._as_torch = env.xp.view(env.batch.field("status")), None
    return env


@pytest.mark.parametrize("name", TASKS)
def test_torch_arrays_give_the_numpy_results(name):
    """array="torch" on the CPU: NumPy's results as tensors, bit for bit; computed with torch, as on
    CUDA: the same to 1e-12 (matrix products may sum in another order)."""
    torch = pytest.importorskip("torch")
    a = tasks.make(name, num_envs=4, autoreset_mode=AutoresetMode.SAME_STEP, max_episode_steps=2)
    b = tasks.make(name, num_envs=4, array="torch", autoreset_mode=AutoresetMode.SAME_STEP, max_episode_steps=2)
    c = computing_in_torch(tasks.make(name, num_envs=4, array="torch", autoreset_mode=AutoresetMode.SAME_STEP,
                                      max_episode_steps=2))
    oa, _ = a.reset(seed=2)
    ob, _ = b.reset(seed=2)
    oc, _ = c.reset(seed=2)
    assert isinstance(ob, torch.Tensor) and isinstance(oc, torch.Tensor)
    np.testing.assert_array_equal(oa, ob.numpy())
    np.testing.assert_allclose(oa, oc.numpy(), rtol=1e-12, atol=1e-12)
    act = np.random.default_rng(0).uniform(-0.4, 0.4, a.action_space.shape).astype(np.float32)
    for _ in range(3):
        ra, rb, rc = a.step(act), b.step(torch.as_tensor(act)), c.step(torch.as_tensor(act))
        for x, y, z in zip(ra[:4], rb[:4], rc[:4]):
            assert isinstance(y, torch.Tensor) and isinstance(z, torch.Tensor)
            np.testing.assert_array_equal(np.asarray(x), y.numpy())
            np.testing.assert_allclose(np.asarray(x), z.numpy(), rtol=1e-12, atol=1e-12)
        for key in ra[4]:
            if key.startswith("_") or key == "final_obs":
                assert isinstance(rb[4][key], torch.Tensor) and isinstance(rc[4][key], torch.Tensor)
                np.testing.assert_allclose(np.asarray(ra[4][key]), rc[4][key].numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", TASKS)
def test_stable_baselines3_drives_each_task(name):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from lockstep.sb3 import VecEnv
    env = VecEnv(gym.make_vec(f"lockstep/{name}", num_envs=4, max_episode_steps=40))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    obs = env.reset()
    assert obs.shape == (4,) + env.observation_space.shape
    env.close()


@pytest.mark.parametrize("name", TASKS)
def test_skrl_drives_each_task(name):
    pytest.importorskip("skrl")
    torch = pytest.importorskip("torch")
    from skrl.envs.wrappers.torch import wrap_env
    env = wrap_env(gym.make_vec(f"lockstep/{name}", num_envs=4, max_episode_steps=50,
                                autoreset_mode=AutoresetMode.SAME_STEP), wrapper="gymnasium")
    obs, _ = env.reset()
    steps = 0
    for _ in range(200):
        actions = torch.as_tensor(np.stack([env.action_space.sample() for _ in range(4)]))
        obs, reward, terminated, truncated, _ = env.step(actions)
        assert torch.isfinite(obs).all() and torch.isfinite(reward).all()
        steps += 1
    assert steps == 200
    env.close()


@pytest.mark.parametrize("name", ["Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "InvertedDoublePendulum-v5",
                                  "Humanoid-v5", "Pusher-v5"])
def test_mujoco_law_steps_as_gymnasiums_mujoco(name):
    """contact_law="mujoco": the task steps at the XML's timestep with its integrator and MuJoCo's
    soft constraints, so one env step (frame_skip steps) from a state along Gymnasium's own rollout,
    with the same action, lands where Gymnasium's MuJoCo (PyPI, its Newton solver) lands."""
    ref = mujoco_env(name)
    ref.model.opt.tolerance = 1e-14  # MuJoCo's solve to convergence, as Lockstep's
    ref.model.opt.iterations = 1000
    env = tasks.make(name, num_envs=1, contact_law="mujoco")
    assert env.frame_skip * env.layout["timestep"] == pytest.approx(ref.dt)
    rng = np.random.default_rng(5)
    ref.reset(seed=5)
    worst, touching = 0.0, 0
    for trial in range(8):
        for _ in range(10):
            ref.step(rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32))
        action = rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32)
        set_world_state(env, 0, ref.data.qpos.copy(), ref.data.qvel.copy())
        touching += ref.data.ncon > 0
        env.batch.tau[...] = 0
        env.batch.tau[:, env._act_u] = action
        env.batch.step(env.frame_skip, env.layout["timestep"])
        ref.do_simulation(action, ref.frame_skip)
        env.state.invalidate()
        qpos, qvel = env.state.qpos()[0], env.state.qvel()[0]
        scale = max(1.0, np.abs(ref.data.qvel).max())
        error = max(np.abs(qpos - ref.data.qpos).max(), np.abs(qvel - ref.data.qvel).max() / scale)
        worst = max(worst, error)
    assert env.batch.status[0] == 0
    print(f"{name}: largest difference from Gymnasium's MuJoCo after one env step: {worst:.2e}")
    assert worst < 1e-6, f"{name}: {worst:.2e}"
    if name != "InvertedDoublePendulum-v5":
        assert touching > 0


def compare_env_steps_with_gymnasium(name, **kwargs):
    """Env steps through the task (env.step, MuJoCo's law) beside Gymnasium's from states along
    Gymnasium's own rollout, three in a row from each; returns the largest differences (observation,
    relative to its largest value; reward; each reward term of info), the env steps compared and
    those with contacts."""
    ref = mujoco_env(name, **kwargs)
    ref.model.opt.tolerance = 1e-14
    ref.model.opt.iterations = 1000
    env = tasks.make(name, num_envs=1, contact_law="mujoco", **kwargs)
    rng = np.random.default_rng(5)
    ref.reset(seed=5)
    worst_obs, worst_reward, worst_term, compared, touching = 0.0, 0.0, 0.0, 0, 0
    for trial in range(6):
        for _ in range(10):
            _, _, terminated, truncated, _ = ref.step(rng.uniform(ref.action_space.low, ref.action_space.high)
                                                      .astype(np.float32))
            if terminated or truncated:
                ref.reset(seed=int(rng.integers(1000)))
        env.reset(seed=trial)  # (an episode that ended would make the next env.step a reset)
        # Both from this state as set (MuJoCo's mj_forward at it, as Gymnasium's set_state).
        ref.set_state(ref.data.qpos.copy(), ref.data.qvel.copy())
        set_world_state(env, 0, ref.data.qpos.copy(), ref.data.qvel.copy())
        for _ in range(3):
            action = rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32)
            obs, reward, terminated, _, info = env.step(action[None])
            ref_obs, ref_reward, ref_terminated, _, ref_info = ref.step(action)
            touching += ref.data.ncon > 0
            assert bool(terminated[0]) == ref_terminated
            scale = max(1.0, float(np.abs(ref_obs).max()))
            worst_obs = max(worst_obs, float(np.abs(np.asarray(obs)[0] - ref_obs).max()) / scale)
            worst_reward = max(worst_reward, abs(float(reward[0]) - ref_reward))
            for key, value in ref_info.items():
                if key.startswith("reward_") or key.endswith("_cost"):
                    worst_term = max(worst_term, abs(float(np.asarray(info[key])[0]) - float(value)))
            compared += 1
            if ref_terminated:
                break
    return worst_obs, worst_reward, worst_term, compared, touching


@pytest.mark.parametrize("name", TASKS)
def test_mujoco_law_observations_and_rewards_are_gymnasiums(name):
    """The tasks' default, contact_law="mujoco": env steps through the task (env.step) from states
    along Gymnasium's own rollout give Gymnasium's observation (contact forces included), reward
    (every term) and termination: three env steps in a row from each state, so that what a step reads
    from the one before (positions whose rate is rewarded) is MuJoCo's after mj_step too, its last RK4
    stage's. (test_task_rules.py: the same with other keywords.)"""
    worst_obs, worst_reward, worst_term, compared, touching = compare_env_steps_with_gymnasium(name)
    print(f"{name}: observation {worst_obs:.1e} (relative), reward {worst_reward:.1e}, terms {worst_term:.1e} "
          f"from Gymnasium's after an env step; {touching} steps with contacts")
    assert compared >= 6 and worst_obs < 1e-6 and worst_reward < 1e-6 and worst_term < 1e-6, \
        (worst_obs, worst_reward, worst_term)
    if name in ("Ant-v5", "Humanoid-v5", "Hopper-v5", "Walker2d-v5", "HalfCheetah-v5"):
        assert touching > 0


@pytest.mark.parametrize("name", ["Ant-v5", "Humanoid-v5", "HalfCheetah-v5"])
def test_mujoco_law_bodies_after_a_step_are_mujocos_after_mj_step(name):
    """Under MuJoCo's law MuJoCo's per-body quantities after a step are mjData's after mj_step (and
    Gymnasium's mj_rnePostConstraint): the last evaluation's kinematics (RK4's fourth stage,
    HalfCheetah's Euler: the last step's start), and cfrc_ext from each geom's own body (Ant's legs'
    and Humanoid's feet are welded bodies); after a state is set they are MuJoCo's after mj_forward,
    with cfrc_ext zero as MuJoCo's after mj_resetData."""
    ref = mujoco_env(name)
    ref.model.opt.tolerance = 1e-14
    ref.model.opt.iterations = 1000
    env = tasks.make(name, num_envs=1, contact_law="mujoco")
    rng = np.random.default_rng(11)
    ref.reset(seed=11)
    feet = [b for b in ("right_foot", "left_foot", "front_left_leg") if b in env.state.body_names]
    foot_force = 0.0
    for trial in range(8):
        for _ in range(8):
            ref.step(rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32))
        ref.set_state(ref.data.qpos.copy(), ref.data.qvel.copy())
        ref.data.cfrc_ext[:] = 0  # as after Gymnasium's reset (mj_resetData); set_state alone keeps it
        set_world_state(env, 0, ref.data.qpos.copy(), ref.data.qvel.copy())
        cases = [("set", None)]
        action = rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32)
        cases.append(("stepped", action))
        for what, act in cases:
            if act is not None:
                env.batch.tau[...] = 0
                env.batch.tau[:, env._act_u] = act
                env.batch.step(env.frame_skip, env.layout["timestep"])
                ref.do_simulation(act, ref.frame_skip)
                env.state.invalidate()
            xmat, xpos, xipos = env.state.frames()
            got = {"xpos": xpos[0], "xmat": xmat[0].reshape(-1, 9), "xipos": xipos[0],
                   "cinert": env.state.cinert()[0], "cvel": env.state.cvel()[0], "cfrc_ext": env.state.cfrc_ext()[0]}
            for key, value in got.items():
                want = getattr(ref.data, key)
                scale = max(1.0, float(np.abs(want).max()))
                tol = 1e-6 if key == "cfrc_ext" else 1e-8  # contact forces: a stiff solve's, to 1e-9 in the state
                np.testing.assert_allclose(value, want, rtol=0, atol=tol * scale,
                                           err_msg=f"{name}: {key} after the state was {what} (trial {trial})")
            for b in feet:
                foot_force = max(foot_force, float(np.abs(ref.data.cfrc_ext[env.state.body_names.index(b)]).max()))
    if name == "Humanoid-v5":
        assert foot_force > 1.0  # the welded feet carried contact forces in some state


def pusher_states_with_fingers_on_the_object(ref, rng, count):
    """States of Gymnasium's Pusher-v5 where the fingers' capsules press on the object's side: a
    random arm pose (joints uniform in their ranges, speeds in [-1, 1]), the object placed beside a
    random point of a finger that is within the object's height, 1 to 5 mm into it; kept where
    MuJoCo (its default multiccd) makes one contact per finger touching and no finger's segment
    enters the cylinder (docs/mjcf.md)."""
    import mujoco
    m, d = ref.model, ref.data
    fingers = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE and m.geom_contype[g]]
    obj = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER and m.geom_contype[g]][0]
    home = m.body_pos[m.geom_bodyid[obj]]
    out = []
    while len(out) < count:
        qpos, qvel = m.qpos0.copy(), np.zeros(m.nv)
        qpos[:7] = rng.uniform(m.jnt_range[:7, 0], m.jnt_range[:7, 1])
        qvel[:7] = rng.uniform(-1, 1, 7)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_kinematics(m, d)
        g = fingers[rng.integers(len(fingers))]
        p = d.geom_xpos[g] + rng.uniform(-1, 1) * m.geom_size[g][1] * d.geom_xmat[g].reshape(3, 3)[:, 2]
        if not home[2] - 0.04 < p[2] < home[2] + 0.04:
            continue
        angle = rng.uniform(0, 2 * np.pi)
        centre = p + (m.geom_size[obj][0] + m.geom_size[g][0] - rng.uniform(0.001, 0.005)) * np.array(
            [np.cos(angle), np.sin(angle), 0])
        qpos[7], qpos[8] = centre[1] - home[1], centre[0] - home[0]  # obj_slidey, obj_slidex
        ref.set_state(qpos, qvel)
        pairs = [(c.geom1, c.geom2, c.dist) for c in d.contact[:d.ncon] if obj in (c.geom1, c.geom2)
                 and m.geom_type[c.geom1] == mujoco.mjtGeom.mjGEOM_CAPSULE]
        per_finger = [sum(1 for a, _, _ in pairs if a == f) for f in fingers]
        if pairs and max(per_finger) == 1 and min(dist for _, _, dist in pairs) > -m.geom_size[g][0]:
            out.append((qpos, qvel))
    return out


def test_pusher_fingers_push_the_object_as_in_gymnasium():
    """Pusher-v5 with its fingers pressing on the object (capsule-cylinder pair contacts): one env
    step through the task from each of 12 such states equals Gymnasium's (its MuJoCo's convex
    collision to 1e-12): the observation, the reward and its terms; the object moves."""
    ref = mujoco_env("Pusher-v5")
    ref.model.opt.tolerance, ref.model.opt.iterations = 1e-14, 1000
    ref.model.opt.ccd_tolerance, ref.model.opt.ccd_iterations = 1e-12, 200
    env = tasks.make("Pusher-v5", num_envs=1)
    rng = np.random.default_rng(23)
    worst_obs, worst_reward, moved = 0.0, 0.0, 0.0
    for qpos, qvel in pusher_states_with_fingers_on_the_object(ref, rng, 12):
        env.reset(seed=0)
        set_world_state(env, 0, qpos, qvel)
        ref.set_state(qpos, qvel)
        action = rng.uniform(ref.action_space.low, ref.action_space.high).astype(np.float32)
        obs, reward, _, _, info = env.step(action[None])
        ref_obs, ref_reward, _, _, ref_info = ref.step(action)
        assert env.batch.status[0] == 0
        worst_obs = max(worst_obs, float(np.abs(obs[0] - ref_obs).max()) / max(1.0, float(np.abs(ref_obs).max())))
        worst_reward = max(worst_reward, abs(float(reward[0]) - ref_reward),
                           *(abs(float(info[k][0]) - v) for k, v in ref_info.items()))
        moved = max(moved, float(np.abs(ref.data.qvel[7:9]).max()))
    print(f"Pusher-v5 pushing: observation {worst_obs:.1e} (relative), reward {worst_reward:.1e}; "
          f"the object's speed up to {moved:.2f} m/s")
    assert worst_obs < 1e-6 and worst_reward < 1e-6, (worst_obs, worst_reward)
    assert moved > 0.003


def test_pusher_refuses_the_compliant_law():
    """Pusher's arm moves the object through pair contacts, which the compliant law does not have."""
    with pytest.raises(ValueError, match=r'Pusher-v5: contact_law="compliant" has no contacts between moving bodies'):
        tasks.make("Pusher-v5", contact_law="compliant")


@pytest.mark.parametrize("name", ["Ant-v5", "Humanoid-v5", "Hopper-v5"])
def test_compliant_law_takes_the_implicit_step_at_the_xml_timestep(name):
    """integrator="implicit" under the compliant law: the XML's timestep in frame_skip steps (as
    MuJoCo's law steps), and 64 envs x 200 env steps of random actions flag no world, resets
    included; refused under MuJoCo's law and for an unknown integrator."""
    env = tasks.make(name, num_envs=64, contact_law="compliant", integrator="implicit")
    ref = mujoco_env(name)
    assert env.engine_dt == pytest.approx(ref.model.opt.timestep, rel=1e-12)
    assert env.substeps == ref.frame_skip and env.dt == pytest.approx(ref.dt, rel=1e-12)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    lo, hi = env.action_space.low, env.action_space.high
    ended = 0
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(rng.uniform(lo, hi).astype(np.float32))
        assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward))
        assert not np.any(np.asarray(env.batch.field("status")) != 0)
        ended += int(np.sum(terminated | truncated))
    if name != "Ant-v5":  # (random actions rarely end an Ant's episode in 200 steps)
        assert ended > 0
    with pytest.raises(ValueError, match="integrator"):
        tasks.make(name, num_envs=1, integrator="implicit")
    with pytest.raises(ValueError, match="integrator"):
        tasks.make(name, num_envs=1, contact_law="compliant", integrator="euler")
