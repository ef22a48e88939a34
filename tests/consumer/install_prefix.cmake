# Configures this source tree with only the library (no tests/examples), installs it into WORK/prefix.
file(REMOVE_RECURSE ${WORK}/lib-build ${WORK}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/lib-build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
                  -DCOMMSCALE_BUILD_TESTS=OFF -DCOMMSCALE_BUILD_EXAMPLES=OFF -DCOMMSCALE_BUILD_BENCHMARKS=OFF
                  -DCOMMSCALE_INSTALL=ON -DCMAKE_INSTALL_PREFIX=${WORK}/prefix
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure of commscale failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK}/lib-build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install of commscale failed")
endif()
foreach(f share/cmake/commscale/commscaleConfig.cmake share/cmake/commscale/commscaleConfigVersion.cmake
          share/pkgconfig/commscale.pc include/commscale/commscale.hpp)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "installed prefix lacks ${f}")
  endif()
endforeach()
