#!/usr/bin/env bash
# Measures the CPU figures of bench/README.md: the one-thread costs (CPU time, five repetitions) and
# the throughput of the CPU backend on one thread and on all cores. Results (text and JSON) and the
# machine's description go to build/bench-results/ (never into git). Takes about five minutes.
#   bench/run_cpu_figures.sh [build-dir]       default: build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$build/bench-results
mkdir -p "$out"
{
  date -u +"%Y-%m-%d %H:%M UTC"
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz" || true
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"
bench=$build/lockstep_bench
reps=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
"$bench" --benchmark_filter='^cpu1/' --benchmark_min_time=0.2 "${reps[@]}" \
  --benchmark_out="$out/cpu1.json" --benchmark_out_format=json > "$out/cpu1.txt" 2>&1
LOCKSTEP_BENCH_CPU_THREADS=1 "$bench" --benchmark_filter='^step/(chain-7|chain-32|chain-7-seed|panda|ur5|solo12)/cpu/' \
  --benchmark_min_time=0.2 --benchmark_out="$out/step_1thread.json" --benchmark_out_format=json \
  > "$out/step_1thread.txt" 2>&1
"$bench" --benchmark_filter='^step/[^/]*/cpu/' --benchmark_min_time=0.2 \
  --benchmark_out="$out/step_all_threads.json" --benchmark_out_format=json > "$out/step_all_threads.txt" 2>&1
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
cat "$out/machine.txt"
