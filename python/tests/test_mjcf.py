"""MJCF files through the Python module: lockstep.load reads them with MuJoCo's compiler (the
physics is checked against MuJoCo in tests/frontend/test_mjcf.cpp); Ant settles on its legs."""
import os
import subprocess

import numpy as np
import pytest

import lockstep
from conftest import ROOT, cli_path, scene


def test_load_mjcf_file_names_its_joints_and_keeps_mujocos_defaults():
    path = os.path.join(ROOT, "models", "mjcf", "hopper.xml")
    m = lockstep.load(path)  # MuJoCo's law: plane contacts and soft limits, the XML's step
    assert m.coordinate_names == ["rootx", "rootz", "rooty", "thigh_joint", "leg_joint", "foot_joint"]
    assert m.dt == 0.002  # MuJoCo's timestep
    assert "plane contacts" in m.info and "ground contacts (" not in m.info
    compliant = lockstep.load(path, contact_law="compliant")
    assert compliant.coordinate_names == m.coordinate_names and compliant.dt == 0.002
    info = compliant.info
    assert "contacts between moving bodies are the implicit step's" in info
    assert "armature" in info and "gear 200" in info
    assert "armature.thigh_joint" in compliant.parameter_names
    with pytest.raises(ValueError, match="applies to an MJCF"):
        lockstep.load(scene("hopper.json"), contact_law="mujoco")
    with pytest.raises(ValueError, match="must be"):
        lockstep.load(path, contact_law="soft")
    cli = cli_path()
    if cli:
        for model, law in ((m, []), (compliant, ["--contact-law", "compliant"])):
            out = subprocess.run([cli, "info", path] + law, capture_output=True, text=True, check=True)
            assert model.info == out.stdout


def test_mjcf_root_option_is_refused_and_bad_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="says its own joints"):
        lockstep.load(os.path.join(ROOT, "models", "mjcf", "ant.xml"), root="free")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body></mujoco>")
    with pytest.raises(lockstep.InputError, match="MuJoCo's compiler"):
        lockstep.load(str(bad))


def test_ant_dropped_on_the_ground_settles_on_its_legs():
    m = lockstep.load(scene("ant.json"))
    b = lockstep.Batch(m, 64, dtype="float64")
    rng = np.random.default_rng(3)
    q = np.array(b.host_field("q"), dtype=np.float64)
    q[:, 6] += rng.uniform(0.0, 0.2, 64)  # dropped from 0.75 to 0.95 m
    b.set_state(q, np.zeros((64, m.nu)))
    b.step(3000)  # 3 s at the scene's 1 ms
    assert not np.any(b.status)
    z = b.host_field("q")[:, 6]
    # On its four feet, every world alike: the torso (a sphere of radius 0.25) clear of the floor.
    # (Its legs splay slowly under the regularized friction's creep: 0.46 m at 1.5 s, 0.37 m at 3 s.)
    assert np.all(z > 0.3) and np.ptp(z) < 0.01, z
