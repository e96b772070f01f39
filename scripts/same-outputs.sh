#!/usr/bin/env bash
# Byte-identical outputs of two builds of the lockstep program: the check that a change meant to
# alter no behaviour (a refactor) alters none. For every shipped scene, MJCF robot and study it runs
#   lockstep info SCENE
#   lockstep simulate SCENE (float and double, recording every quantity) --out run.npz
#   lockstep study STUDY --out prefix   (the statistics' CSV and JSON; the PNG plots are left out)
# with each program and compares the files byte for byte. Usage:
#   scripts/same-outputs.sh OLD_LOCKSTEP NEW_LOCKSTEP [WORKDIR]
# Prints one line per output (same/DIFFERENT) and exits 1 when any differs.
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/same-outputs.sh OLD_LOCKSTEP NEW_LOCKSTEP [WORKDIR]}
new=${2:?usage: scripts/same-outputs.sh OLD_LOCKSTEP NEW_LOCKSTEP [WORKDIR]}
work=${3:-$(mktemp -d)}
mkdir -p "$work/old" "$work/new"

scenes=(scenes/*.json models/mjcf/*.xml)
run() {  # run SIDE NAME ARGS...: the output file is $work/SIDE/NAME
  local side=$1 name=$2
  shift 2
  local program=$old
  [ "$side" = new ] && program=$new
  (cd "$work/$side" && "$program" "$@" > "$name.stdout" 2>&1)
  echo $? > "$work/$side/$name.rc"
}

for side in old new; do
  for scene in "${scenes[@]}"; do
    base=$(basename "$scene"); base=${base%.*}; kind=${scene##*.}
    run "$side" "info-$base-$kind" info "$PWD/$scene"
    for precision in double float; do
      run "$side" "sim-$base-$kind-$precision" simulate "$PWD/$scene" --worlds 5 --steps 40 --record-every 10 \
        --record all --precision "$precision" --device cpu --threads 1 --out "sim-$base-$kind-$precision.npz"
    done
  done
  for study in studies/*.json; do
    base=$(basename "$study" .json)
    run "$side" "study-$base" study "$PWD/$study" --device cpu --threads 1 --out "study-$base"
  done
done

status=0
for f in "$work"/old/*; do
  name=$(basename "$f")
  case "$name" in *.png) continue ;; esac
  # Timing lines (wall time, world-steps per second) differ between any two runs.
  if [[ "$name" == *.stdout ]]; then
    if diff <(grep -v -E 'wall|steps/s|per second|elapsed' "$f") \
            <(grep -v -E 'wall|steps/s|per second|elapsed' "$work/new/$name") > /dev/null 2>&1; then
      echo "same       $name"
    else
      echo "DIFFERENT  $name"; status=1
    fi
  elif cmp -s "$f" "$work/new/$name"; then
    echo "same       $name"
  else
    echo "DIFFERENT  $name"; status=1
  fi
done
echo "outputs in $work"
exit $status
