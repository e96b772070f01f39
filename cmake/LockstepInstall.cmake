# `cmake --install build --prefix P` puts into P:
#   include/lockstep/*.h                          the engine's public headers
#   lib/liblockstep.a, liblockstep_io.a, liblockstep_report.a
#   bin/lockstep                                  the command line
#   share/lockstep/scenes, share/lockstep/models   the reference scenes and the robots they load
#   lib/cmake/lockstep/                           lockstepConfig.cmake, its version file and the
#                                                 exported targets lockstep::lockstep, lockstep::io,
#                                                 lockstep::report
# so that another CMake project does
#   find_package(lockstep 0.1 REQUIRED)                  # or: COMPONENTS io report
#   target_link_libraries(app PRIVATE lockstep::lockstep)
# docs/engine.md, "Using Lockstep from another CMake project", says more. Included at the end of the
# top-level CMakeLists.txt.

include(CMakePackageConfigHelpers)

set(LOCKSTEP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)

# ---- headers, libraries, program, data -----------------------------------------------------------
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lockstep
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# One export set per library, so that the engine alone needs neither urdfdom nor PLplot.
install(TARGETS lockstep EXPORT lockstepTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lockstep_io EXPORT lockstepIoTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lockstep_report EXPORT lockstepReportTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lockstep_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Scene files name their URDF as ../models/NAME.urdf: the two folders keep that layout.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lockstep/scenes
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lockstep/models)

# ---- package config ------------------------------------------------------------------------------
install(EXPORT lockstepTargets NAMESPACE lockstep:: DESTINATION ${LOCKSTEP_INSTALL_CMAKEDIR})
install(EXPORT lockstepIoTargets NAMESPACE lockstep:: DESTINATION ${LOCKSTEP_INSTALL_CMAKEDIR})
install(EXPORT lockstepReportTargets NAMESPACE lockstep:: DESTINATION ${LOCKSTEP_INSTALL_CMAKEDIR})

# The CUDA toolkit the kernels were compiled with: the config looks there first for the static
# CUDA runtime, whose version must be at least the compiler's.
get_filename_component(LOCKSTEP_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lockstepConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/lockstepConfig.cmake
                              INSTALL_DESTINATION ${LOCKSTEP_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may change the API: only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lockstepConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lockstepConfig.cmake ${PROJECT_BINARY_DIR}/lockstepConfigVersion.cmake
        DESTINATION ${LOCKSTEP_INSTALL_CMAKEDIR})

# ---- test: a consumer project built against the installed tree (tests/consumer) ----------------
if(LOCKSTEP_BUILD_TESTS)
  enable_testing()
  add_test(NAME install_consumer
    COMMAND ${CMAKE_COMMAND}
      -DLOCKSTEP_BINARY_DIR=${PROJECT_BINARY_DIR}
      -DLOCKSTEP_SOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DWORK_DIR=${PROJECT_BINARY_DIR}/install_consumer
      -DCONFIG=$<CONFIG>
      -DGENERATOR=${CMAKE_GENERATOR}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DCXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
      -DCMAKE_INSTALL_BINDIR=${CMAKE_INSTALL_BINDIR}
      -P ${PROJECT_SOURCE_DIR}/cmake/LockstepConsumerTest.cmake)
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 300)
endif()
