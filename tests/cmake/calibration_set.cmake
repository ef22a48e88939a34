# ctest: data/calibration/published_runs.csv is what data/calibration/make_published_runs.py makes
# of the project's calibration set (../shared/calibration/published_runs.csv beside the checkout),
# byte for byte. -DPYTHON=... -DSOURCE=... -DOUT=... (tests/CMakeLists.txt skips it where that file is absent)
set(shared ${SOURCE}/../shared/calibration/published_runs.csv)
execute_process(COMMAND ${PYTHON} ${SOURCE}/data/calibration/make_published_runs.py ${shared}
                OUTPUT_FILE ${OUT}/published_runs.csv RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_published_runs.py failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/published_runs.csv
                        ${SOURCE}/data/calibration/published_runs.csv RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "data/calibration/published_runs.csv differs from what make_published_runs.py makes of ${shared}: "
                      "regenerate it (usage in the script's docstring)")
endif()
message("data/calibration/published_runs.csv is make_published_runs.py's output, byte for byte")
