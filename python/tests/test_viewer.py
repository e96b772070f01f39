"""Seeing the worlds (docs/viewer.md): `lockstep view` pages opened in headless Chromium, frames from
Batch.render() and the tasks' render(), and Gymnasium's RecordVideo writing a playable video."""
import glob
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import lockstep

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("LOCKSTEP_CLI", os.path.join(ROOT, "build", "lockstep"))
SOLO = os.path.join(ROOT, "scenes", "solo12-stand.json")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _png(path):
    imageio = pytest.importorskip("imageio.v3")
    return np.asarray(imageio.imread(path))


def _chromium(page, *args, timeout=180):
    """Headless Chromium with WebGL on SwiftShader (testing.md); returns its stdout and stderr."""
    command = [CHROMIUM, "--headless=new", "--no-sandbox", "--enable-unsafe-swiftshader", "--window-size=480,360",
               "--virtual-time-budget=3000", *args, page]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return done.stdout, done.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (scripts/deps.sh installs it)")
@pytest.mark.skipif(not os.path.exists(CLI), reason="the lockstep program is not built")
def test_the_page_plays_the_recording_in_chromium(tmp_path):
    page = tmp_path / "solo.html"
    subprocess.run([CLI, "simulate", SOLO, "--worlds", "1", "--steps", "1600", "--view", str(page)], check=True,
                   capture_output=True)
    # Solo12 starts above its crouch and settles: the first and the last picture differ.
    url = page.as_uri()
    dom, log = _chromium(url + "#t=0", "--dump-dom", "--enable-logging=stderr", "--v=0")
    assert re.search(r'id="status">ready: 13 bodies, 1 worlds, \d+ frames<', dom), dom[-2000:]
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "rror" in line or "Uncaught" in line], console
    # Sixteen worlds of the stand study side by side, coloured by a drawn friction: the page is ready.
    grid = tmp_path / "grid.html"
    subprocess.run([CLI, "simulate", "--study", SOLO, "--worlds", "16", "--steps", "200", "--view", str(grid),
                    "--color-by", "ground.FL_FOOT.static_friction"], check=True, capture_output=True)
    dom, _ = _chromium(grid.as_uri(), "--dump-dom")
    assert re.search(r'id="status">ready: 13 bodies, 16 worlds, \d+ frames<', dom), dom[-2000:]
    assert "ground.FL_FOOT.static_friction" in dom
    shots = []
    for t in ("0", "0.8"):
        shot = tmp_path / f"t{t}.png"
        _chromium(url + "#t=" + t, f"--screenshot={shot}")
        image = _png(shot)[..., :3].astype(int)
        assert image.shape[:2] == (360, 480)
        assert image.std() > 5, "the screenshot is uniform"
        shots.append(image)
    assert np.abs(shots[0] - shots[1]).mean() > 0.05, "two time points gave the same picture"


def _solo_batch():
    model = lockstep.load(SOLO)
    return model, lockstep.Batch(model, 2, dtype="float64")


def test_render_differs_between_standing_and_fallen():
    model, batch = _solo_batch()
    batch.step(400)
    standing = batch.render(world=0, width=160, height=120, camera={"lookat": (0, 0, 0.2), "distance": 1.2})
    q = np.array(model.initial_q)
    q[:4] = (np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0)  # rolled onto its side
    q[6] = 0.12
    batch.set_state(np.stack([batch.field("q")[0], q]), np.zeros((2, model.nu)))
    batch.evaluate()
    fallen = batch.render(world=1, width=160, height=120, camera={"lookat": (0, 0, 0.2), "distance": 1.2})
    assert standing.shape == (120, 160, 3) and standing.dtype == np.uint8
    assert standing.std() > 5 and fallen.std() > 5
    assert np.abs(standing.astype(int) - fallen.astype(int)).mean() > 1
    both = batch.render(worlds=[0, 1], width=160, height=120)
    assert both.shape == (120, 160, 3)
    with pytest.raises(IndexError):
        batch.render(world=2)
    with pytest.raises(ValueError, match="camera"):
        batch.render(camera={"zoom": 2})


def test_render_from_several_threads():
    from concurrent.futures import ThreadPoolExecutor
    _, batch = _solo_batch()
    with ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(lambda w: batch.render(world=w % 2, width=96, height=64), range(8)))
    for f in frames[2:]:
        assert np.array_equal(f, frames[0])  # both worlds stand still at the same pose


gym = pytest.importorskip("gymnasium")


def test_a_task_renders_and_recordvideo_writes_a_playable_file(tmp_path):
    pytest.importorskip("moviepy")
    if shutil.which("ffprobe") is None:
        pytest.skip("ffprobe (Debian's ffmpeg) is not installed")
    from gymnasium.wrappers.vector import RecordVideo
    env = gym.make_vec("lockstep/Hopper-v5", num_envs=3, render_mode="rgb_array", width=128, height=96)
    frames = env.render()
    assert len(frames) == 3 and frames[0].shape == (96, 128, 3)
    env = RecordVideo(env, str(tmp_path / "videos"), record_first_only=True, episode_trigger=lambda e: e == 0, video_length=20)
    env.reset(seed=3)
    for _ in range(25):
        env.step(env.action_space.sample())
    env.close()
    videos = glob.glob(str(tmp_path / "videos" / "*.mp4"))
    assert len(videos) == 1, os.listdir(tmp_path / "videos")
    probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=nb_read_frames,width,height", "-of", "csv=p=0", videos[0]],
                           capture_output=True, text=True, check=True).stdout.strip()
    width, height, count = (int(x) for x in probe.split(","))
    assert (width, height) == (128, 96)
    assert count == 21  # the reset's frame and 20 steps' (RecordVideo stops after video_length)


def test_vector_env_renders_each_world_on_demand():
    env = lockstep.VectorEnv(os.path.join(ROOT, "scenes", "double_pendulum.json"), 3,
                             lambda b, o, a: np.zeros(3), render_mode="rgb_array", width=80, height=60,
                             action_high=1.0, substeps=10)
    env.reset(seed=1)
    env.step(np.ones((3, 2)))
    frames = env.render()
    assert len(frames) == 3 and frames[-1].shape == (60, 80, 3)
    assert env.metadata["render_modes"] == ["rgb_array"] and env.metadata["render_fps"] == 100
    with pytest.raises(IndexError):
        frames[3]
    with pytest.raises(ValueError, match="render_mode"):
        lockstep.VectorEnv(os.path.join(ROOT, "scenes", "double_pendulum.json"), 1, lambda b, o, a: np.zeros(1),
                           render_mode="human", action_high=1.0)


def test_drawing_on_the_cpu_leaves_torchs_compiler_importable():
    """OSMesa brings Mesa's LLVM; it stays local to the renderer, so triton (torch imports it on an
    optimizer's first use, with its own LLVM) still loads after a frame is drawn. A fresh process:
    the renderer and triton load once per process. It crashed on 895fc9f."""
    pytest.importorskip("triton")
    script = ("import lockstep, gymnasium as gym\n"
              "env = gym.make_vec('lockstep/Reacher-v5', num_envs=1, render_mode='rgb_array', width=32, height=24)\n"
              "env.reset(seed=0)\n"
              "assert env.call('render')[0].any()\n"
              "import triton\n"
              "print('imported')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "LOCKSTEP_GL": "osmesa"})
    assert done.returncode == 0 and "imported" in done.stdout, done.stderr[-2000:]
