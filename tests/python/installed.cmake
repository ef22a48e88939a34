# Installs the build tree BUILD into PREFIX (cmake --install) and imports the Python module from the
# site-packages there, as a user of `cmake --install build --prefix P` would with
# PYTHONPATH=P/lib/python3.X/site-packages.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD} --prefix ${PREFIX} failed")
endif()
set(site ${PREFIX}/${SITE})
foreach(file __init__.py __init__.pyi py.typed)
  if(NOT EXISTS ${site}/commscale/${file})
    message(FATAL_ERROR "the install put no commscale/${file} in ${site}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -c
  "import commscale as cs, os; assert os.path.realpath(cs.__file__).startswith(os.path.realpath('${site}')), cs.__file__; r = cs.step(); print('installed module:', cs.__file__, r['bottleneck'], r['gpus'])"
  RESULT_VARIABLE rc WORKING_DIRECTORY ${PREFIX})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "import commscale from ${site} failed")
endif()
