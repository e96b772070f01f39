import os
import shutil

import pytest

import lockstep

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def scene(name: str) -> str:
    return os.path.join(ROOT, "scenes", name)


def cuda_available() -> bool:
    try:
        lockstep.Batch(lockstep.load(scene("chain-7.json")), 1, device="cuda")
        return True
    except RuntimeError:
        return False


needs_cuda = pytest.mark.skipif(not cuda_available(), reason="no CUDA device")


def cli_path():
    """The command line built by scripts/build.sh (scripts/test.sh sets LOCKSTEP_CLI)."""
    path = os.environ.get("LOCKSTEP_CLI") or os.path.join(ROOT, "build", "lockstep")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else shutil.which("lockstep")
