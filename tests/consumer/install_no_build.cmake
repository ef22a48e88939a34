# The usual way to install a header-only library, with this project's defaults (examples, tests,
# benchmarks and the probe configured, none built): configure, then install at once. It must
# succeed and give a usable prefix (the find_package consumer test builds against it).
file(REMOVE_RECURSE ${WORK}/nobuild-build ${WORK}/nobuild-prefix)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/nobuild-build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure of commscale with its defaults failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK}/nobuild-build --prefix ${WORK}/nobuild-prefix RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install without a build failed (an install rule needs a built target)")
endif()
foreach(f share/cmake/commscale/commscaleConfig.cmake share/pkgconfig/commscale.pc include/commscale/commscale.hpp
          share/commscale/data)
  if(NOT EXISTS ${WORK}/nobuild-prefix/${f})
    message(FATAL_ERROR "installed prefix lacks ${f}")
  endif()
endforeach()
if(EXISTS ${WORK}/nobuild-prefix/bin/commscale)
  message(FATAL_ERROR "nothing was built, yet bin/commscale was installed")
endif()
message(STATUS "installed without building into ${WORK}/nobuild-prefix")
