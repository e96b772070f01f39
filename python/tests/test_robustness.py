"""A batch used carelessly: from several threads, interrupted, too large, deleted, fed None; a
parameter changed after the start; the vector environment given bad settings or used after close()."""
import gc
import os
import signal
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import lockstep
from conftest import ROOT, scene


def chain7(worlds, dtype="float64"):
    return lockstep.Batch(lockstep.load(scene("chain-7.json")), worlds, dtype=dtype)


def run_python(code: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          cwd=os.path.join(ROOT, "python", "tests"), **kw)


# ---- threads ----------------------------------------------------------------------------------------

def test_steps_from_several_threads_run_one_after_the_other():
    # Four threads share one batch; each call must run whole, so the result is that of the same
    # number of steps taken from one thread, bit for bit.
    threaded, sequential = chain7(1024), chain7(1024)
    for b in (threaded, sequential):
        b.u = np.linspace(-1, 1, 1024)[:, None]  # worlds that differ
    errors = []

    def work():
        try:
            for _ in range(10):
                threaded.step(5)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    sequential.step(200)
    assert np.all(threaded.status == 0)
    np.testing.assert_array_equal(threaded.time, sequential.time)
    np.testing.assert_array_equal(threaded.q, sequential.q)
    np.testing.assert_array_equal(threaded.u, sequential.u)


# ---- Ctrl-C ----------------------------------------------------------------------------------------

INTERRUPTED = r"""
import os, signal, sys, threading, time
import numpy as np
import lockstep
from conftest import scene
b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 64, dtype="float64")
b.u = np.linspace(-1, 1, 64)[:, None]
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    b.step(2_000_000_000, dt=1e-3)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after", time.monotonic() - t0)
steps = int(round(b.time[0] / 1e-3))
again = lockstep.Batch(lockstep.load(scene("chain-7.json")), 64, dtype="float64")
again.u = np.linspace(-1, 1, 64)[:, None]
again.step(steps, dt=1e-3)
print("steps", steps)
print("same times", bool(np.all(b.time == b.time[0])), abs(b.time[0] - steps * 1e-3) < 1e-9)
print("same states", np.array_equal(b.q, again.q) and np.array_equal(b.u, again.u))
"""


def test_ctrl_c_stops_a_long_step_after_whole_steps():
    r = run_python(INTERRUPTED, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("interrupted after"), r.stdout
    assert float(lines[0].split()[-1]) < 5.0, r.stdout
    assert int(lines[1].split()[1]) > 0, r.stdout
    assert lines[2] == "same times True True", r.stdout
    assert lines[3] == "same states True", r.stdout


class _Stop(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_a_signal_handler_calling_the_stepping_batch_is_refused_not_deadlocked():
    # Python runs signal handlers between the slices of a step, on the thread that holds the
    # batch: a handler that calls the same batch must get an error, not wait for itself forever.
    b = chain7(64)
    seen = []

    def handler(signum, frame):
        try:
            b.evaluate()
        except RuntimeError as e:
            seen.append(str(e))
        raise _Stop()

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(_Stop):
            b.step(10**9, dt=1e-3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(seen) == 1 and "already in a call on this thread" in seen[0], seen
    b.step(1, dt=1e-3)  # the batch is free again
    assert np.all(b.time > 0)


def test_step_takes_64_bit_counts():
    b = chain7(2)
    with pytest.raises(ValueError, match="dt"):
        b.step(0, dt=-1.0)  # checked even when there is nothing to step
    b.step(np.int64(3))
    b.step(3.0)
    assert b.time[0] == pytest.approx(6e-3)
    with pytest.raises(ValueError, match="n must be at least 0"):
        b.step(-1)
    with pytest.raises(ValueError, match="whole number"):
        b.step(2.5)
    with pytest.raises(TypeError, match="whole number"):
        b.step("10")
    with pytest.raises(ValueError, match="below 2\\*\\*63"):
        b.step(2**63)
    # 2**31 steps are accepted (a 32-bit count refused them); interrupted here at once, by a dt
    # the engine refuses before the first step.
    with pytest.raises(ValueError, match="dt"):
        b.step(2**31, dt=-1.0)


# ---- memory ------------------------------------------------------------------------------------------

def test_a_batch_larger_than_memory_is_refused_before_allocating():
    model = lockstep.load(scene("chain-7.json"))
    for worlds in (2**62, 3e10):
        with pytest.raises(lockstep.BatchMemoryError, match=r"worlds need more memory than is available \(needs "
                                                            r"[0-9.]+ GiB of host memory, [0-9.]+ GiB available\): "
                                                            r"at most [0-9]+ worlds of this model fit") as e:
            lockstep.Batch(model, worlds=worlds)
        assert isinstance(e.value, MemoryError)
    fit = int(str(e.value).split("at most ")[1].split()[0])
    assert 1000 < fit < 3e10


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_deleting_a_batch_frees_it_at_once():
    model = lockstep.load(scene("chain-7.json"))
    b = lockstep.Batch(model, 1000)
    b.params["gravity.y"] = -9.0  # params made and used
    alive = weakref.ref(b)
    del b
    assert alive() is None  # no cycle: freed without the cyclic collector
    collecting = gc.isenabled()
    gc.disable()
    try:
        start = rss_bytes()
        for _ in range(20):
            b = lockstep.Batch(model, 100_000)  # about 80 MB each
            assert b.params["gravity.y"].shape == (100_000,)
            del b
        assert rss_bytes() - start < 400e6  # not 20 batches kept: 1.6 GB
    finally:
        if collecting:
            gc.enable()


DLPACK_VIEWS = r"""
import numpy as np
import lockstep
from conftest import scene
b = lockstep.Batch(lockstep.load(scene("chain-7.json")), 8, dtype="float64")
v = np.from_dlpack(b.q)
w = b.q.__dlpack__()
t = b.tau
v[0, 0] = 1.0
print("ok", b.q[0, 0])
"""


def test_dlpack_views_leak_nothing_at_exit():
    r = run_python(DLPACK_VIEWS)
    assert r.returncode == 0 and r.stdout.strip() == "ok 1.0", r.stdout + r.stderr
    assert "leaked" not in r.stderr, r.stderr


# ---- parameters that move the initial state ---------------------------------------------------------

def test_a_mass_changed_before_stepping_gives_the_study_bits():
    # chain-7-seed has a sphere contact: its initial state is assembled, with the masses. The study
    # sets link 7's mass (low == high: every world the same) and then assembles; a Batch assembled
    # with the scene's mass must assemble again when the mass changes, to give the same worlds.
    worlds, steps = 16, 40
    study = {"scene": scene("chain-7-seed.json"), "worlds": worlds, "steps": steps, "dt": 1e-3,
             "precision": "double", "seed": 1,
             "vary": [{"parameter": "body.link7.mass", "distribution": "uniform", "low": 1.7, "high": 1.7}],
             "outputs": [f"q.joint{i}" for i in range(1, 8)]}
    r = lockstep.run_study(study, device="cpu")
    b = lockstep.Batch(lockstep.load(scene("chain-7-seed.json")), worlds, dtype="float64")
    before = b.q.copy()
    b.params["body.link7.mass"] = 1.7
    b.step(steps, dt=1e-3)
    np.testing.assert_array_equal(b.q, r["outcomes"].T)
    # Resets return to the state assembled with the new mass; a batch made fresh and changed agrees.
    b.reset()
    assert not np.array_equal(b.q, before)
    again = lockstep.Batch(lockstep.load(scene("chain-7-seed.json")), worlds, dtype="float64")
    again.params["body.link7.mass"] = 1.7
    again.evaluate()
    np.testing.assert_array_equal(b.q, again.q)


def test_a_parameter_change_keeps_worlds_that_have_moved():
    model = lockstep.load(scene("chain-7-seed.json"))
    b = lockstep.Batch(model, 4, dtype="float64")
    b.step(10)
    moved = b.q.copy()
    b.params["body.link7.mass"] = np.array([1.7, 1.7, 1.7, 1.7])
    b.evaluate()
    np.testing.assert_array_equal(b.q, moved)  # stepped worlds keep their state
    assert np.all(b.time == pytest.approx(0.01))


def test_a_parameter_change_leaves_a_world_that_failed_flagged():
    # A world whose first step failed is back at its initial q and u (time 0), flagged: a later
    # parameter change must not take it for a world still at its start and clear the flag.
    model = lockstep.load(scene("chain-7-seed.json"))
    b = lockstep.Batch(model, 4, dtype="float64")
    b.initialU[0, :] = 1e200  # world 0 starts (and resets) at speeds its first step cannot take
    b.u[0, :] = 1e200
    b.step(1)
    assert b.status[0] != 0 and np.all(b.status[1:] == 0), b.status
    assert b.time[0] == 0
    b.params["body.link7.mass"] = np.array([1.7, 1.7, 1.7, 1.7])
    b.assemble()
    assert b.status[0] != 0, "the failed world was un-flagged by the re-assembly"


# ---- values that are not numbers -------------------------------------------------------------------

def test_fields_refuse_none_and_strings():
    b = chain7(3)
    b.tau = 0.25
    for bad in (None, "1.0", [None, 1, 2]):
        with pytest.raises(TypeError, match="field 'tau' takes numbers"):
            b.tau = bad
    assert np.all(b.tau == 0.25)  # untouched, no NaN


def test_unsigned_indices_are_reported_as_given():
    b = chain7(3)
    with pytest.raises(IndexError, match="world 9223372036854775808 is outside"):
        b.reset(indices=np.array([2**63], dtype=np.uint64))
    b.reset(indices=np.array([2], dtype=np.uint64))
    with pytest.raises(IndexError, match="world 9223372036854775808 is outside"):
        b.describe_status(np.uint64(2**63))
    assert b.describe_status(np.uint64(2)) == "ok"


# ---- the vector environment ------------------------------------------------------------------------

gym = pytest.importorskip("gymnasium")


def env(**kw):
    return lockstep.VectorEnv(lockstep.load(scene("chain-7.json")), 2, lambda b, o, a: -np.abs(o[:, 0]),
                              action_high=1.0, **kw)


def test_vector_env_refuses_bad_settings_when_made():
    for kw, match in (({"reset_noise": float("nan")}, "reset_noise"), ({"reset_noise": -1.0}, "reset_noise"),
                      ({"dt": -1.0}, "dt must be"), ({"dt": float("inf")}, "dt must be"), ({"dt": 0.0}, "dt must be")):
        with pytest.raises(ValueError, match=match):
            env(**kw)


def test_vector_env_after_close_says_so():
    e = env()
    e.reset(seed=0)
    e.close()
    with pytest.raises(gym.error.ClosedEnvironmentError, match="environment is closed"):
        e.step(np.zeros((2, 7)))
    with pytest.raises(gym.error.ClosedEnvironmentError, match="environment is closed"):
        e.reset()
