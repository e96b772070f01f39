# Scene files, URDF import and the `lockstep` command line. Included from LockstepTargets.cmake.

find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
# urdfdom and libzip through pkg-config (Debian's libzip CMake package also requires its tools).
find_package(PkgConfig REQUIRED)
pkg_check_modules(URDFDOM REQUIRED IMPORTED_TARGET urdfdom)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
# MuJoCo's compiler reads MJCF (Debian's libmujoco-dev); the conversion is Lockstep's (host/io/mjcf.cpp).
find_package(mujoco REQUIRED)

# ---- the default scene, compiled in so that `lockstep` alone needs no file -----------------------
set(_lockstep_builtin_scene ${PROJECT_SOURCE_DIR}/scenes/chain-7-seed.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_lockstep_builtin_scene})
file(READ ${_lockstep_builtin_scene} LOCKSTEP_BUILTIN_SCENE_JSON)
configure_file(${PROJECT_SOURCE_DIR}/cmake/builtin_scene_json.h.in
               ${PROJECT_BINARY_DIR}/generated/lockstep/builtin_scene_json.h @ONLY)

# ---- lockstep_io: scene files and URDF import ----------------------------------------------------
add_library(lockstep_io STATIC
  host/io/json_node.cpp
  host/io/scene.cpp
  host/io/scene_joints.cpp
  host/io/scene_collisions.cpp
  host/io/scene_worlds.cpp
  host/io/scene_apply.cpp
  host/io/embedded_scene_file.cpp
  host/io/text_file.cpp
  host/io/urdf.cpp
  host/io/mjcf.cpp
  host/io/mjcf_state.cpp
  host/io/mjcf_compile.cpp
  host/io/mjcf_checks.cpp
  host/io/mjcf_soft.cpp
  host/io/study_file.cpp
  host/io/study_report.cpp
  host/io/scene_description.cpp
)
add_library(lockstep::io ALIAS lockstep_io)
set_target_properties(lockstep_io PROPERTIES EXPORT_NAME io)
target_include_directories(lockstep_io PRIVATE ${PROJECT_BINARY_DIR}/generated)
# nlohmann_json and Eigen are header-only: the installed library needs only urdfdom's libraries.
target_link_libraries(lockstep_io
  PUBLIC lockstep
  PRIVATE $<BUILD_INTERFACE:nlohmann_json::nlohmann_json> PkgConfig::URDFDOM mujoco::mujoco $<BUILD_INTERFACE:Eigen3::Eigen>)
target_compile_options(lockstep_io PRIVATE ${LOCKSTEP_WARNINGS_CXX})

# ---- lockstep_view: what the viewer draws, the web page, off-screen frames and videos -------------
# Assimp reads robot meshes; MuJoCo's renderer draws on OSMesa (no display, no GPU); the page
# inlines three.js r111 from Debian's libjs-three, found here and read when a page is written.
# OSMesa's header only: libOSMesa is opened at run time (host/view/frames.cpp), as libEGL is, so no
# binary links LLVM and the libraries OSMesa brings.
find_package(assimp REQUIRED)
pkg_check_modules(OSMESA REQUIRED osmesa)
find_path(LOCKSTEP_THREE_DIR three.min.js PATHS /usr/share/javascript/three NO_DEFAULT_PATH
          DOC "Folder of three.js r111 (three.min.js, examples/js/controls/OrbitControls.js): Debian's libjs-three")
if(NOT LOCKSTEP_THREE_DIR)
  message(FATAL_ERROR "three.js not found: install Debian's libjs-three (scripts/deps.sh), or set LOCKSTEP_THREE_DIR")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/host/view/viewer.js)
file(READ ${PROJECT_SOURCE_DIR}/host/view/viewer.js LOCKSTEP_VIEWER_JS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/viewer_js.h.in ${PROJECT_BINARY_DIR}/generated/lockstep/viewer_js.h @ONLY)
add_library(lockstep_view STATIC
  host/view/visuals.cpp
  host/view/html_viewer.cpp
  host/view/frames.cpp
  host/view/video.cpp
)
add_library(lockstep::view ALIAS lockstep_view)
set_target_properties(lockstep_view PROPERTIES EXPORT_NAME view)
target_include_directories(lockstep_view PRIVATE ${PROJECT_BINARY_DIR}/generated)
target_include_directories(lockstep_view PRIVATE ${OSMESA_INCLUDE_DIRS})
target_compile_definitions(lockstep_view PRIVATE LOCKSTEP_THREE_DIR="${LOCKSTEP_THREE_DIR}")
target_link_libraries(lockstep_view
  PUBLIC lockstep_io
  PRIVATE $<BUILD_INTERFACE:nlohmann_json::nlohmann_json> assimp::assimp mujoco::mujoco ${CMAKE_DL_LIBS}
          $<BUILD_INTERFACE:Eigen3::Eigen>)
target_compile_options(lockstep_view PRIVATE ${LOCKSTEP_WARNINGS_CXX})

# ---- the command line ----------------------------------------------------------------------------
add_executable(lockstep_cli
  host/cli/main.cpp
  host/cli/simulate.cpp
  host/cli/info.cpp
  host/cli/recording.cpp
  host/cli/study_command.cpp
  host/cli/bench.cpp
  host/cli/plot.cpp
  host/cli/app.cpp
  host/cli/options.cpp
  host/cli/ranks.cpp
  host/cli/npz.cpp
  host/cli/view.cpp
)
set_target_properties(lockstep_cli PROPERTIES OUTPUT_NAME lockstep)
# What `lockstep --version` reports: the version and the CUDA architectures compiled for.
set(_lockstep_archs_text ${CMAKE_CUDA_ARCHITECTURES})
list(TRANSFORM _lockstep_archs_text PREPEND "sm_")
list(JOIN _lockstep_archs_text ", " _lockstep_archs_text)
set_source_files_properties(host/cli/app.cpp PROPERTIES COMPILE_DEFINITIONS
  "LOCKSTEP_VERSION=\"${PROJECT_VERSION}\";LOCKSTEP_CUDA_ARCHITECTURES=\"${_lockstep_archs_text}\"")
target_link_libraries(lockstep_cli PRIVATE lockstep_io lockstep_view lockstep_report CLI11::CLI11 PkgConfig::LIBZIP nlohmann_json::nlohmann_json)
target_compile_options(lockstep_cli PRIVATE ${LOCKSTEP_WARNINGS_CXX})
# MPI, when found: `mpirun -np N lockstep study FILE` splits the worlds over the ranks (host/cli/ranks.h).
# The same program runs alone without a launcher.
option(LOCKSTEP_MPI "Build the command line with MPI when CMake finds it" ON)
if(LOCKSTEP_MPI)
  enable_language(C)  # FindMPI looks for the C bindings with the C compiler
  find_package(MPI COMPONENTS C)
endif()
if(MPI_C_FOUND)
  target_link_libraries(lockstep_cli PRIVATE MPI::MPI_C)
  target_compile_definitions(lockstep_cli PRIVATE LOCKSTEP_HAVE_MPI)
endif()

# ---- tests: scenes, URDF import (against Simbody 3.7), the command line end to end ---------------
if(LOCKSTEP_BUILD_TESTS)
  enable_testing()
  find_package(GTest REQUIRED)
  include(GoogleTest)
  add_executable(lockstep_frontend_tests
    tests/frontend/test_scene.cpp
    tests/frontend/test_urdf.cpp
    tests/frontend/test_mjcf.cpp
    tests/frontend/test_cli.cpp
    tests/frontend/test_cli_outputs.cpp
    tests/frontend/npz_reader.cpp
    tests/frontend/test_study_file.cpp
    tests/frontend/test_hostile.cpp
    tests/frontend/test_record.cpp
    tests/frontend/test_stand.cpp
    tests/frontend/test_view.cpp
    tests/frontend/test_sensors.cpp
    tests/frontend/test_hostile_files.cpp
    tests/frontend/test_mjcf_hostile.cpp
    tests/frontend/test_soft_constraints.cpp
    host/cli/npz.cpp
  )
  target_include_directories(lockstep_frontend_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/host/cli)
  target_link_libraries(lockstep_frontend_tests PRIVATE lockstep_io lockstep_view Eigen3::Eigen GTest::gtest GTest::gtest_main
                        PkgConfig::LIBZIP mujoco::mujoco)
  target_compile_definitions(lockstep_frontend_tests PRIVATE
    LOCKSTEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LOCKSTEP_CLI="$<TARGET_FILE:lockstep_cli>")
  target_compile_options(lockstep_frontend_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  add_dependencies(lockstep_frontend_tests lockstep_cli)
  if(LOCKSTEP_SIMBODY_ORACLE)
    # Simbody's inline code must be compiled without NDEBUG.
    find_package(Simbody REQUIRED)
    target_sources(lockstep_frontend_tests PRIVATE tests/frontend/test_urdf_simbody.cpp tests/simbody_oracle.cpp)
    target_include_directories(lockstep_frontend_tests SYSTEM PRIVATE ${Simbody_INCLUDE_DIR})
    target_link_libraries(lockstep_frontend_tests PRIVATE ${Simbody_LIBRARIES})
    target_compile_options(lockstep_frontend_tests PRIVATE -UNDEBUG -Wno-deprecated-declarations)
  endif()
  gtest_discover_tests(lockstep_frontend_tests DISCOVERY_TIMEOUT 60
                       WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

  # `lockstep study` over chunks and MPI ranks: the same bytes; a failing rank writes nothing.
  # Open MPI refuses to run as root (containers, CI) unless told twice.
  add_executable(lockstep_study_ranks_tests tests/frontend/test_study_ranks.cpp)
  target_include_directories(lockstep_study_ranks_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(lockstep_study_ranks_tests PRIVATE GTest::gtest GTest::gtest_main)
  set(_lockstep_mpiexec "")
  if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
    set(_lockstep_mpiexec "${MPIEXEC_EXECUTABLE}")
  endif()
  target_compile_definitions(lockstep_study_ranks_tests PRIVATE
    LOCKSTEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LOCKSTEP_CLI="$<TARGET_FILE:lockstep_cli>"
    LOCKSTEP_MPIEXEC="${_lockstep_mpiexec}")
  target_compile_options(lockstep_study_ranks_tests PRIVATE ${LOCKSTEP_WARNINGS_CXX})
  add_dependencies(lockstep_study_ranks_tests lockstep_cli)
  # One ctest test per gtest test, listed here: gtest_discover_tests splits a list-valued
  # ENVIRONMENT into separate properties.
  foreach(_lockstep_test AnyChunkSizeWritesTheSameBytes AnyNumberOfRanksWritesTheSameBytes
          ReducedOnTheRanksTheSameBytesAndTheGatheredMoments AFailingRankStopsTheJobAndNothingIsWritten
          OutputsNeverReplaceTheStudyFile BenchUnderMpirunSumsTheRanks)
    add_test(NAME StudyRanks.${_lockstep_test} COMMAND lockstep_study_ranks_tests --gtest_filter=StudyRanks.${_lockstep_test}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(StudyRanks.${_lockstep_test} PROPERTIES
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  endforeach()
endif()
