# Benchmarks (Google Benchmark): the throughput library function, the lockstep_bench suite, the
# operation counter and the CI smoke tests. bench/README.md says how to run them.

find_package(benchmark REQUIRED)

add_executable(lockstep_bench
  bench/bench_main.cpp
  bench/bench_scenes.cpp
  bench/bench_throughput.cpp
  bench/bench_cpu_single.cpp
  bench/bench_rollout.cpp
  bench/bench_derivatives.cpp
)
target_link_libraries(lockstep_bench PRIVATE lockstep lockstep_io benchmark::benchmark ${LOCKSTEP_CUDART})
# The robots' scene files (bench_scenes.cpp); LOCKSTEP_SCENES_DIR overrides it at run time.
target_compile_definitions(lockstep_bench PRIVATE LOCKSTEP_SOURCE_SCENES_DIR="${PROJECT_SOURCE_DIR}/scenes")
# The one-thread benchmarks instantiate the scalar per-world templates themselves: compile them with
# the engine library's own options (plain x86-64), so that they measure the library's scalar code;
# the pack benchmarks call into the library's copy for the chosen instruction set.
get_target_property(_lockstep_compile_options lockstep COMPILE_OPTIONS)
if(_lockstep_compile_options)
  target_compile_options(lockstep_bench PRIVATE ${_lockstep_compile_options})
endif()

# Reading scene files: parse time against the number of per_world entries (linear, issue 16).
add_executable(lockstep_bench_parse bench/bench_parse.cpp)
target_link_libraries(lockstep_bench_parse PRIVATE lockstep_io benchmark::benchmark)
target_compile_options(lockstep_bench_parse PRIVATE ${LOCKSTEP_WARNINGS_CXX})

# MuJoCo's mj_step on the MJCF robots, the anchor of Lockstep's MJCF figures (bench/README.md).
find_package(mujoco REQUIRED)
add_executable(lockstep_bench_mujoco bench/bench_mujoco_step.cpp)
target_link_libraries(lockstep_bench_mujoco PRIVATE mujoco::mujoco benchmark::benchmark)
target_compile_definitions(lockstep_bench_mujoco PRIVATE LOCKSTEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(lockstep_bench_mujoco PRIVATE ${LOCKSTEP_WARNINGS_CXX})

# Tests of the throughput measurement.
if(LOCKSTEP_BUILD_TESTS)
  add_executable(lockstep_throughput_tests tests/test_throughput.cpp)
  target_link_libraries(lockstep_throughput_tests PRIVATE lockstep GTest::gtest GTest::gtest_main)
  target_compile_options(lockstep_throughput_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  gtest_discover_tests(lockstep_throughput_tests DISCOVERY_TIMEOUT 60)
endif()

# CI smoke: the small CPU benchmarks with a very short minimum time, so that every CI run exercises
# the suite in a few seconds. Results go to the build directory, never into the source tree.
if(LOCKSTEP_BUILD_TESTS)
  enable_testing()
  add_test(NAME bench_smoke
    COMMAND lockstep_bench
      "--benchmark_filter=^(step/chain-7/cpu/(float|double)/(1|256)|step/free-bushing-grid-4/cpu/float/1|cpu1/fd/chain-7/double|cpu1/step/chain-7-seed/double/256)(/manual_time)?$"
      --benchmark_min_time=0.01
      --benchmark_out=${PROJECT_BINARY_DIR}/bench_smoke.json
      --benchmark_out_format=json)
  # Google Benchmark exits 0 when a benchmark reports an error: fail on its message instead.
  set_tests_properties(bench_smoke PROPERTIES FAIL_REGULAR_EXPRESSION "ERROR OCCURRED" TIMEOUT 120)
endif()

# Arithmetic and memory accesses of one world's evaluation and RK4 step, stage by stage, counted by
# running the engine's per-world templates on a counting scalar (bench/README.md, "Counting").
add_executable(lockstep_opcount bench/op_count.cpp bench/bench_scenes.cpp)
target_link_libraries(lockstep_opcount PRIVATE lockstep lockstep_io)
target_compile_definitions(lockstep_opcount PRIVATE LOCKSTEP_SOURCE_SCENES_DIR="${PROJECT_SOURCE_DIR}/scenes")
target_compile_options(lockstep_opcount PRIVATE ${LOCKSTEP_WARNINGS_CXX})
# Their bytes per world-step in today's design, checked against bench/bytes_budget.txt (why those
# numbers: that file); the second test checks that a figure over its budget fails.
if(LOCKSTEP_BUILD_TESTS)
  add_test(NAME bench_opcount COMMAND lockstep_opcount --budget ${PROJECT_SOURCE_DIR}/bench/bytes_budget.txt
                                      chain-7 chain-7-seed free-bushing-grid-4 humanoid)
  set_tests_properties(bench_opcount PROPERTIES FAIL_REGULAR_EXPRESSION "flagged" TIMEOUT 60)
  file(WRITE ${PROJECT_BINARY_DIR}/bytes_budget_zero.txt "chain-7 double 0\n")
  add_test(NAME bench_opcount_over_budget_fails
    COMMAND lockstep_opcount --budget ${PROJECT_BINARY_DIR}/bytes_budget_zero.txt chain-7)
  set_tests_properties(bench_opcount_over_budget_fails PROPERTIES WILL_FAIL TRUE TIMEOUT 60)
endif()

# Registers and stack frame of every CUDA kernel, read from the cubins nvcc embedded in the kernel
# objects (bench/kernel_resources.py: no GPU and no cuobjdump needed), against the budgets of
# bench/kernel_budgets.txt; skipped (77) when no kernel object is found. The second test checks that
# a kernel over its budget fails.
find_package(Python3 COMPONENTS Interpreter)
if(LOCKSTEP_BUILD_TESTS AND Python3_Interpreter_FOUND)
  add_test(NAME kernel_resources
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/kernel_resources.py --build ${PROJECT_BINARY_DIR}
            --budgets ${PROJECT_SOURCE_DIR}/bench/kernel_budgets.txt)
  set_tests_properties(kernel_resources PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
  file(WRITE ${PROJECT_BINARY_DIR}/kernel_budgets_zero.txt "* 0 0\n")
  add_test(NAME kernel_resources_over_budget_fails
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/kernel_resources.py --build ${PROJECT_BINARY_DIR}
            --budgets ${PROJECT_BINARY_DIR}/kernel_budgets_zero.txt)
  set_tests_properties(kernel_resources_over_budget_fails PROPERTIES WILL_FAIL TRUE SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()
