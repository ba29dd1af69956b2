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
