#!/usr/bin/env bash
# Instructions per world-step of one or more builds of the lockstep program, counted by valgrind's
# callgrind (repeatable to the instruction whatever else the machine is doing): for each scene and
# precision, (I(100 steps) - I(50 steps)) / (256 worlds x 50 steps) of
#   LOCKSTEP_CPU_ISA=avx2 lockstep simulate SCENE --worlds 256 --device cpu --threads 1 --precision P
# (RK4 at the scene's dt; AVX2 packs, as valgrind runs no AVX-512). Usage:
#   bench/instructions_per_step.sh LOCKSTEP [LOCKSTEP ...]
# Prints one row per scene and precision, one column per program.
set -euo pipefail
cd "$(dirname "$0")/.."
(($#)) || { echo "usage: bench/instructions_per_step.sh LOCKSTEP [LOCKSTEP ...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count() {  # count PROGRAM SCENE PRECISION STEPS: instructions of the whole run
  LOCKSTEP_CPU_ISA=avx2 OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$work/out" \
    "$1" simulate "$2" --worlds 256 --steps "$4" --device cpu --threads 1 --precision "$3" > /dev/null 2>&1
  callgrind_annotate "$work/out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}'
}

printf '%-26s' "scene, precision"
for program in "$@"; do printf ' %16s' "$(basename "$(dirname "$(dirname "$program")")")"; done
echo
for scene in scenes/chain-7.json scenes/chain-7-seed.json scenes/panda.json scenes/solo12-stand.json; do
  for precision in double float; do
    printf '%-26s' "$(basename "$scene" .json), $precision"
    for program in "$@"; do
      i100=$(count "$program" "$scene" "$precision" 100)
      i50=$(count "$program" "$scene" "$precision" 50)
      printf ' %16.1f' "$(echo "($i100 - $i50) / (256 * 50)" | bc -l)"
    done
    echo
  done
done
