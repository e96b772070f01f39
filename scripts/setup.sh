#!/usr/bin/env bash
# Fresh machine to first result: install dependencies, build (and the Python module into .venv),
# and run the default scene.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
scripts/python.sh  # the Python module, into .venv
./build/lockstep
