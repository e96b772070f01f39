#!/usr/bin/env bash
# The Python module: a project virtual environment .venv (Debian's Python refuses system-wide pip
# installs) with nanobind, scikit-build-core, NumPy, pytest and Gymnasium from PyPI, and `lockstep`
# built and installed into it from this checkout (`pip install .`, pyproject.toml).
# Run by scripts/setup.sh and scripts/test.sh; safe to run again (pip rebuilds only what changed).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$python" -m venv .venv 2>/dev/null || [ ! -x .venv/bin/pip ]; then
    # Debian splits venv (ensurepip) and the headers out of the interpreter's package.
    rm -rf .venv
    echo "lockstep: installing python3-venv python3-dev"
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -q
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends python3-venv python3-dev
    "$python" -m venv .venv
  fi
fi

.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r python/requirements.txt
# The RL extra (torch, Stable-Baselines3, skrl, MuJoCo's Python package for the comparisons with
# Gymnasium's environments): LOCKSTEP_NO_RL=1 leaves it out (its tests then skip).
if [ -z "${LOCKSTEP_NO_RL:-}" ]; then
  .venv/bin/python -m pip install -q -r python/requirements-rl.txt
fi
# The module itself. ccache, when present, is used for the engine's C++ and CUDA sources; the build
# directory is kept (build/python, git-ignored) so that a second install only relinks.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache -C cmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
.venv/bin/python -m pip install -q --no-build-isolation "${launcher[@]}" .
