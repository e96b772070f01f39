#!/usr/bin/env bash
# Builds the libFuzzer targets of the scene reader, the URDF import, the study file reader, the .npz
# reader, the MJCF import and the command line's parsing with clang-14, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/. Not part of the default build or of CI.
#
#   fuzz/build.sh
#   export LSAN_OPTIONS=suppressions=fuzz/lsan.supp
#   build-fuzz/scene_fuzzer -dict=fuzz/scene.dict -max_total_time=600 build-fuzz/corpus-scene fuzz/corpus/scene
#   build-fuzz/urdf_fuzzer -dict=fuzz/urdf.dict -max_total_time=600 build-fuzz/corpus-urdf fuzz/corpus/urdf
#   build-fuzz/study_fuzzer -dict=fuzz/study.dict -max_total_time=600 build-fuzz/corpus-study fuzz/corpus/study
#   build-fuzz/npz_fuzzer -dict=fuzz/npz.dict -max_total_time=600 -max_len=8192 build-fuzz/corpus-npz fuzz/corpus/npz
#   build-fuzz/mjcf_fuzzer -dict=fuzz/mjcf.dict -max_total_time=600 -max_len=8192 build-fuzz/corpus-mjcf fuzz/corpus/mjcf
#
# (the first corpus directory collects what the fuzzer finds; the committed seeds stay unchanged;
# fuzz/lsan.supp silences a leak inside urdfdom itself, see there). Large inputs (deep chains,
# wide per_world lists) need -max_len=1000000 or so to be read whole; the seeds include some.
# Needs clang-14 and libclang-rt-14-dev besides the packages of scripts/deps.sh. Every target links
# the engine library of a CMake build (LOCKSTEP_BUILD_DIR, default build/; built first with
# `cmake --build build --target lockstep lockstep_io`), uninstrumented, with the CUDA runtime: the
# readers call its quantity names and model sizes, the study reader checks names on a one-world batch.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${CXX:-clang++-14}
out=build-fuzz
mkdir -p "$out" "$out/corpus-scene" "$out/corpus-urdf" "$out/corpus-study"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Iinclude -isystem /usr/include/eigen3 "-DLOCKSTEP_SOURCE_DIR=\"$PWD\"")
# The engine library of the CMake build, uninstrumented, for what the readers call of it (quantity
# names, model sizes; the study reader's one-world batch); the readers' own objects win over it.
build=${LOCKSTEP_BUILD_DIR:-build}
engine="$build/liblockstep.a"
if [[ ! -f "$engine" ]]; then
  echo "no $engine: build the engine library first (cmake --build $build --target lockstep lockstep_io)" >&2
  exit 1
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
engine_libs=("$engine" "$cuda/lib64/libcudart_static.a" -fopenmp=libgomp -ldl -lrt -lpthread)
# The readers (scene files, URDF, MJCF) and the model builder, instrumented.
sources=(host/model/model.cpp host/model/elements_contact.cpp host/model/elements_force.cpp host/model/elements_host.cpp
         host/model/elements_joint.cpp host/model/elements_mujoco.cpp host/io/json_node.cpp host/io/text_file.cpp
         host/io/scene.cpp host/io/scene_joints.cpp host/io/scene_worlds.cpp host/io/urdf.cpp host/io/mjcf.cpp
         host/io/mjcf_state.cpp host/io/mjcf_compile.cpp host/io/mjcf_checks.cpp)
read -r -a libs <<<"$(pkg-config --libs urdfdom) -lmujoco"
"$cxx" "${flags[@]}" fuzz/scene_fuzzer.cpp "${sources[@]}" "${engine_libs[@]}" "${libs[@]}" -o "$out/scene_fuzzer"
"$cxx" "${flags[@]}" fuzz/urdf_fuzzer.cpp "${sources[@]}" "${engine_libs[@]}" "${libs[@]}" -o "$out/urdf_fuzzer"
echo "built $out/scene_fuzzer and $out/urdf_fuzzer"

# ---- npz_fuzzer: the .npz reader of plot, view and render (host/cli/npz.cpp) -----------------------
mkdir -p "$out/corpus-npz"
read -r -a zip_libs <<<"$(pkg-config --libs libzip)"
"$cxx" "${flags[@]}" fuzz/npz_fuzzer.cpp host/cli/npz.cpp host/io/text_file.cpp "${zip_libs[@]}" -o "$out/npz_fuzzer"
echo "built $out/npz_fuzzer"

# The readers instrumented (the model builder's own object wins over the library's), the study
# statistics, the batch and the CPU backend from the library.
"$cxx" "${flags[@]}" fuzz/study_fuzzer.cpp host/io/study_file.cpp host/io/embedded_scene_file.cpp "${sources[@]}" \
  "-I$build/generated" "${engine_libs[@]}" "${libs[@]}" -o "$out/study_fuzzer"
echo "built $out/study_fuzzer"

# ---- mjcf_fuzzer: the MJCF import (host/io/mjcf*.cpp: the file's checks, MuJoCo's compiler, the
# conversion) as `lockstep` reads an .xml scene, and one world of it evaluated. The import's files are
# compiled here with the sanitizers; the rest of the scene reader and the engine come from the CMake
# build (uninstrumented), so build it first: cmake --build build --target lockstep lockstep_io
#   build-fuzz/mjcf_fuzzer -dict=fuzz/mjcf.dict -max_total_time=600 -max_len=8192 build-fuzz/corpus-mjcf fuzz/corpus/mjcf
if [[ -f "$build/liblockstep_io.a" ]]; then
  mkdir -p "$out/corpus-mjcf"
  "$cxx" "${flags[@]}" "-I$build/generated" fuzz/mjcf_fuzzer.cpp host/io/mjcf.cpp host/io/mjcf_compile.cpp \
    host/io/mjcf_checks.cpp host/io/mjcf_state.cpp host/io/text_file.cpp "$build/liblockstep_io.a" "${engine_libs[@]}" \
    "${libs[@]}" -o "$out/mjcf_fuzzer"
  echo "built $out/mjcf_fuzzer"
else
  echo "skipped mjcf_fuzzer: build the CMake target lockstep_io into $build first"
fi

# ---- cli_fuzzer: the command line's option parsing (host/cli/app.cpp), parsed, never run ------------
# The CLI sources are compiled here with the sanitizers; the engine they link (never run by the
# fuzzer) comes from the CMake build, so build it first:
#   cmake --build build --target lockstep lockstep_io lockstep_report lockstep_view
#   build-fuzz/cli_fuzzer -dict=fuzz/cli.dict -max_total_time=600 build-fuzz/corpus-cli fuzz/corpus/cli
cmake_build=${LOCKSTEP_BUILD_DIR:-build}
if [[ -f "$cmake_build/liblockstep.a" && -f "$cmake_build/liblockstep_io.a" && -f "$cmake_build/liblockstep_report.a" &&
      -f "$cmake_build/liblockstep_view.a" ]]; then
  mkdir -p "$out/corpus-cli"
  cuda=${CUDA_HOME:-/usr/local/cuda}
  cli_sources=(host/cli/app.cpp host/cli/options.cpp host/cli/ranks.cpp host/cli/simulate.cpp host/cli/study_command.cpp host/cli/bench.cpp
               host/cli/info.cpp host/cli/recording.cpp host/cli/plot.cpp host/cli/npz.cpp host/cli/view.cpp)
  read -r -a cli_libs <<<"$(pkg-config --libs urdfdom libzip plplot osmesa) -lassimp -lmujoco"
  "$cxx" "${flags[@]}" -isystem "$cuda/include" -I"$cmake_build/generated" fuzz/cli_fuzzer.cpp "${cli_sources[@]}" \
    "$cmake_build/liblockstep_view.a" "$cmake_build/liblockstep_report.a" "$cmake_build/liblockstep_io.a" "$cmake_build/liblockstep.a" \
    "${cli_libs[@]}" -L"$cuda/lib64" -lcudart_static -lgomp -ldl -lrt -lpthread -o "$out/cli_fuzzer"
  echo "built $out/cli_fuzzer"
else
  echo "skipped cli_fuzzer: build the CMake targets lockstep, lockstep_io, lockstep_report and lockstep_view into $cmake_build first"
fi
