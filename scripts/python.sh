#!/usr/bin/env bash
# The Python module `lockstep`, installed into the project's virtual environment .venv (made by
# scripts/venv.sh, here too when it is missing) with pip from this checkout (pyproject.toml).
#
# Where scripts/build.sh has configured build/ (with .venv present it builds the module there too),
# pip's build runs in build/ itself: the wheel takes the module that build.sh compiled, linked to the
# same engine library as the command line, and compiles only what changed since (nothing, right
# after build.sh). scikit-build-core configures build/ again first; it is given build/'s own
# generator and choices of tests and benchmarks, so that nothing else changes. Without build/,
# `pip install .` builds the engine and the module on their own in build-python/ (as for a user
# with only Python), with ccache when it is installed.
# Run by scripts/setup.sh and scripts/test.sh (after scripts/venv.sh); safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

if ! .venv/bin/python -c 'import nanobind, scikit_build_core' >/dev/null 2>&1; then scripts/venv.sh; fi

args=()
if [ -f build/CMakeCache.txt ]; then
  cached() { sed -n "s/^$1:[A-Z]*=//p" build/CMakeCache.txt | head -n 1; }
  generator=$(cached CMAKE_GENERATOR)
  if [ -n "$generator" ]; then export CMAKE_GENERATOR=$generator; fi
  args+=(-C build-dir=build)
  for option in LOCKSTEP_BUILD_TESTS LOCKSTEP_BUILD_BENCH LOCKSTEP_SIMBODY_ORACLE; do
    value=$(cached "$option")
    if [ -n "$value" ]; then args+=(-C "cmake.define.$option=$value"); fi
  done
elif command -v ccache >/dev/null 2>&1; then
  args+=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache -C cmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
.venv/bin/python -m pip install -q --no-build-isolation "${args[@]}" .
