# The CPU backend's copies for each instruction set (host/backends/cpu_packs.cpp) must define no
# symbol that another object file could also define (a template or inline function outside the
# copy's namespace): the linker would keep one of the copies for every caller, and code compiled
# for AVX-512 could end up in the plain x86-64 paths. Run by ctest (cpu_isa_symbols):
#   cmake -DNM=<nm> -DISA=<name> -DOBJECTS=<object files> -P CheckCpuIsaSymbols.cmake
execute_process(COMMAND ${NM} -C --defined-only ${OBJECTS} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${OBJECTS}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(bad "")
foreach(line IN LISTS lines)
  # Global and weak symbols only (local ones, lower-case types, cannot be merged).
  if(line MATCHES "^[0-9a-f]* [TWVDBRUu] (.*)$")
    set(name "${CMAKE_MATCH_1}")
    if(NOT name MATCHES "isa_${ISA}" AND NOT name MATCHES "^lockstep::cpuPackCopy" AND NOT name MATCHES "^DW\\.ref\\.__gxx_personality_v0$")
      string(APPEND bad "  ${name}\n")
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "the ${ISA} copy of the CPU backend defines symbols other copies or files could define too:\n${bad}")
endif()
message(STATUS "${ISA}: every merged symbol is the copy's own")
