#!/usr/bin/env bash
# Packs lockstep_bench and lockstep_opcount, built here for sm_90, with the shared libraries the
# device machine lacks (Google Benchmark, OpenMP, urdfdom, ...) into .bench-carry/ at the repository root, for the
# device tool's `run` with carry [".bench-carry"] (bench/README.md, "GPU figures").
#   bench/gpu_carry.sh [build-dir]      default: build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for exe in lockstep_bench lockstep_opcount; do
  [ -x "$build/$exe" ] || { echo "gpu_carry: $build/$exe not built" >&2; exit 1; }
done
grep -q "CMAKE_CUDA_ARCHITECTURES:STRING=.*90" "$build/CMakeCache.txt" ||
  { echo "gpu_carry: $build is not built for sm_90 (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 1; }
rm -rf .bench-carry
mkdir -p .bench-carry
cp "$build/lockstep_bench" "$build/lockstep_opcount" bench/gpu_run.sh .bench-carry/
# Every shared library but the C and C++ runtimes, which the device machine has (newer).
for lib in $(ldd "$build/lockstep_bench" "$build/lockstep_opcount" | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) ;;
    *) cp -L "$lib" .bench-carry/ ;;
  esac
done
du -sh .bench-carry
