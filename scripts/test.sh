#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (GPU tests skip cleanly without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/venv.sh   # first: with .venv, build/ is configured with the Python module
scripts/build.sh  # everything: after scripts/setup.sh, only the tests and benchmarks are left to build
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
# The Python module (python/tests; GPU cases skip without a device), installed into .venv first.
scripts/python.sh
LOCKSTEP_CLI="$PWD/build/lockstep" .venv/bin/python -m pytest -q python/tests
