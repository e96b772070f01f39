"""Studies through Python against the command line's, and the Gymnasium vector environment."""
import json
import os
import subprocess

import numpy as np
import pytest

import lockstep
from conftest import ROOT, cli_path, scene

STUDY = os.path.join(ROOT, "studies", "chain-7-seed-stiffness.json")


def small_study():
    with open(STUDY) as f:
        s = json.load(f)
    s.update(scene=scene("chain-7-seed.json"), worlds=64, steps=40)
    return s


def test_run_study_equals_the_command_line(tmp_path):
    r = lockstep.run_study(small_study(), device="cpu")
    assert r["names"] == ["q.joint7", "energy.total", "body.link7.x", "contact.contact.error"]
    assert r["mean"].shape == (4,) and r["quantiles"].shape == (4, 5) and r["histograms"].shape == (4, 40)
    assert np.all(r["count"] + r["flagged_worlds"] == 64)
    assert np.all(r["min"] <= r["mean"]) and np.all(r["mean"] <= r["max"])
    healthy = r["status"] == 0
    assert r["outcomes"].shape == (4, 64) and healthy.sum() == r["count"][0]
    for i in range(4):
        x = r["outcomes"][i, healthy]
        assert x.min() == r["min"][i] and x.max() == r["max"][i]
        assert x.mean() == pytest.approx(r["mean"][i], rel=1e-12, abs=1e-15)
        assert x.std(ddof=1) == pytest.approx(r["stddev"][i], rel=1e-9, abs=1e-15)
    again = lockstep.run_study(small_study(), device="cpu")
    np.testing.assert_array_equal(r["mean"], again["mean"])  # counter-based draws: deterministic
    cli = cli_path()
    if not cli:
        pytest.skip("the lockstep command line is not built (scripts/build.sh)")
    path = tmp_path / "study.json"
    path.write_text(json.dumps(small_study()))
    subprocess.run([cli, "study", str(path), "--device", "cpu", "--out", str(tmp_path / "out")], check=True,
                   capture_output=True)
    with open(tmp_path / "out.json") as f:
        want = json.load(f)
    for i, o in enumerate(want["outputs"]):
        assert r["names"][i] == o["name"]
        assert r["mean"][i] == o["mean"] and r["stddev"][i] == o["stddev"]
        assert r["min"][i] == o["min"] and r["max"][i] == o["max"]
        np.testing.assert_array_equal(r["quantiles"][i], o["quantiles"])
        np.testing.assert_array_equal(r["histograms"][i], o["histogram"])


def test_run_study_returns_what_the_command_line_writes(tmp_path):
    study = small_study()
    study.update(worlds=16, sensitivity="sobol", bootstrap_resamples=50)
    study["vary"].append({"parameter": "body.link6.mass", "distribution": "normal", "mean": 1.0, "sd": 0})
    r = lockstep.run_study(study, device="cpu")
    k, worlds = len(study["vary"]), 16 * (len(study["vary"]) + 2)
    assert r["parameter_names"] == [v["parameter"] for v in study["vary"]]
    assert r["parameters"].shape == (worlds, k) and r["outcomes"].shape == (4, worlds)
    assert np.all(r["parameters"][:, 3] == 1.0)  # sd 0: every draw is the mean
    assert r["spearman"].shape == (k, 4) and len(r["sobol"]) == 4
    first = r["sobol"][0]
    assert first["first"].shape == (k,) and np.all(first["first_low"][:3] <= first["first_high"][:3])
    # The degenerate parameter: no indices, no rho, with the reason (not 0 with [0, 0]).
    why = "parameter 'body.link6.mass' does not vary (every draw is 1)"
    assert np.isnan(first["first"][3]) and np.isnan(first["total_high"][3]) and first["undefined"][3] == why
    assert np.all(np.isnan(r["spearman"][3])) and r["spearman_undefined"][3][0] == why
    # The report is the command line's PREFIX.json, byte for byte once written the same way.
    cli = cli_path()
    if not cli:
        pytest.skip("the lockstep command line is not built (scripts/build.sh)")
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study))
    subprocess.run([cli, "study", str(path), "--device", "cpu", "--outcomes", "--out", str(tmp_path / "out")],
                   check=True, capture_output=True)
    with open(tmp_path / "out.json") as f:
        want = json.load(f)
    assert r["report"] == dict(want, study="<dict>")
    npz = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(r["parameters"], npz["parameters"])
    np.testing.assert_array_equal(r["outcomes"], npz["outputs"].T)
    np.testing.assert_array_equal(r["status"], npz["status"])


def test_run_study_with_no_healthy_world_says_why():
    study = small_study()
    study.update(worlds=8, precision="float",
                 vary=[{"parameter": "q.joint1", "distribution": "uniform", "low": 1e300, "high": 2e300}])
    r = lockstep.run_study(study, device="cpu")
    assert r["flagged_worlds"] == 8 and np.all(r["count"] == 0) and np.all(np.isnan(r["mean"]))
    assert r["undefined"][0] == "no healthy world: all 8 worlds were flagged"
    assert r["report"]["outputs"][0]["mean"] is None
    assert np.all(r["status"] != 0)


def test_run_study_file_and_errors():
    with pytest.raises(lockstep.InputError, match="nowhere.json"):
        lockstep.run_study("nowhere.json")
    bad = small_study()
    bad["vary"][0]["parameter"] = "body.nobody.mass"
    with pytest.raises(lockstep.InputError, match="body.nobody.mass"):
        lockstep.run_study(bad)


# ---- VectorEnv --------------------------------------------------------------------------------

gym = pytest.importorskip("gymnasium")


def pendulum_env(n=4, **kw):
    def reward(batch, obs, actions):
        return -np.abs(obs[:, 0])

    def terminated(batch, obs):
        return np.abs(obs[:, 0]) > 1.0

    return lockstep.VectorEnv(lockstep.load(scene("chain-7.json")), n, reward, terminated,
                              observations=("q", "u"), max_episode_steps=5, substeps=10, action_high=2.0, **kw)


def test_vector_env_spaces_and_step():
    env = pendulum_env()
    assert env.single_observation_space.shape == (14,) and env.single_action_space.shape == (7,)
    assert env.observation_space.shape == (4, 14) and env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=3)
    assert obs.shape == (4, 14) and env.observation_space.contains(obs)
    obs2, rew, term, trunc, info = env.step(env.action_space.sample())
    assert obs2.shape == (4, 14) and rew.shape == (4,) and term.dtype == bool and trunc.dtype == bool
    np.testing.assert_allclose(rew, -np.abs(obs2[:, 0]))
    with pytest.raises(ValueError, match="actions must have shape"):
        env.step(np.zeros((3, 7)))


def test_vector_env_next_step_autoreset():
    env = pendulum_env(n=2)
    first, _ = env.reset(seed=0)
    for t in range(5):
        obs, rew, term, trunc, _ = env.step(np.zeros((2, 7)))
    assert np.all(trunc) and not np.any(term)  # max_episode_steps = 5
    obs, rew, term, trunc, _ = env.step(np.ones((2, 7)))  # the autoreset step: actions ignored
    np.testing.assert_array_equal(obs, first)
    np.testing.assert_array_equal(rew, 0.0)
    assert not np.any(term | trunc)


def test_vector_env_reset_seed_is_reproducible():
    a, b = pendulum_env(reset_noise=0.1), pendulum_env(reset_noise=0.1)
    oa, _ = a.reset(seed=42)
    ob, _ = b.reset(seed=42)
    np.testing.assert_array_equal(oa, ob)
    assert np.all(np.abs(oa[:, :7] - 0.3) <= 0.1) and np.all(oa[:, 7:] == 0)
    act = np.full((4, 7), 0.5)
    np.testing.assert_array_equal(a.step(act)[0], b.step(act)[0])
    oc, _ = b.reset(seed=43)
    assert not np.array_equal(oa, oc)


def test_vector_env_bad_arguments():
    model = lockstep.load(scene("chain-7.json"))
    with pytest.raises(ValueError, match="unknown: \\['qq'\\]"):
        lockstep.VectorEnv(model, 2, lambda b, o, a: 0, observations=("qq",), action_high=1.0)
    with pytest.raises(ValueError, match="no effort limit"):
        lockstep.VectorEnv(model, 2, lambda b, o, a: 0)


def test_gymnasium_checks_that_apply_to_vector_envs():
    # gymnasium.utils.env_checker.check_env takes a gymnasium.Env only; these of its checks take any
    # environment with the reset/step API (check_step_determinism asserts `truncated is False`, a
    # Python bool, and cannot apply to arrays of flags).
    from gymnasium.utils import env_checker

    env = pendulum_env(n=1, reset_noise=0.05)
    env_checker.check_reset_return_type(env)
    env_checker.check_reset_seed_determinism(env)
    env_checker.check_reset_options(env)
    env_checker.check_returned_data_not_reused(env)
