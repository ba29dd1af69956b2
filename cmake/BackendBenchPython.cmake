# Finds what the Python bridge (build_tests/python/) embeds: the Python that provides the build's
# torch, with its embeddable library and headers, and torch's own Python bindings
# (libtorch_python). Sets BACKENDBENCH_WITH_PYTHON: .py kernels and Python op libraries run
# only with it; without it they are left out with a message, as .cu kernels are without nvcc.
include_guard(GLOBAL)

set(BACKENDBENCH_PYTHON "AUTO" CACHE STRING "Run .py kernels and Python op libraries: AUTO (when an embeddable Python is found), ON, OFF")
set_property(CACHE BACKENDBENCH_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(BACKENDBENCH_OP_LIBRARIES "" CACHE STRING
    "Python op libraries evaluated as backends (a ;-list): flag_gems, torch_decomp (python/backendbench/op_libraries.py)")

set(BACKENDBENCH_WITH_PYTHON OFF)
# The backend library alone (pip install, add_subdirectory) holds compiled kernels only: it loads
# into processes that may have no Python (README: the override library and .py kernels).
if(NOT BACKENDBENCH_PYTHON STREQUAL "OFF" AND NOT BACKENDBENCH_BACKEND_ONLY)
  find_package(Python3 COMPONENTS Interpreter Development.Embed)
  find_library(BACKENDBENCH_TORCH_PYTHON_LIBRARY torch_python PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)
  if(Python3_Development.Embed_FOUND AND BACKENDBENCH_TORCH_PYTHON_LIBRARY)
    set(BACKENDBENCH_WITH_PYTHON ON)
    # The interpreter itself, not a launcher (pyenv's shims): the embedded Python computes its
    # prefix and a virtual environment's site-packages from this path.
    execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import sys; print(sys.executable)"
                    OUTPUT_VARIABLE BACKENDBENCH_PYTHON_EXECUTABLE OUTPUT_STRIP_TRAILING_WHITESPACE)
  elseif(BACKENDBENCH_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "BACKENDBENCH_PYTHON=ON but no embeddable Python (Python3 Development.Embed: the python3-dev "
                        "package) or no libtorch_python in ${TORCH_INSTALL_PREFIX}/lib was found")
  endif()
endif()
message(STATUS "backendbench: Python kernels ${BACKENDBENCH_WITH_PYTHON}")
if(BACKENDBENCH_OP_LIBRARIES AND NOT BACKENDBENCH_WITH_PYTHON)
  message(FATAL_ERROR "BACKENDBENCH_OP_LIBRARIES=${BACKENDBENCH_OP_LIBRARIES} needs the Python bridge, which this "
                      "build does not have (no embeddable Python: install python3-dev)")
endif()
