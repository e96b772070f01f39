#!/usr/bin/env bash
# Measures the CPU figures of bench/README.md: the one-thread costs (CPU time, five repetitions),
# the throughput of the CPU backend on one thread and on all cores, and the threads under a
# competing load. With --base REV, the same figures of commit REV in the same run, benchmark by
# benchmark alternately, and a table of both with their ratio: a comparison that the machine's load
# affects alike. Results (text and JSON), the table and the machine's description (lscpu's model
# name, the instruction set chosen, the load average) go to <build-dir>/bench-results/ (never into
# git). Takes about ten minutes, twice that with --base.
#   bench/run_cpu_figures.sh [build-dir] [--base REV [--base-build DIR]] [--quick]
#     build-dir  default: build (with lockstep_bench built)
#     --base REV builds lockstep_bench of REV in <build-dir>/base-REV (a git worktree beside it, ccache
#                if configured) and compares
#     --base-build DIR  use DIR's lockstep_bench, already built from REV, instead
#     --quick    one repetition, shorter runs (a smoke test of the script)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
base=""
baseBuild=""
reps=5
minTime=0.2
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --base-build) baseBuild=$2; shift 2 ;;
    --quick) reps=1; minTime=0.02; shift ;;
    *) build=$1; shift ;;
  esac
done
out=$build/bench-results
mkdir -p "$out"

benches=("new:$build/lockstep_bench")
if [ -n "$base" ]; then
  rev=$(git rev-parse --short "$base")
  src=$build/base-$rev-src
  bdir=${baseBuild:-$build/base-$rev}
  [ -n "$baseBuild" ] || [ -d "$src" ] || git worktree add --detach "$src" "$rev" > /dev/null
  if [ ! -x "$bdir/lockstep_bench" ]; then
    launcher=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
    cmake -S "$src" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} \
      ${launcher:+-DCMAKE_CUDA_COMPILER_LAUNCHER=$launcher} > "$out/base-configure.log"
    cmake --build "$bdir" --target lockstep_bench > "$out/base-build.log"
  fi
  benches+=("base:$bdir/lockstep_bench")
fi

{
  date -u +"%Y-%m-%d %H:%M UTC"
  echo "commit: $(git rev-parse --short HEAD)${base:+, compared with $base ($(git rev-parse --short "$base"))}"
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz|Hypervisor" || true
  echo "CPU instruction set: $("$build/lockstep" --version 2>/dev/null | sed -n 's/^CPU SIMD packs: //p')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

agg=(--benchmark_repetitions=$reps --benchmark_report_aggregates_only=true)
# run NAME ENV... -- ARGS: each benchmark binary in turn, into $out/<label>_NAME.{txt,json}
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  for b in "${benches[@]}"; do
    local label=${b%%:*} bin=${b#*:}
    env "${envs[@]}" "$bin" "$@" --benchmark_out="$out/${label}_$name.json" --benchmark_out_format=json \
      > "$out/${label}_$name.txt" 2>&1
  done
}
scenes='(chain-7|chain-32|chain-7-seed|panda|ur5|solo12)'
# One thread, one benchmark group at a time, alternately for the two builds.
for group in fd fd-lanes stage evaluate step step-scalar; do
  run "cpu1_$group" X=1 -- --benchmark_filter="^cpu1/$group/" --benchmark_min_time=$minTime "${agg[@]}"
done
run step_1thread LOCKSTEP_BENCH_CPU_THREADS=1 -- --benchmark_filter="^step/$scenes/cpu/" --benchmark_min_time=$minTime
run step_all_threads X=1 -- --benchmark_filter='^step/[^/]*/cpu/' --benchmark_min_time=$minTime

# Threads under load: chain-7 at 64 and 4096 worlds on 1 and 2 threads, alone and with one busy
# process per core (yes > /dev/null).
loadFilter='^step/chain-7/cpu/(float|double)/(64|4096)/'
for t in 1 2; do
  run "threads${t}_quiet" LOCKSTEP_BENCH_CPU_THREADS=$t -- --benchmark_filter="$loadFilter" --benchmark_min_time=$minTime
done
pids=()
for _ in $(seq "$(nproc)"); do yes > /dev/null & pids+=($!); done
for t in 1 2; do
  run "threads${t}_loaded" LOCKSTEP_BENCH_CPU_THREADS=$t -- --benchmark_filter="$loadFilter" --benchmark_min_time=$minTime
done
for p in "${pids[@]}"; do kill "$p"; done

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
python3 bench/compare_figures.py "$out" > "$out/table.md"
cat "$out/machine.txt" "$out/table.md"
