# commscale_cli_unity(TARGET): compiles the CLI's sources of TARGET (apps/commscale/app.cpp and
# apps/commscale/commands/*.cpp) as CMake unity groups: the commands that fit (Eigen), the other
# commands with any further source (the fuzz entry point), and the dispatcher (app.cpp, the one file
# with CLI11), so that the library's inline code is compiled a few times instead of once per
# command (each command's helpers sit in a namespace named after it).
function(commscale_cli_unity target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  get_target_property(sources ${target} SOURCES)
  foreach(src ${sources})
    get_filename_component(name ${src} NAME_WE)
    if(name MATCHES "^(fit|fit_step|fit_compute)$")
      set(group calibrate)
    elseif(name STREQUAL "app")
      set(group dispatch)
    else()
      set(group predict)
    endif()
    set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${group})
  endforeach()
endfunction()
