# Scene files, URDF import and the `lockstep` command line.
add_executable(lockstep_cli host/cli/main.cpp)
set_target_properties(lockstep_cli PROPERTIES OUTPUT_NAME lockstep)
target_link_libraries(lockstep_cli PRIVATE lockstep)
target_compile_options(lockstep_cli PRIVATE ${LOCKSTEP_WARNINGS_CXX})
