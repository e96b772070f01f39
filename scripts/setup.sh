#!/usr/bin/env bash
# Fresh machine to first result: install dependencies, the Python environment, build what the first
# run needs (the engine once, the command line and the Python module; the tests and benchmarks are
# left to scripts/test.sh), install the module into .venv, and run the default scene.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/venv.sh    # first: with .venv, build/ is configured with the Python module
scripts/build.sh --target lockstep_main
scripts/python.sh  # the module from build/, into .venv (nothing compiled again)
./build/lockstep
