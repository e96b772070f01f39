# Targets of the Lockstep project. Kept out of the top-level file so that each part reads on its own.

set(LOCKSTEP_WARNINGS_CXX -Wall -Wextra -Wno-unused-parameter)
set(LOCKSTEP_CUDA_FLAGS --expt-relaxed-constexpr -Xcompiler=-Wall)

# ---- the engine library ------------------------------------------------------------------------
# The costliest translation units are listed first: Ninja starts the jobs that are ready in the
# order of its build file, which follows the order of the targets and of their sources here. The
# CPU backend's pack copies (about a minute each) and the CUDA kernels (float and double in files of
# their own, minutes each) thus start first and the many short files fill in beside them, instead of
# a long compile starting last while the other cores wait (2 cores: scripts/setup.sh, README).
#
# The CPU backend's pack code (host/backends/cpu_packs.cpp), compiled once per instruction set and
# chosen at run time (host/backends/cpu_pack_copies.h): plain x86-64 (SSE2), AVX2 with FMA, and AVX-512
# where the compiler has it. The rest of the library is plain x86-64: no -march=native, the binary
# runs on any x86-64. Each copy's pack types live in a namespace named by its flags (lanes.h), so
# the linker never mixes the copies. -fno-math-errno lets sqrt be one instruction (the engine never
# reads errno). -ffp-contract=off: the only fused multiply-adds are those the packs spell out
# (lanes.h, PackProduct), the same in every pack width. No SLP vectorization: it turned one-lane
# packs' scalar code into shuffles (slower, measured). A pack's small types (a SpatialVec of
# AVX-512 doubles is 384 bytes, an ArticulatedInertia 1,344) are larger than GCC's default limit
# for keeping an aggregate in registers, which left them on the stack; the limit is raised to 4 KiB
# (chain-7 evaluation 8% faster, bench/README.md).
include(CheckCXXCompilerFlag)
set(LOCKSTEP_CPU_ISA_FLAGS_generic "")
set(LOCKSTEP_CPU_ISA_FLAGS_avx2 -mavx2 -mfma)
set(LOCKSTEP_CPU_ISA_FLAGS_avx512 -mavx512f -mavx512dq -mavx512vl -mavx512bw -mavx2 -mfma)
set(LOCKSTEP_CPU_ISA_BYTES_generic 16)
set(LOCKSTEP_CPU_ISA_BYTES_avx2 32)
set(LOCKSTEP_CPU_ISA_BYTES_avx512 64)
set(LOCKSTEP_CPU_ISA_FUNCTION_generic cpuPackCopyGeneric)
set(LOCKSTEP_CPU_ISA_FUNCTION_avx2 cpuPackCopyAvx2)
set(LOCKSTEP_CPU_ISA_FUNCTION_avx512 cpuPackCopyAvx512)
check_cxx_compiler_flag("-mavx512f -mavx512dq -mavx512vl -mavx512bw" LOCKSTEP_HAS_AVX512_FLAGS)
# Flags of every copy (the comment above says why).
set(LOCKSTEP_CPU_COPY_FLAGS -fno-math-errno -ffp-contract=off -fno-tree-slp-vectorize --param=sra-max-scalarization-size-Ospeed=4096)
set(LOCKSTEP_CPU_ISAS generic avx2)
if(LOCKSTEP_HAS_AVX512_FLAGS)
  list(APPEND LOCKSTEP_CPU_ISAS avx512)
endif()
foreach(isa IN LISTS LOCKSTEP_CPU_ISAS)
  add_library(lockstep_cpu_${isa} OBJECT host/backends/cpu_packs.cpp)
  target_include_directories(lockstep_cpu_${isa} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/host/backends)
  target_compile_features(lockstep_cpu_${isa} PRIVATE cxx_std_17)
  target_link_libraries(lockstep_cpu_${isa} PRIVATE OpenMP::OpenMP_CXX)
  target_compile_options(lockstep_cpu_${isa} PRIVATE ${LOCKSTEP_WARNINGS_CXX} ${LOCKSTEP_CPU_ISA_FLAGS_${isa}} ${LOCKSTEP_CPU_COPY_FLAGS})
  target_compile_definitions(lockstep_cpu_${isa} PRIVATE
    LOCKSTEP_CPU_COPY_FUNCTION=${LOCKSTEP_CPU_ISA_FUNCTION_${isa}}
    LOCKSTEP_CPU_COPY_NAME="${isa}"
    LOCKSTEP_CPU_EXPECTED_LANE_BYTES=${LOCKSTEP_CPU_ISA_BYTES_${isa}})
  set_target_properties(lockstep_cpu_${isa} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()

# Static by default. LOCKSTEP_SHARED_ENGINE builds it as one shared library that every program
# loads (scripts/gpu-check.sh's pack: one copy of the engine and its kernels, about 25 MB, instead
# of one in each of the four programs), with the shared CUDA runtime everywhere, so that a process
# holds one runtime. No <target>_EXPORTS definition: the objects compile exactly as in a static
# build (and ccache finds them).
option(LOCKSTEP_SHARED_ENGINE "Build the engine library as a shared library, with the shared CUDA runtime" OFF)
if(LOCKSTEP_SHARED_ENGINE)
  set(_lockstep_engine_kind SHARED)
  set(LOCKSTEP_CUDART CUDA::cudart)
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
else()
  set(_lockstep_engine_kind STATIC)
  set(LOCKSTEP_CUDART CUDA::cudart_static)
endif()
add_library(lockstep ${_lockstep_engine_kind}
  kernels/linearize_kernels_double.cu
  kernels/linearize_kernels_float.cu
  kernels/batch_kernels_double.cu
  kernels/batch_kernels_float.cu
  host/backends/device_info.cpp
  host/model/model.cpp
  host/model/elements_force.cpp
  host/model/elements_contact.cpp
  host/model/elements_joint.cpp
  host/model/elements_host.cpp
  host/model/elements_mujoco.cpp
  host/model/elements_soft.cpp
  host/batch/batch.cpp
  host/batch/cpu_batch_backend.cpp
  host/batch/cuda_batch_backend.cpp
  host/batch/fields.cpp
  host/batch/quantities.cpp
  host/batch/compiled_model.cpp
  host/batch/parameters.cpp
  host/batch/inspection.cpp
  host/batch/dlpack.cpp
  host/batch/device_memory.cpp
  host/batch/derivatives.cpp
  host/backends/cpu_backend.cpp
  host/model/builtin_scenes.cpp
  host/study/study_worlds.cpp
  host/study/study_reduction.cpp
  host/study/study_rounds.cpp
  host/study/study_statistics.cpp
  host/study/run_choices.cpp
)
# The throughput measurement: the command line's `bench` calls it, so it is built with or without
# the benchmarks.
target_sources(lockstep PRIVATE ${PROJECT_SOURCE_DIR}/host/study/throughput.cpp)
add_library(lockstep::lockstep ALIAS lockstep)
target_include_directories(lockstep PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(lockstep PUBLIC cxx_std_17)
# Eigen is header-only and used inside host .cpp files only: consumers of the installed library
# need not have it.
target_link_libraries(lockstep PUBLIC ${LOCKSTEP_CUDART} OpenMP::OpenMP_CXX PRIVATE $<BUILD_INTERFACE:Eigen3::Eigen>)
target_compile_options(lockstep PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:${LOCKSTEP_WARNINGS_CXX}>
  $<$<COMPILE_LANGUAGE:CUDA>:${LOCKSTEP_CUDA_FLAGS}>)
set_target_properties(lockstep PROPERTIES CUDA_SEPARABLE_COMPILATION OFF POSITION_INDEPENDENT_CODE ON DEFINE_SYMBOL "")
foreach(isa IN LISTS LOCKSTEP_CPU_ISAS)
  target_sources(lockstep PRIVATE $<TARGET_OBJECTS:lockstep_cpu_${isa}>)
endforeach()
if(LOCKSTEP_HAS_AVX512_FLAGS)
  target_compile_definitions(lockstep PRIVATE LOCKSTEP_CPU_AVX512)
endif()
# The step kernel at several occupancies, chosen at run time by LOCKSTEP_CUDA_STEP_MIN_BLOCKS
# (kernels/batch_kernels.cuh), to measure them side by side on a GPU: the GPU check's pack turns it
# on; off elsewhere (each copy is a minute or more of nvcc).
option(LOCKSTEP_CUDA_OCCUPANCY_VARIANTS "Compile the step kernel at several occupancies (for measurements)" OFF)
if(LOCKSTEP_CUDA_OCCUPANCY_VARIANTS)
  target_compile_definitions(lockstep PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:LOCKSTEP_CUDA_OCCUPANCY_VARIANTS>)
endif()

# ---- reports for people: plots (PLplot) --------------------------------------------------------
find_package(PkgConfig REQUIRED)
pkg_check_modules(PLPLOT REQUIRED IMPORTED_TARGET plplot)
add_library(lockstep_report STATIC host/report/png_plots.cpp)
add_library(lockstep::report ALIAS lockstep_report)
set_target_properties(lockstep_report PROPERTIES EXPORT_NAME report)
target_link_libraries(lockstep_report PUBLIC lockstep PRIVATE PkgConfig::PLPLOT)
target_compile_options(lockstep_report PRIVATE ${LOCKSTEP_WARNINGS_CXX})

# ---- scene files, URDF import and the command line (cmake/LockstepFrontend.cmake) -------------
include(${PROJECT_SOURCE_DIR}/cmake/LockstepFrontend.cmake)

# ---- tests -------------------------------------------------------------------------------------
if(LOCKSTEP_BUILD_TESTS)
  enable_testing()
  find_package(GTest REQUIRED)
  add_executable(lockstep_tests
    tests/test_math.cpp
    tests/test_spatial.cpp
    tests/test_inertia.cpp
    tests/test_gpu_spatial.cpp
    tests/gpu_spatial_kernels.cu
    tests/test_mobilizers.cpp
    tests/test_dynamics.cpp
    tests/reference_dynamics.cpp
    tests/test_gpu_dynamics.cpp
    tests/test_gpu_paths.cpp
    tests/test_forces.cpp
    tests/test_constant_force.cpp
    tests/test_mass_matrix.cpp
    tests/test_ground.cpp
    tests/test_compliant_law.cpp
    tests/test_actuators.cpp
    tests/test_constraints.cpp
    tests/test_rollouts.cpp
    tests/test_study.cpp
    tests/test_fields.cpp
    tests/test_cpu_isa.cpp
    tests/test_plot.cpp
    tests/test_study_statistics.cpp
    tests/test_derivatives.cpp
  )
  target_include_directories(lockstep_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(lockstep_tests PRIVATE lockstep lockstep_report Eigen3::Eigen GTest::gtest GTest::gtest_main)
  target_compile_options(lockstep_tests PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${LOCKSTEP_WARNINGS_CXX}>
    $<$<COMPILE_LANGUAGE:CUDA>:${LOCKSTEP_CUDA_FLAGS}>)
  include(GoogleTest)
  gtest_discover_tests(lockstep_tests DISCOVERY_TIMEOUT 60)
  # Counts operator new around CPU steps: its own binary, so the replacement touches no other test.
  add_executable(lockstep_allocation_tests tests/test_no_allocation.cpp)
  target_link_libraries(lockstep_allocation_tests PRIVATE lockstep GTest::gtest GTest::gtest_main)
  target_compile_options(lockstep_allocation_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  gtest_discover_tests(lockstep_allocation_tests DISCOVERY_TIMEOUT 60)
  # Calls the engine's per-world templates directly (plain x86-64, as the library's scalar code).
  add_executable(lockstep_engine_tests tests/test_engine_stages.cpp)
  target_include_directories(lockstep_engine_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(lockstep_engine_tests PRIVATE lockstep Eigen3::Eigen GTest::gtest GTest::gtest_main)
  target_compile_options(lockstep_engine_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  gtest_discover_tests(lockstep_engine_tests DISCOVERY_TIMEOUT 60)
  # The packs' fused multiply-adds as the AVX2 copy compiles them: tests/lanes_fused_avx2.cpp gets
  # that copy's flags and nothing of the library is linked, so no AVX2 code can stand in for another
  # file's; the test calls it only where the processor has AVX2 and FMA.
  add_executable(lockstep_lanes_tests tests/test_lanes_fused.cpp tests/lanes_fused_avx2.cpp)
  target_include_directories(lockstep_lanes_tests PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/tests)
  target_compile_features(lockstep_lanes_tests PRIVATE cxx_std_17)
  target_link_libraries(lockstep_lanes_tests PRIVATE GTest::gtest GTest::gtest_main)
  target_compile_options(lockstep_lanes_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  set_property(SOURCE tests/lanes_fused_avx2.cpp TARGET_DIRECTORY lockstep_lanes_tests
               PROPERTY COMPILE_OPTIONS ${LOCKSTEP_CPU_ISA_FLAGS_avx2} ${LOCKSTEP_CPU_COPY_FLAGS})
  gtest_discover_tests(lockstep_lanes_tests DISCOVERY_TIMEOUT 60)
  # Each copy of the CPU backend's pack code defines only its own symbols (see the script).
  foreach(isa IN LISTS LOCKSTEP_CPU_ISAS)
    add_test(NAME cpu_isa_symbols_${isa}
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DISA=${isa} "-DOBJECTS=$<TARGET_OBJECTS:lockstep_cpu_${isa}>"
              -P ${PROJECT_SOURCE_DIR}/cmake/CheckCpuIsaSymbols.cmake)
  endforeach()
endif()

# ---- Simbody oracle tests (Simbody's inline code must be compiled without NDEBUG) -------------
if(LOCKSTEP_BUILD_TESTS AND LOCKSTEP_SIMBODY_ORACLE)
  find_package(Simbody REQUIRED)
  add_executable(lockstep_simbody_tests
    tests/test_simbody.cpp
    tests/simbody_oracle.cpp
  )
  target_include_directories(lockstep_simbody_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(lockstep_simbody_tests PRIVATE lockstep Eigen3::Eigen GTest::gtest GTest::gtest_main
                        ${Simbody_LIBRARIES})
  target_include_directories(lockstep_simbody_tests SYSTEM PRIVATE ${Simbody_INCLUDE_DIR})
  target_compile_options(lockstep_simbody_tests PRIVATE -UNDEBUG -Wno-deprecated-declarations)
  gtest_discover_tests(lockstep_simbody_tests DISCOVERY_TIMEOUT 60)
endif()

# ---- benchmarks (cmake/LockstepBench.cmake) -----------------------------------------------------
if(LOCKSTEP_BUILD_BENCH)
  include(${PROJECT_SOURCE_DIR}/cmake/LockstepBench.cmake)
endif()
