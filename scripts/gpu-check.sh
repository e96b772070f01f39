#!/usr/bin/env bash
# The proof on the GPU in one call of the device tool (bench/README.md, "GPU check").
#
#   scripts/gpu-check.sh pack [--build-dir DIR]
#       here: builds the tests, the command line, the benchmarks and lockstep_opcount for sm_90 around
#       one shared engine library (in build-gpu-check/ unless told; LOCKSTEP_SHARED_ENGINE), packs
#       them, stripped, with the shared libraries the device machine lacks and
#       compute-sanitizer when this machine has one, into .gpu-check/pack.tar.gz (ignored by git),
#       and checks that the pack and the working tree fit the tool's 64 MiB.
#   scripts/gpu-check.sh run [--budget SECONDS]
#       there, from the repository root with .gpu-check carried: every GPU test, the command line's
#       default run, a study and a recording on CUDA against the same on the CPU, Nsight Compute on the
#       step kernel (chain-7 double, humanoid float: DRAM and local-memory bytes per world-step, warps
#       active, duration; reports $OUT/ncu-*.ncu-rep), compute-sanitizer's
#       memcheck, racecheck and initcheck on a small set of the tests, and the chain-7 benchmarks,
#       each step with its own time limit inside the budget (default 540 s: one call is 600 s at most). Writes
#       $OUT/gpu-check.txt (one PASS/FAIL/SKIP line per step), $OUT/gpu-check.json,
#       $OUT/gpu_bench.json and $OUT/gpu-check-logs.tar.gz; without $OUT, .gpu-check/results/.
#       Without a GPU every GPU step is SKIP and the CPU parts still run: a dry run.
#   scripts/gpu-check.sh bench [FILTER]
#       there: only the benchmarks matching FILTER (default: chain-7 on CUDA), five repetitions.
#   scripts/gpu-check.sh occupancy [--budget SECONDS] [--tests FILTER] [--bench 'SCENE:PRECISIONS:WORLDS ...']
#                                  [--no-ncu] [BLOCKS...]
#       there, with a pack built with -DLOCKSTEP_CUDA_OCCUPANCY_VARIANTS=ON: the step kernel at each
#       occupancy (LOCKSTEP_CUDA_STEP_MIN_BLOCKS = BLOCKS, default 0 1 3 4 6; 0 is the build's own):
#       GPU tests (default: those of models without constraints), `lockstep bench` (default: chain-7
#       and humanoid), ncu on chain-7 and humanoid.
#   scripts/gpu-check.sh compare CUDA.npz CPU.npz
#       two recordings of one run: every number within 1e-8 of its quantity's range (as `run` does).
#   scripts/gpu-check.sh exec COMMAND...
#       there: COMMAND with the pack unpacked, its libraries on LD_LIBRARY_PATH and $GPU_CHECK_BIN
#       naming its binaries (for ncu, cuda-gdb, a single test).
# Exit status: 0 when no step failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
pack_dir=$repo/.gpu-check
pack_file=$pack_dir/pack.tar.gz
limit_bytes=$((64 * 1024 * 1024))                      # the device tool's working tree + carry
binaries=(lockstep_tests lockstep_throughput_tests lockstep lockstep_bench lockstep_opcount)
targets=(lockstep_tests lockstep_throughput_tests lockstep_cli lockstep_bench lockstep_opcount)
gpu_test_filter='Gpu*:*.Gpu*:*Device*:*Cuda*'          # lockstep_tests: every test that needs a GPU
throughput_filter='*Cuda*'                              # lockstep_throughput_tests
# compute-sanitizer runs: small batches, every kernel (advance/evaluate without constraints, with
# sphere contacts and under MuJoCo's law, assemble, resets, given states, graphs, DLPack, a study's
# Thrust reductions, linearize); the 65,536-block and out-of-memory tests are left out (too slow
# instrumented; the latter takes the whole device memory on purpose). (Until 2026-11-28 the filter
# named a study test that no longer existed, and no soft-law test: 9 tests ran.)
sanitizer_filter='GpuPaths.AdvanceAndEvaluateWithContactsFloat:GpuPaths.AdvanceAndEvaluateWithoutContactsDouble:GpuPaths.AssembleMatchesCpu:GpuPaths.ResetsByIndexAndMaskMatchCpu:GpuPaths.SetStatesMatchesCpu:GpuPaths.RecordedStepsMatchStepsBitForBit:GpuPaths.DLPackDeviceTensorsReadAndWriteTheBatch:GpuPaths.StudyOnCudaMatchesCpu:GpuSpatial.*:Linearize.CudaMatchesCpu:GpuPaths.SoftContactsMatchCpu'
bench_filter_gpu='^step/chain-7/cuda/'

die() { echo "gpu-check: $*" >&2; exit 2; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

# ---- pack (here) --------------------------------------------------------------------------------

find_sanitizer_dir() {  # the directory holding the compute-sanitizer executable and its libraries
  local c
  for c in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/compute-sanitizer/compute-sanitizer \
           /usr/local/cuda/bin/compute-sanitizer; do
    [ -n "$c" ] && [ -x "$c" ] && { dirname "$(readlink -f "$c")"; return 0; }
  done
  return 1
}

cmd_pack() {
  local build=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --build-dir) build=$2; shift 2 ;;
      *) die "pack: unknown argument '$1'" ;;
    esac
  done
  export PATH=/usr/local/cuda/bin:$PATH
  cd "$repo" || exit 2
  if [ -z "$build" ]; then
    build=build-gpu-check
    if [ ! -f "$build/CMakeCache.txt" ]; then
      local launcher=()
      command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
      # sm_90 GPU code; the CPU code is portable (the pack copies are chosen at run time).
      # One shared engine library (and CUDA runtime) for the four programs, not a copy in each.
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DLOCKSTEP_SIMBODY_ORACLE=OFF -DLOCKSTEP_BUILD_TESTS=ON -DLOCKSTEP_BUILD_BENCH=ON \
        -DLOCKSTEP_SHARED_ENGINE=ON "${launcher[@]}" >/dev/null || die "pack: cmake configure failed"
    fi
  fi
  local cache=$build/CMakeCache.txt
  [ -f "$cache" ] || die "pack: $build is not a CMake build directory"
  grep -Eq '^CMAKE_CUDA_ARCHITECTURES:[A-Z]+=(.*[^0-9])?90([^0-9].*)?$' "$cache" ||
    die "pack: $build is not built for sm_90 (CMAKE_CUDA_ARCHITECTURES)"
  grep -Eq '^LOCKSTEP_SHARED_ENGINE:BOOL=(ON|TRUE|1)$' "$cache" ||
    die "pack: $build does not share the engine between the programs: configure it with -DLOCKSTEP_SHARED_ENGINE=ON"
  cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}" || die "pack: build failed"

  local stage
  stage=$(mktemp -d) || exit 2
  trap 'rm -rf "$stage"' RETURN
  mkdir -p "$stage/bin" "$stage/lib"
  local b
  for b in "${binaries[@]}"; do
    [ -x "$build/$b" ] || die "pack: $build/$b was not built"
    cp "$build/$b" "$stage/bin/"
    if command -v strip >/dev/null; then strip --strip-unneeded "$stage/bin/$b" || die "pack: strip $b failed"; fi
  done
  # Every shared library but the C and C++ runtimes, which the device machine has (newer).
  local missing
  missing=$(cd "$build" && ldd "${binaries[@]}" | grep "not found" || true)
  [ -z "$missing" ] || die "pack: libraries not found here: $missing"
  local lib
  for lib in $(cd "$build" && ldd "${binaries[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u); do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) ;;
      libcuda.so* | libnvidia*) ;;  # the driver's: the device machine's own
      *) cp -L "$lib" "$stage/lib/"
         # The engine library built here (LOCKSTEP_SHARED_ENGINE) is stripped as the programs are.
         case "$(readlink -f "$lib")" in
           "$(readlink -f "$build")"/*) strip --strip-unneeded "$stage/lib/$(basename "$lib")" || die "pack: strip $lib failed" ;;
         esac ;;
    esac
  done
  local sanitizer_note="not packed: none here (the device machine's own is used)"
  local sdir
  if sdir=$(find_sanitizer_dir); then
    cp -a "$sdir" "$stage/compute-sanitizer"
    sanitizer_note="packed from $sdir"
  fi
  {
    echo "lockstep GPU check pack"
    echo "made       $(date -u '+%Y-%m-%d %H:%M UTC') on ${HOSTNAME:-$(uname -n)}"
    echo "commit     $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "build      $build ($(grep '^CMAKE_BUILD_TYPE:' "$cache" | cut -d= -f2), CUDA architectures $(grep '^CMAKE_CUDA_ARCHITECTURES:' "$cache" | cut -d= -f2))"
    echo "nvcc       $(nvcc --version 2>/dev/null | tail -1)"
    echo "sanitizer  $sanitizer_note"
    echo "files:"
    (cd "$stage" && find . -type f -printf '  %p %s\n' | sort)
  } >"$stage/MANIFEST.txt"
  mkdir -p "$pack_dir"
  rm -f "$pack_file"
  tar -C "$stage" -czf "$pack_file" . || die "pack: tar failed"
  cp "$stage/MANIFEST.txt" "$pack_dir/MANIFEST.txt"

  # What the device tool sends: tracked and untracked-not-ignored files, shared/, the carried pack.
  local tree pack total
  tree=$(cd "$repo" && git ls-files -z -co --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
  pack=$(du -sb "$pack_dir" | cut -f1)
  total=$((tree + pack))
  echo "gpu-check pack: $pack_file"
  echo "  unpacked $(mib "$(du -sb "$stage" | cut -f1)"), packed $(mib "$pack"); working tree $(mib "$tree"); together $(mib $total) of the tool's 64 MiB"
  echo "  compute-sanitizer: $sanitizer_note"
  [ $total -le $limit_bytes ] || die "pack: over the device tool's 64 MiB limit"
  echo "  device tool: run with carry [\".gpu-check\"], timeout_s 600, command: scripts/gpu-check.sh run"
}

# ---- on the device machine ----------------------------------------------------------------------

unpack() {  # sets work, bin, lib; exports LD_LIBRARY_PATH and LOCKSTEP_SCENES_DIR
  [ -f "$pack_file" ] || die "no pack at $pack_file: run scripts/gpu-check.sh pack on the build machine and carry .gpu-check"
  work=${TMPDIR:-/tmp}/lockstep-gpu-check
  rm -rf "$work"
  mkdir -p "$work/pack" "$work/logs" || exit 2
  tar -C "$work/pack" -xzf "$pack_file" || die "cannot unpack $pack_file"
  bin=$work/pack/bin
  lib=$work/pack/lib
  host_ld_library_path=${LD_LIBRARY_PATH:-}  # the machine's own, for its tools (ncu)
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LOCKSTEP_SCENES_DIR="$repo/scenes"
  export GPU_CHECK_BIN=$bin
}

smi_lists_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

sanitizer_bin() {
  [ -x "$work/pack/compute-sanitizer/compute-sanitizer" ] && { echo "$work/pack/compute-sanitizer/compute-sanitizer"; return 0; }
  local d
  d=$(find_sanitizer_dir) && [ -x "$d/compute-sanitizer" ] && { echo "$d/compute-sanitizer"; return 0; }
  return 1
}

# Report lines: "STATUS  NAME  SECONDS  DETAIL", kept in arrays for the text and JSON reports.
names=() statuses=() seconds=() details=() logs=()
record() {  # status name seconds detail log
  statuses+=("$1") names+=("$2") seconds+=("$3") details+=("$4") logs+=("${5:-}")
  printf '%-5s %-22s %6ss  %s\n' "$1" "$2" "$3" "$4"
}

# run_step NAME CAP -- COMMAND...: runs COMMAND with its output in logs/NAME.log under a time limit
# of CAP seconds or what is left of the budget; sets step_rc, step_secs, step_log. Returns 1 when
# no time was left (the step is then recorded as skipped).
run_step() {
  local name=$1 cap=$2
  shift 3
  step_log=$work/logs/$name.log
  local left=$((deadline - $(date +%s) - 5))
  [ $left -lt $cap ] && cap=$left
  if [ $cap -lt 10 ]; then
    record SKIP "$name" 0 "out of time: the budget of ${budget}s is spent"
    return 1
  fi
  local t0 t1
  t0=$(date +%s.%N)
  echo "\$ $*" >"$step_log"
  timeout -k 10 "$cap" "$@" >>"$step_log" 2>&1
  step_rc=$?
  t1=$(date +%s.%N)
  step_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ $step_rc = 124 ] || [ $step_rc = 137 ]; then step_timeout=$cap; else step_timeout=0; fi
  return 0
}

rc_text() { if [ $step_timeout != 0 ]; then echo "timed out after ${step_timeout}s"; else echo "exit $step_rc"; fi; }

# A gtest run's verdict from its exit status and summary lines.
gtest_step() {  # name cap binary filter [extra args...]
  local name=$1 cap=$2 binary=$3 filter=$4
  shift 4
  run_step "$name" "$cap" -- "$bin/$binary" --gtest_filter="$filter" "$@" || return 0
  local passed skipped failed
  passed=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$step_log" | grep -Eo '[0-9]+$' | tail -1)
  skipped=$(grep -Eo '^\[  SKIPPED \] [0-9]+ test' "$step_log" | grep -Eo '[0-9]+' | tail -1)
  failed=$(grep -E '^\[  FAILED  \] [A-Za-z_]' "$step_log" | awk '{print $4}' | sort -u | wc -l)
  local counts="${passed:-0} passed, ${skipped:-0} skipped, $failed failed"
  if [ $step_timeout != 0 ]; then
    record FAIL "$name" "$step_secs" "timed out after ${step_timeout}s ($counts so far)" "$step_log"
  elif [ $step_rc != 0 ]; then
    record FAIL "$name" "$step_secs" "exit $step_rc: $counts: $(grep -E '^\[  FAILED  \] [A-Za-z_]' "$step_log" | awk '{print $4}' | sort -u | head -8 | tr '\n' ' ')" "$step_log"
  elif [ "${passed:-0}" = 0 ] && [ "${skipped:-0}" = 0 ]; then
    record FAIL "$name" "$step_secs" "no test matched '$filter'" "$step_log"
  elif [ $gpu = 0 ]; then
    record SKIP "$name" "$step_secs" "no GPU: $counts (the tests skip themselves cleanly)"
  elif [ "${passed:-0}" = 0 ]; then
    record FAIL "$name" "$step_secs" "a GPU is here but every test skipped itself: $(grep -m1 -i 'skipped:' "$step_log")" "$step_log"
  else
    local which=""
    [ "${skipped:-0}" != 0 ] && which=": skipped $(grep -E '^\[  SKIPPED \] [A-Za-z_]' "$step_log" | awk '{print $4}' | sort -u | tr '\n' ' ')"
    record PASS "$name" "$step_secs" "$counts$which"
  fi
}

sanitizer_step() {  # tool cap [extra sanitizer args...]
  local tool=$1 cap=$2
  shift 2
  local name=sanitizer-$tool cs
  if [ $gpu = 0 ]; then record SKIP "$name" 0 "no GPU"; return; fi
  if ! cs=$(sanitizer_bin); then
    record SKIP "$name" 0 "compute-sanitizer not found (pack, PATH, /usr/local/cuda/compute-sanitizer, /usr/local/cuda/bin)"
    return
  fi
  run_step "$name" "$cap" -- "$cs" --tool "$tool" --error-exitcode 86 --print-limit 20 "$@" \
    "$bin/lockstep_tests" --gtest_filter="$sanitizer_filter" || return 0
  local summary passed
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$step_log" | tail -2 | sed 's/^========= //' | tr '\n' ' ')
  passed=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$step_log" | grep -Eo '[0-9]+$' | tail -1)
  if [ $step_timeout != 0 ]; then
    record FAIL "$name" "$step_secs" "timed out after ${step_timeout}s" "$step_log"
  elif [ $step_rc = 86 ]; then
    record FAIL "$name" "$step_secs" "errors found: $summary" "$step_log"
  elif [ $step_rc != 0 ]; then
    record FAIL "$name" "$step_secs" "exit $step_rc (tests failed under the tool): $summary" "$step_log"
  elif [ "${passed:-0}" = 0 ]; then
    record FAIL "$name" "$step_secs" "no test ran under the tool (all skipped?): $(grep -m1 -i 'skipped' "$step_log")" "$step_log"
  else
    record PASS "$name" "$step_secs" "$passed tests; ${summary:-no errors}"
  fi
}

# Compares the study's statistics on CUDA with the same study on the CPU (python3; skipped without).
compare_studies() {  # cuda.json cpu.json
  python3 - "$1" "$2" <<'EOF'
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
if g["flagged_worlds"] != c["flagged_worlds"]:
    bad.append("flagged worlds %s vs %s" % (g["flagged_worlds"], c["flagged_worlds"]))
for og, oc in zip(g["outputs"], c["outputs"]):
    scale = 1 + max(abs(oc["min"]), abs(oc["max"]))
    if og["count"] != oc["count"]:
        bad.append("%s: count %s vs %s" % (oc["name"], og["count"], oc["count"]))
    for k in ("mean", "stddev", "min", "max"):
        if abs(og[k] - oc[k]) > 1e-6 * scale:
            bad.append("%s: %s %r vs %r" % (oc["name"], k, og[k], oc[k]))
    for a, b in zip(og["quantiles"], oc["quantiles"]):
        if abs(a - b) > 1e-6 * scale:
            bad.append("%s: quantile %r vs %r" % (oc["name"], a, b))
print("; ".join(bad) if bad else "%d outputs agree to 1e-6 of their range" % len(c["outputs"]))
sys.exit(1 if bad else 0)
EOF
}

# Compares two recordings of the same run (npz: one .npy array per quantity), CUDA against the
# CPU: every number within 1e-8 of its quantity's largest magnitude, names equal. Plain python3
# (the .npy format read by hand: little-endian numbers and fixed-width unicode names).
compare_recordings() {  # cuda.npz cpu.npz
  python3 - "$1" "$2" <<'EOF'
import ast, math, struct, sys, zipfile

def arrays(path):
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            d = z.read(name)
            major = d[6]
            n = int.from_bytes(d[8:10] if major == 1 else d[8:12], "little")
            start = 10 if major == 1 else 12
            header = ast.literal_eval(d[start:start + n].decode("latin1"))
            body, descr = d[start + n:], header["descr"]
            count = 1
            for k in header["shape"]:
                count *= k
            if descr[1] == "U":
                w = int(descr[2:])
                values = [body[i * 4 * w:(i + 1) * 4 * w].decode("utf-32-le").rstrip("\0") for i in range(count)]
            else:
                fmt = {"<f8": "d", "<f4": "f", "<i4": "i", "<i8": "q", "|u1": "B", "|b1": "?"}[descr]
                values = list(struct.unpack("<%d%s" % (count, fmt), body[:count * struct.calcsize(fmt)]))
            out[name] = (header["shape"], values)
    return out

g, c = arrays(sys.argv[1]), arrays(sys.argv[2])
bad, worst, n = [], 0.0, 0
if sorted(g) != sorted(c):
    bad.append("arrays differ: %s" % sorted(set(g) ^ set(c)))
for k in sorted(set(g) & set(c)):
    (sa, a), (sb, b) = g[k], c[k]
    if sa != sb:
        bad.append("%s: shape %s vs %s" % (k, sa, sb))
    elif b and isinstance(b[0], str):
        if a != b:
            bad.append("%s: names differ" % k)
    else:
        finite = [abs(y) for y in b if math.isfinite(y)]
        scale = 1 + (max(finite) if finite else 0)
        d, odd = 0.0, 0
        for x, y in zip(a, b):
            if math.isfinite(y) and math.isfinite(x):
                d = max(d, abs(x - y) / scale)
            elif not (x == y or (math.isnan(x) and math.isnan(y))):
                odd += 1
        worst, n = max(worst, d), n + 1
        if d > 1e-8 or odd:
            bad.append("%s: differs by %.3g of its range%s" % (k, d, ", %d non-finite values differ" % odd if odd else ""))
print("; ".join(bad[:6]) if bad else "%d recorded arrays agree (worst %.2g of their range)" % (n, worst))
sys.exit(1 if bad else 0)
EOF
}

# One command line run on CUDA (when there is a GPU) and on the CPU, then the comparison of their
# outputs: steps cli-KIND-cuda, cli-KIND-cpu and KIND-cuda-vs-cpu.
#   cli_on_both KIND PLURAL OUT_SUFFIX FILE_SUFFIX SUMMARY_KEY CUDA_LIMIT CPU_LIMIT COMPARE ARGS...
# writes --out $work/KIND-DEVICE$OUT_SUFFIX, compares $work/KIND-DEVICE$FILE_SUFFIX; the step's summary
# is the log line starting with SUMMARY_KEY.
cli_on_both() {
  local kind=$1 plural=$2 out_suffix=$3 file_suffix=$4 key=$5 cuda_limit=$6 cpu_limit=$7 compare=$8
  shift 8
  local dev limit r
  for dev in cuda cpu; do
    if [ $dev = cuda ] && [ $gpu != 1 ]; then record SKIP "cli-$kind-cuda" 0 "no GPU"; continue; fi
    limit=$cpu_limit
    [ $dev = cuda ] && limit=$cuda_limit
    run_step "cli-$kind-$dev" "$limit" -- "$bin/lockstep" "$@" --device $dev --out "$work/$kind-$dev$out_suffix" && {
      if [ $step_rc = 0 ]; then record PASS "cli-$kind-$dev" "$step_secs" "$(grep -m1 "^$key" "$step_log" | sed "s/^$key *//")"
      else record FAIL "cli-$kind-$dev" "$step_secs" "$(rc_text)" "$step_log"; fi
    }
  done
  if [ $gpu = 1 ] && [ -f "$work/$kind-cuda$file_suffix" ] && [ -f "$work/$kind-cpu$file_suffix" ]; then
    if ! command -v python3 >/dev/null; then record SKIP "$kind-cuda-vs-cpu" 0 "no python3"
    elif r=$($compare "$work/$kind-cuda$file_suffix" "$work/$kind-cpu$file_suffix" 2>&1); then record PASS "$kind-cuda-vs-cpu" 0 "$r"
    else record FAIL "$kind-cuda-vs-cpu" 0 "$r"; fi
  else
    record SKIP "$kind-cuda-vs-cpu" 0 "needs both $plural (and a GPU)"
  fi
}

# ---- Nsight Compute on the step kernel (issue 37) -------------------------------------------------

ncu_metrics=dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum

find_ncu() {
  local c
  for c in "$(command -v ncu 2>/dev/null)" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/nsight-compute*/ncu; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}

# Reads `ncu --import R --csv --page raw --print-units base` (one row per profiled workload) and
# prints the figures per world-step of the last step-kernel row (advanceKernel, or a graph when the
# steps ran in one): "dram_kb local_ld_kb local_st_kb warps_pct duration_ms world_steps_per_s name".
ncu_figures() {  # csv worlds steps
  python3 - "$1" "$2" "$3" <<'EOF_NCU'
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
worlds, steps = int(sys.argv[2]), int(sys.argv[3])
head = next((i for i, r in enumerate(rows) if "ID" in r and "dram__bytes_read.sum" in r), None)
if head is None:
    sys.exit("no ncu result rows with dram__bytes_read.sum in the CSV")
h = rows[head]
units = rows[head + 1] if head + 1 < len(rows) else []
data = [r for r in rows[head + 2:] if len(r) == len(h)]
name_col = next((h.index(c) for c in ("Kernel Name", "Function Name", "Name") if c in h), None)
def value(r, metric):
    text = r[h.index(metric)].replace(",", "").strip()
    return float(text) if text not in ("", "n/a") else float("nan")
steps_rows = [r for r in data if name_col is None or "advanceKernel" in r[name_col] or "raph" in r[name_col]]
if not steps_rows:
    sys.exit("no advanceKernel (or graph) among the profiled workloads: %s" % [r[name_col] for r in data])
r = steps_rows[-1]
unit = dict(zip(h, units))
for m in ("dram__bytes_read.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "gpu__time_duration.sum"):
    if unit.get(m) not in (None, "", "byte", "nsecond", "ns"):
        sys.exit("unexpected unit %r for %s (expected base units)" % (unit.get(m), m))
per = worlds * steps
dram = (value(r, "dram__bytes_read.sum") + value(r, "dram__bytes_write.sum")) / per
ld = value(r, "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum") / per
st = value(r, "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum") / per
warps = value(r, "sm__warps_active.avg.pct_of_peak_sustained_active")
ns = value(r, "gpu__time_duration.sum")
m = re.search(r"\w+Kernel(<[^>]*>)?", r[name_col]) if name_col is not None else None
name = m.group(0) if m else (r[name_col][:40] if name_col is not None else "?")
print("%.0f %.0f %.0f %.1f %.3f %.3g %s" % (dram, ld, st, warps, ns * 1e-6, per / (ns * 1e-9), name.replace(" ", "")))
EOF_NCU
}

# ncu_step NAME SCENE PRECISION WORLDS STEPS: profiles `lockstep bench SCENE` (its two warm-up calls
# and one timed call, each one launch of STEPS steps) with the issue's metrics and sections, the
# whole graph as one workload where the steps run in a CUDA graph (--graph-profiling graph; the
# benchmark's steps are plain launches, profiled as kernels), the clocks left alone; reports the
# last step launch per world-step beside the bytes model (lockstep_opcount), and keeps the report.
ncu_step() {
  local name=$1 scene=$2 precision=$3 worlds=$4 steps=$5 ncu
  if [ $gpu = 0 ]; then record SKIP "$name" 0 "no GPU"; return; fi
  if ! ncu=$(find_ncu); then record SKIP "$name" 0 "ncu not found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute)"; return; fi
  local rep=$work/logs/$name
  run_step "$name" 120 -- env LD_LIBRARY_PATH="$host_ld_library_path" "$ncu" --graph-profiling graph \
    --clock-control none --target-processes all --launch-count 3 --metrics "$ncu_metrics" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis -f -o "$rep" \
    env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$bin/lockstep" bench "$repo/scenes/$scene.json" --device cuda \
    --worlds "$worlds" --precision "$precision" --steps-per-call "$steps" --repetitions 1 || return 0
  if [ $step_rc != 0 ] || [ ! -f "$rep.ncu-rep" ]; then
    record FAIL "$name" "$step_secs" "$(rc_text): $(grep -m1 -E '==ERROR==|==WARNING==' "$step_log")" "$step_log"
    return
  fi
  [ "${keep_reports:-1}" = 1 ] && cp "$rep.ncu-rep" "$out/$name.ncu-rep" 2>/dev/null
  local f model
  env LD_LIBRARY_PATH="$host_ld_library_path" "$ncu" --import "$rep.ncu-rep" --csv --page raw --print-units base \
    >"$rep.csv" 2>>"$step_log"
  if ! f=$(ncu_figures "$rep.csv" "$worlds" "$steps" 2>&1); then
    record FAIL "$name" "$step_secs" "the report could not be read: $f" "$step_log"
    return
  fi
  # The bytes model's "today" figure for the same scene and precision (bench/README.md).
  model=$(timeout 60 "$bin/lockstep_opcount" "$scene" 2>/dev/null | awk -v p="$precision" '$1 == p && NF >= 5 {print $3; exit}')
  set -- $f
  local line
  line=$(printf '%s %s, %s worlds x %s steps: DRAM %.1f KB/world-step (model %s), local memory %.1f KB loaded, %.1f KB stored, warps active %s%%, %s ms (%s world-steps/s); %s' \
    "$scene" "$precision" "$worlds" "$steps" "$(awk -v b="$1" 'BEGIN {print b / 1000}')" \
    "$(if [ -n "$model" ]; then awk -v b="$model" 'BEGIN {printf "%.1f KB", b / 1000}'; else echo "n/a"; fi)" \
    "$(awk -v b="$2" 'BEGIN {print b / 1000}')" "$(awk -v b="$3" 'BEGIN {print b / 1000}')" "$4" "$5" "$6" "$7")
  echo "$line" >>"$work/logs/ncu-summary.txt"
  record PASS "$name" "$step_secs" "$line"
}

write_reports() {
  local txt=$out/gpu-check.txt json=$out/gpu-check.json i npass=0 nfail=0 nskip=0
  for i in "${!statuses[@]}"; do
    case "${statuses[$i]}" in PASS) npass=$((npass + 1)) ;; FAIL) nfail=$((nfail + 1)) ;; *) nskip=$((nskip + 1)) ;; esac
  done
  summary="gpu-check: $npass pass, $nfail fail, $nskip skip ($device_line)"
  {
    echo "lockstep GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "device: $device_line"
    echo "pack:   $(sed -n 's/^commit *//p' "$work/pack/MANIFEST.txt") ($(sed -n 's/^made *//p' "$work/pack/MANIFEST.txt"))"
    echo
    for i in "${!statuses[@]}"; do
      printf '%-5s %-22s %6ss  %s\n' "${statuses[$i]}" "${names[$i]}" "${seconds[$i]}" "${details[$i]}"
    done
    echo
    echo "$summary"
    if [ -s "$work/logs/ncu-summary.txt" ]; then
      echo
      echo "ncu, the step kernel per world-step (reports: ncu-*.ncu-rep; ncu --import FILE --page details):"
      cat "$work/logs/ncu-summary.txt"
    fi
    if [ -s "$work/logs/occupancy.txt" ]; then
      echo
      echo "lockstep bench at each occupancy of the step kernel (LOCKSTEP_CUDA_STEP_MIN_BLOCKS; 0: the build's own):"
      cat "$work/logs/occupancy.txt"
    fi
    if [ -s "$work/logs/bench-medians.txt" ]; then
      echo
      echo "chain-7 medians (world-steps/s in the items_per_second column):"
      cat "$work/logs/bench-medians.txt"
    fi
    for i in "${!statuses[@]}"; do
      if [ "${statuses[$i]}" = FAIL ] && [ -n "${logs[$i]}" ] && [ -f "${logs[$i]}" ]; then
        echo
        echo "---- ${names[$i]}: last 40 lines of its log ----"
        tail -n 40 "${logs[$i]}"
      fi
    done
  } >"$txt"
  esc() { printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'; }
  {
    printf '{"device": "%s", "pass": %d, "fail": %d, "skip": %d, "steps": [' "$(esc "$device_line")" $npass $nfail $nskip
    for i in "${!statuses[@]}"; do
      [ "$i" = 0 ] || printf ', '
      printf '{"name": "%s", "status": "%s", "seconds": %s, "detail": "%s"}' \
        "$(esc "${names[$i]}")" "$(esc "${statuses[$i]}")" "${seconds[$i]}" "$(esc "${details[$i]}")"
    done
    printf ']}\n'
  } >"$json"
  tar -C "$work" -czf "$out/gpu-check-logs.tar.gz" logs 2>/dev/null
}

# Sets gpu (1 when there is one), smi, engine, engine_device and device_line.
detect_gpu() {
  # A GPU is there when nvidia-smi lists one or the engine finds a usable CUDA device (its device
  # line); GPU_CHECK_NO_GPU=1 / GPU_CHECK_ASSUME_GPU=1 force either answer (to test this script).
  smi=0 engine=0
  smi_lists_gpu && smi=1
  engine_device=$(timeout 60 "$bin/lockstep" simulate --worlds 1 --steps 1 2>&1 | grep -m1 '^device' | sed 's/^device *//')
  case "$engine_device" in *"(CUDA, compute capability"*) engine=1 ;; esac
  gpu=0
  { [ $smi = 1 ] || [ $engine = 1 ]; } && gpu=1
  [ "${GPU_CHECK_ASSUME_GPU:-0}" = 1 ] && gpu=1
  [ "${GPU_CHECK_NO_GPU:-0}" = 1 ] && gpu=0
  if [ $smi = 1 ]; then
    device_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
  elif [ $gpu = 1 ]; then
    device_line="${engine_device:-assumed GPU (GPU_CHECK_ASSUME_GPU=1)}"
  else
    device_line="no GPU on ${HOSTNAME:-$(uname -n)}: GPU steps skipped"
  fi
}

cmd_run() {
  budget=540
  while [ $# -gt 0 ]; do
    case "$1" in
      --budget) budget=$2; shift 2 ;;
      *) die "run: unknown argument '$1'" ;;
    esac
  done
  local start
  start=$(date +%s)
  deadline=$((start + budget))
  unpack
  out=${OUT:-$pack_dir/results}
  mkdir -p "$out" || exit 2
  cd "$repo" || exit 2
  detect_gpu
  echo "gpu-check run: $device_line; budget ${budget}s; report in $out"

  # 1. The pack loads here: every binary finds its libraries.
  local b missing=""
  for b in "${binaries[@]}"; do
    missing+=$(ldd "$bin/$b" 2>&1 | grep "not found" | sed "s|^|$b: |")
  done
  if [ -n "$missing" ]; then record FAIL libraries 0 "$(echo "$missing" | tr '\n' ' ')"; else record PASS libraries 0 "every binary finds its shared libraries"; fi

  # 2. The GPU, its driver and clocks.
  if [ $gpu = 0 ]; then
    record SKIP gpu 0 "nvidia-smi lists no GPU; the engine: $engine_device"
  elif [ $engine = 0 ]; then
    record FAIL gpu 0 "the engine finds no usable CUDA device: $engine_device"
  else
    [ $smi = 1 ] && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
      --format=csv >"$work/logs/gpu.csv" 2>&1
    record PASS gpu 0 "$engine_device; $(tail -1 "$work/logs/gpu.csv" 2>/dev/null)"
  fi
  if run_step version 30 -- "$bin/lockstep" --version; then
    if [ $step_rc = 0 ]; then record PASS version "$step_secs" "$(sed 1d "$step_log" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"; else record FAIL version "$step_secs" "$(rc_text)" "$step_log"; fi
  fi

  # 3. The GPU tests (they skip themselves without a GPU).
  gtest_step gpu-tests 200 lockstep_tests "$gpu_test_filter"
  gtest_step gpu-throughput-tests 120 lockstep_throughput_tests "$throughput_filter"

  # 4. The command line: the default run (on the GPU when there is one), a study on CUDA against
  #    the same study on the CPU.
  if [ $gpu = 1 ]; then
    run_step cli-default 90 -- "$bin/lockstep"
  else  # the default run's 4,096 worlds x 1,000 steps are minutes on a small CPU: a short run instead
    run_step cli-default 90 -- "$bin/lockstep" simulate --worlds 64 --steps 100
  fi && {
    local dev
    dev=$(grep -m1 '^device' "$step_log" | sed 's/^device *//')
    if [ $step_rc != 0 ]; then record FAIL cli-default "$step_secs" "$(rc_text)" "$step_log"
    elif [ $gpu = 1 ] && ! grep -q '^device.*CUDA' "$step_log"; then record FAIL cli-default "$step_secs" "ran on: $dev (expected the GPU)" "$step_log"
    else record PASS cli-default "$step_secs" "$dev; $(grep -m1 '^throughput' "$step_log" | sed 's/^throughput *//'); $(grep -m1 '^flagged' "$step_log" | tr -s ' ')"
    fi
  }
  cli_on_both study studies "" .json worlds 90 120 compare_studies \
    study studies/chain-7-seed-stiffness.json --worlds 512 --steps 200
  # A recording of every quantity (`--record all`, downloads every 20 steps) on CUDA against the
  # same run on the CPU, and the command line's own throughput measurement.
  cli_on_both record recordings .npz .npz output 60 90 compare_recordings \
    simulate --worlds 64 --steps 200 --record-every 20 --record all
  # MuJoCo's law (a soft solve per world and step, kernels' features 2) on Gymnasium's Ant from its
  # MJCF: 1 s at its 10 ms step, every quantity recorded (2026-11-28 on an H200: 5.1e-14 of the range).
  cli_on_both record-ant recordings .npz .npz output 60 90 compare_recordings \
    simulate models/mjcf/ant.xml --worlds 64 --steps 100 --record-every 10 --record all
  if [ $gpu = 1 ]; then
    run_step cli-bench-cuda 90 -- "$bin/lockstep" bench --device cuda --worlds 4096,65536 --precision float,double && {
      if [ $step_rc = 0 ]; then record PASS cli-bench-cuda "$step_secs" "$(grep -ci 'cuda' "$step_log") lines name CUDA"
      else record FAIL cli-bench-cuda "$step_secs" "$(rc_text)" "$step_log"; fi
    }
  else
    record SKIP cli-bench-cuda 0 "no GPU"
  fi

  # 5. Nsight Compute on the step kernel (issue 37): chain-7 in double at 262,144 worlds, humanoid in
  #    float at 65,536, two steps per launch: DRAM and local-memory bytes per world-step, warps
  #    active, duration.
  ncu_step ncu-chain7-double chain-7 double 262144 2
  ncu_step ncu-humanoid-float humanoid float 65536 2

  # 6. compute-sanitizer on the small set (each tool its own limit; what is left of the budget).
  sanitizer_step memcheck 150 --leak-check full
  sanitizer_step racecheck 100
  sanitizer_step initcheck 100

  # 7. The chain-7 benchmarks, five repetitions each, last: their time varies most (without a GPU:
  #    one small CPU benchmark, to check that the suite runs).
  local filter=$bench_filter_gpu reps=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
  [ $gpu = 1 ] || { filter='^step/chain-7/cpu/float/256/'; reps=(--benchmark_min_time=0.05); }
  run_step bench-chain7 180 -- "$bin/lockstep_bench" --benchmark_filter="$filter" "${reps[@]}" \
    --benchmark_out="$out/gpu_bench.json" --benchmark_out_format=json && {
    grep -E '_median|ERROR' "$step_log" | head -30 >"$work/logs/bench-medians.txt"
    local n
    n=$(grep -c '_median\|/manual_time ' "$step_log")
    if [ $step_timeout != 0 ]; then record FAIL bench-chain7 "$step_secs" "timed out after ${step_timeout}s" "$step_log"
    elif [ $step_rc != 0 ] || grep -q 'ERROR OCCURRED' "$step_log"; then record FAIL bench-chain7 "$step_secs" "exit $step_rc: $(grep -m1 'ERROR OCCURRED' "$step_log")" "$step_log"
    elif [ $gpu = 0 ]; then record SKIP bench-chain7 "$step_secs" "no GPU: ran '$filter' on the CPU instead ($n lines)"
    else record PASS bench-chain7 "$step_secs" "$n results in gpu_bench.json; medians below"
    fi
  }

  write_reports
  echo
  cat "$out/gpu-check.txt"
  grep -q '^FAIL' "$out/gpu-check.txt" && return 1
  return 0
}

# The step kernel at each occupancy a pack built with LOCKSTEP_CUDA_OCCUPANCY_VARIANTS has
# (kernels/batch_kernels.cuh), side by side in one call: for each, the GPU tests of the models without
# constraints (the CPU's results, bit for bit across batches), `lockstep bench` on chain-7 and
# humanoid, and Nsight Compute on chain-7 (double) and humanoid (float) as in `run`.
cmd_occupancy() {
  budget=420
  local variants=() ncu=1
  local tests='GpuDynamics.*:GpuPaths.AdvanceAndEvaluateWithoutContacts*:GpuPaths.RecordedStepsMatchStepsBitForBit:GpuPaths.BatchOfManyBlocksMatchesCpu:GpuPaths.BatchOfMoreThan65535BlocksMatchesWorldsRunAlone'
  local benches='scenes/chain-7.json:double,float:65536,262144,1048576 scenes/humanoid.json:float,double:65536,262144'
  while [ $# -gt 0 ]; do
    case "$1" in
      --budget) budget=$2; shift 2 ;;
      --tests) tests=$2; shift 2 ;;
      --bench) benches=$2; shift 2 ;;
      --no-ncu) ncu=0; shift ;;
      *) variants+=("$1"); shift ;;
    esac
  done
  [ ${#variants[@]} -gt 0 ] || variants=(0 1 3 4 6)
  deadline=$(($(date +%s) + budget))
  unpack
  out=${OUT:-$pack_dir/results}
  mkdir -p "$out" || exit 2
  cd "$repo" || exit 2
  detect_gpu
  keep_reports=0  # ten reports are too many files for the device tool: they travel in the logs' tarball
  echo "gpu-check occupancy: $device_line; variants ${variants[*]}; budget ${budget}s; report in $out"
  local mb
  for mb in "${variants[@]}"; do
    export LOCKSTEP_CUDA_STEP_MIN_BLOCKS=$mb
    gtest_step "tests-blocks$mb" 120 lockstep_tests "$tests"
    if [ $gpu = 1 ]; then
      local script="" b
      for b in $benches; do  # SCENE:PRECISIONS:WORLDS
        script+="\"$bin/lockstep\" bench $(echo "$b" | awk -F: '{print $1 " --device cuda --precision " $2 " --worlds " $3}') && "
      done
      run_step "bench-blocks$mb" 120 -- sh -c "${script}true" && {
        grep -E '^[a-z][-a-z0-9_]* +cuda ' "$step_log" | sed "s/^/blocks $mb  /" >>"$work/logs/occupancy.txt"
        if [ $step_rc = 0 ]; then record PASS "bench-blocks$mb" "$step_secs" "$(grep -cE '^[a-z][-a-z0-9_]* +cuda ' "$step_log") rows below"
        else record FAIL "bench-blocks$mb" "$step_secs" "$(rc_text)" "$step_log"; fi
      }
    else
      record SKIP "bench-blocks$mb" 0 "no GPU"
    fi
    if [ $ncu = 1 ]; then
      ncu_step "ncu-chain7-double-blocks$mb" chain-7 double 262144 2
      ncu_step "ncu-humanoid-float-blocks$mb" humanoid float 65536 2
    fi
  done
  unset LOCKSTEP_CUDA_STEP_MIN_BLOCKS
  write_reports
  echo
  cat "$out/gpu-check.txt"
  grep -q '^FAIL' "$out/gpu-check.txt" && return 1
  return 0
}

cmd_bench() {
  unpack
  out=${OUT:-$pack_dir/results}
  mkdir -p "$out" || exit 2
  cd "$repo" || exit 2
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >"$out/gpu.csv" 2>&1
  "$bin/lockstep_bench" --benchmark_filter="${1:-$bench_filter_gpu}" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_out="$out/gpu_bench.json" --benchmark_out_format=json \
    2>&1 | tee "$out/gpu_bench.txt" | grep -E "median|ERROR|skipped"
}

case "${1:-}" in
  pack) shift; cmd_pack "$@" ;;
  run) shift; cmd_run "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  occupancy) shift; cmd_occupancy "$@" ;;
  compare) shift; compare_recordings "$@" ;;
  exec) shift; unpack; cd "$repo" || exit 2; exec "$@" ;;
  *) sed -n '2,33p' "$0"; exit 2 ;;
esac
