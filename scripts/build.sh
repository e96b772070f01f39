#!/usr/bin/env bash
# Configures and builds Lockstep in ./build (Release).
#   scripts/build.sh                          everything: the engine, the command line, the Python
#                                             module (see below), the tests and the benchmarks
#   scripts/build.sh --target lockstep_main   what a first run needs: the engine, the command line
#                                             and the module (scripts/setup.sh); --target repeats
# Other arguments go to cmake's configure step, the first time (build/ keeps its configuration).
# When the project's virtual environment .venv has nanobind (scripts/venv.sh), build/ is configured
# with the Python module (LOCKSTEP_PYTHON=ON): one engine library, compiled position-independent,
# serves the command line, the tests and the module, and scripts/python.sh installs the module from
# this build without compiling the engine a second time.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
targets=()
configure=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=(--target "${2:?--target needs a name}"); shift 2 ;;
    *) configure+=("$1"); shift ;;
  esac
done
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# ccache, when installed, keeps a second build (another checkout) from compiling again what it has
# compiled before.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
python=()
if [ -x .venv/bin/python ] && .venv/bin/python -c 'import nanobind' >/dev/null 2>&1; then
  python=(-DLOCKSTEP_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv/bin/python")
fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" "${launcher[@]}" "${python[@]}" -DCMAKE_BUILD_TYPE=Release "${configure[@]}"
elif ((${#python[@]})) && ! grep -q '^LOCKSTEP_PYTHON:BOOL=ON$' build/CMakeCache.txt; then
  # build/ was configured before .venv existed: the module joins it (the scene reader, the viewer
  # and the command line are compiled again, position-independent; the engine already is).
  cmake -S . -B build "${python[@]}"
fi
cmake --build build --parallel "$(nproc)" "${targets[@]}"
