#!/usr/bin/env bash
# Runs on the device machine from the repository root, out of .bench-carry/ (bench/gpu_carry.sh):
# records the GPU and its clocks, then the GPU benchmarks selected by the filter, five repetitions
# each, as text and JSON under $OUT.
#   .bench-carry/gpu_run.sh [filter]     default: every CUDA throughput benchmark
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The robots' scene files, from the copy of the repository the command runs in.
[ -d "$here/../scenes" ] && export LOCKSTEP_SCENES_DIR="$(cd "$here/../scenes" && pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv > "$out/gpu.csv" 2>&1 || true
"$here/lockstep_bench" --benchmark_filter="${1:-^step/.*/cuda/}" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/gpu_bench.json" --benchmark_out_format=json \
  2>&1 | tee "$out/gpu_bench.txt" | grep -E "median|ERROR|skipped" || true
