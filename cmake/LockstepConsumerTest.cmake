# The install_consumer test (cmake -P): installs the built tree into WORK_DIR/prefix, then configures,
# builds and runs tests/consumer against it, as another project would use Lockstep. Fails, naming
# the step, if any of them does.
#
# -D arguments: LOCKSTEP_BINARY_DIR, LOCKSTEP_SOURCE_DIR, WORK_DIR, CONFIG, GENERATOR, CXX_COMPILER,
# CXX_COMPILER_LAUNCHER (may be empty), CMAKE_INSTALL_BINDIR.

foreach(_var LOCKSTEP_BINARY_DIR LOCKSTEP_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER CMAKE_INSTALL_BINDIR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "LockstepConsumerTest.cmake: -D${_var}=... is required")
  endif()
endforeach()

set(_prefix ${WORK_DIR}/prefix)
set(_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})  # a fresh install and a fresh configure, every run

function(_run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${step} failed (exit ${rc})\n${out}\n${err}")
  endif()
  message(STATUS "install_consumer: ${step}: ok")
  set(_last_output "${out}" PARENT_SCOPE)
endfunction()

set(_config_args)
if(CONFIG)
  set(_config_args --config ${CONFIG})
endif()
_run("cmake --install into ${_prefix}"
     ${CMAKE_COMMAND} --install ${LOCKSTEP_BINARY_DIR} --prefix ${_prefix} ${_config_args})

# Only the prefix is given: everything else must come from the installed lockstepConfig.cmake.
set(_configure ${CMAKE_COMMAND} -S ${LOCKSTEP_SOURCE_DIR}/tests/consumer -B ${_build} -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(CONFIG)
  list(APPEND _configure -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
if(CXX_COMPILER_LAUNCHER)
  list(APPEND _configure -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER})
endif()
_run("configuring tests/consumer" ${_configure})
_run("building tests/consumer" ${CMAKE_COMMAND} --build ${_build} ${_config_args})

# The consumer program: single-config generators put it in the build folder, multi-config ones
# in a folder per configuration.
set(_exe ${_build}/lockstep_consumer)
if(NOT EXISTS ${_exe} AND CONFIG)
  set(_exe ${_build}/${CONFIG}/lockstep_consumer)
endif()
_run("running the consumer" ${_exe} ${_prefix}/share/lockstep/scenes)
message("${_last_output}")

# The installed program runs and finds a robot scene's URDF in the installed models folder.
_run("running the installed lockstep info"
     ${_prefix}/${CMAKE_INSTALL_BINDIR}/lockstep info ${_prefix}/share/lockstep/scenes/panda.json)
