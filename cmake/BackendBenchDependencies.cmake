# Finding the header-only libraries the generator uses.
include_guard(GLOBAL)

# backendbench_find_header_only(<package> <target> <header> <debian package>)
# Uses the package's CMake config when there is one; otherwise a bare copy of its headers on
# the include path (CMAKE_INCLUDE_PATH) does, wrapped in the same imported target.
function(backendbench_find_header_only package target header debian_package)
  find_package(${package} QUIET)
  if(TARGET ${target})
    return()
  endif()
  string(MAKE_C_IDENTIFIER "BACKENDBENCH_${package}_INCLUDE_DIR" variable)
  find_path(${variable} "${header}")
  if(NOT ${variable})
    message(FATAL_ERROR "${package} not found: install ${debian_package} (scripts/install-deps.sh does) "
                        "or put its headers on CMAKE_INCLUDE_PATH")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} INTERFACE "${${variable}}")
endfunction()

# backendbench_find_plotly(<variable>): plotly.min.js of the plotly pip package, embedded into
# each run's report.html so that the page opens offline. Cached; "" (the report then says how to
# get it) when the package is missing.
function(backendbench_find_plotly variable)
  if(DEFINED CACHE{${variable}} AND EXISTS "${${variable}}")
    return()
  endif()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(found "")
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c
              "import os, plotly; print(os.path.join(os.path.dirname(plotly.__file__), 'package_data', 'plotly.min.js'))"
      OUTPUT_VARIABLE found OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
    if(NOT status EQUAL 0 OR NOT EXISTS "${found}")
      set(found "")
    endif()
  endif()
  if(NOT found)
    message(WARNING "plotly.min.js not found (pip install plotly; scripts/install-deps.sh does): reports will have no plots")
  endif()
  set(${variable} "${found}" CACHE FILEPATH "plotly.min.js, embedded into each run's report.html" FORCE)
endfunction()

# backendbench_use_ccache(): the project's own C++ sources compile through ccache when it is
# found (BACKENDBENCH_CCACHE), so each build folder `backendbench run` or pip makes reuses the
# runtime's and the generator's objects another folder compiled. Kernel code never goes through
# it (backendbench_add_kernels sets its own launcher): a kernel's compile must not read or write
# a cache that the project's own objects come from. Depend mode: ccache reads the compiler's own
# dependency file instead of running the preprocessor first (ATen's headers preprocessed twice on
# every miss: 8 s for timing.cpp on the loaded 2-core machine); a precompiled header is cached only
# with the sloppiness below (ccache's manual, "Precompiled headers"). The build folder is the base
# folder: what lies in it (the unity files, generated headers) is named relative to it, so that
# another build folder's identical compile is a hit.
macro(backendbench_use_ccache)
  if(BACKENDBENCH_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    find_program(BACKENDBENCH_CCACHE_PROGRAM ccache DOC "ccache, the compiler launcher of the project's own sources")
    if(BACKENDBENCH_CCACHE_PROGRAM)
      set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND}" -E env CCACHE_SLOPPINESS=pch_defines,time_macros CCACHE_DEPEND=1
                                      "CCACHE_BASEDIR=${CMAKE_BINARY_DIR}" "${BACKENDBENCH_CCACHE_PROGRAM}")
    else()
      message(STATUS "backendbench: ccache not found; every build folder compiles the runtime anew "
                     "(apt install ccache, or scripts/install-deps.sh)")
    endif()
  endif()
endmacro()

# backendbench_compile_lightly(<target>...): the rooms that plan, generate and report (the
# generator's stages, the records, the planner, the agents, the command) run no hot loop, so an
# optimised build compiles them at -Og instead of its configuration's -O3 (a later -O wins):
# the command's build from an empty cache on the 2-core machine took 69 s at -O3, 47 s at -O1,
# 35 s at -Og (2026-12-06). The code beside kernels and the supervisor's (inputs, comparison,
# timing, digests) keeps -O3.
function(backendbench_compile_lightly)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE
                           $<$<AND:$<CONFIG:Release,RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:-Og>)
  endforeach()
endfunction()

# backendbench_unity_build(<batch> <target>...): the libraries of many files compile as a few
# unity files each (CMake's UNITY_BUILD, `batch` sources a file): what their files share (ATen's
# headers, the standard library, nlohmann-json, the case library's own) is then parsed and
# instantiated once a batch, not once a file: the backendbench command built in 200 s instead of
# 354 s on the 2-core machine with an empty compiler cache (scripts/first_run.sh, 2026-12-03).
# The rooms that parse ATen's headers (the case library, the protocol, the supervisor) take
# batches of 12, so that each parses them twice at most (7 s a time on that machine); those that
# do not (the generator's stages, the records, the planner, the agents, the command) 16.
# BACKENDBENCH_UNITY_BUILD=OFF compiles file by file (an edit then recompiles one file, not its batch).
option(BACKENDBENCH_UNITY_BUILD "Compile the project's larger libraries as unity files" ON)
function(backendbench_unity_build batch)
  if(BACKENDBENCH_UNITY_BUILD)
    set_target_properties(${ARGN} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
  endif()
endfunction()
