#!/usr/bin/env bash
# Fresh machine to first result: install dependencies, build, and run the default scene.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
./build/lockstep
