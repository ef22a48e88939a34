# ctest: the core header commscale/commscale.hpp includes neither the JSON (nlohmann), fitting
# (Eigen) nor front-end (CLI11, {fmt}) libraries, so that a user who includes it pays for Boost.Units
# and the standard library only. Run with -DCXX=... -DINCLUDE=... -DSTD=... -DOUT=...
file(WRITE ${OUT}/light_core_header.cpp "#include <commscale/commscale.hpp>\n")
execute_process(COMMAND ${CXX} -std=${STD} -I${INCLUDE} -H -fsyntax-only ${OUT}/light_core_header.cpp
                RESULT_VARIABLE rc ERROR_VARIABLE tree OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "commscale/commscale.hpp does not compile on its own:\n${tree}")
endif()
string(REGEX MATCHALL "[^\n]*(nlohmann|[Ee]igen|CLI/|fmt/)[^\n]*" heavy "${tree}")
if(heavy)
  string(REPLACE ";" "\n" heavy "${heavy}")
  message(FATAL_ERROR "commscale/commscale.hpp pulls in headers it does not need:\n${heavy}")
endif()
string(REGEX MATCHALL "\n\\.+ [^\n]*" all "${tree}")
list(LENGTH all count)
message("commscale/commscale.hpp: ${count} headers included, none of nlohmann/json, Eigen, CLI11 or {fmt}")
