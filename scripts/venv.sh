#!/usr/bin/env bash
# The project's virtual environment .venv (Debian's Python refuses system-wide pip installs) with
# what the Python module needs to build and be tested: nanobind, scikit-build-core, NumPy, pytest and
# Gymnasium from PyPI (python/requirements.txt), and the RL extra (python/requirements-rl.txt: torch,
# Stable-Baselines3, skrl, MuJoCo's Python package for the comparisons with Gymnasium's
# environments) unless LOCKSTEP_NO_RL=1 (its tests then skip).
# Run by scripts/setup.sh and scripts/test.sh before scripts/build.sh, which configures build/ with the
# Python module when .venv has nanobind; safe to run again (pip installs only what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

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
if [ -z "${LOCKSTEP_NO_RL:-}" ]; then
  .venv/bin/python -m pip install -q -r python/requirements-rl.txt
fi
