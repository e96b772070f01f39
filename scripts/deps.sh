#!/usr/bin/env bash
# Installs every Debian package Lockstep needs to build, test and benchmark, if any is missing.
# The CUDA toolkit (nvcc) is expected on the machine already; this script says so if it is not.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev            # dense linear algebra on the host and in tests
  libgtest-dev googletest  # tests
  libbenchmark-dev         # benchmarks
  libsimbody-dev           # Simbody 3.7: the oracle the tests compare against
  nlohmann-json3-dev       # scene files
  libcli11-dev             # the command line
  liburdfdom-dev           # URDF import
  libmujoco-dev            # MJCF import through MuJoCo's own compiler, and MuJoCo as the tests' oracle
  libqhull-dev             # named by libmujoco-dev's CMake package (its include directories)
  libzip-dev               # .npz output of the command line
  libdlpack-dev            # DLPack tensors for zero-copy observations
  libplplot-dev plplot-driver-cairo  # histogram plots of studies (PNG)
  libopenmpi-dev openmpi-bin  # optional: `mpirun -np N lockstep study` over MPI ranks
  libassimp-dev            # the viewer: robot meshes (STL, OBJ, Collada, ...)
  libosmesa6-dev           # off-screen frames without a display or a GPU (MuJoCo's renderer on OSMesa)
  libegl-dev               # off-screen frames on a GPU (EGL)
  libjs-three              # three.js r111, inlined into `lockstep view` pages
  ffmpeg                   # `lockstep render` videos, and ffprobe in the tests
  chromium                 # the tests open `lockstep view` pages in headless Chromium
  zstd                     # bench/kernel_resources.py reads nvcc's compressed cubins (ctest kernel_resources)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "lockstep: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "lockstep: nvcc (the CUDA toolkit) is required but was not found on PATH or in /usr/local/cuda/bin" >&2
  exit 1
fi
