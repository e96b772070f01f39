#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (GPU tests skip cleanly without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
