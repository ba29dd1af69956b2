# Finds libtorch: a Torch_DIR/CMAKE_PREFIX_PATH the user gave, else the one inside the
# `torch` Python package (torch.utils.cmake_prefix_path). Decides whether .cu kernels build.
include_guard(GLOBAL)

# GPU architectures of .cu kernels; torch's CMake package reads this, not CMAKE_CUDA_ARCHITECTURES.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "9.0" CACHE STRING "CUDA architectures of .cu kernels (9.0: H100/H200)")
endif()

find_package(Torch QUIET)
if(NOT Torch_FOUND)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c "import torch; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _backendbench_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE _backendbench_torch_error RESULT_VARIABLE _backendbench_torch_result)
  if(NOT _backendbench_torch_result EQUAL 0 AND DEFINED SKBUILD)
    # pip's default build runs in a fresh environment of its own, which has no torch even where
    # the user's has: the installed torch is the one the backend must be built against.
    message(FATAL_ERROR "libtorch not found: pip built in an isolated environment, which has no torch; "
                        "expected `pip install --no-build-isolation .` in the environment where torch is installed")
  elseif(NOT _backendbench_torch_result EQUAL 0)
    message(FATAL_ERROR "libtorch not found: set Torch_DIR or CMAKE_PREFIX_PATH, or `pip install torch` "
                        "for ${Python3_EXECUTABLE} (python said: ${_backendbench_torch_error})")
  endif()
  list(APPEND CMAKE_PREFIX_PATH "${_backendbench_torch_prefix}")
  # Torch's CUDA package needs nvcc to be found the usual way.
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  find_package(Torch REQUIRED)
endif()
message(STATUS "backendbench: libtorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")
# Imported targets are seen only in the directory that found them; a project that adds this
# one with add_subdirectory links backendbench::backend, whose usage requirements name torch's.
if(NOT PROJECT_IS_TOP_LEVEL)
  get_property(_backendbench_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _backendbench_imported)
    get_target_property(_global ${_target} IMPORTED_GLOBAL)
    if(NOT _global)
      set_target_properties(${_target} PROPERTIES IMPORTED_GLOBAL TRUE)
    endif()
  endforeach()
endif()

# libtorch 2.10 and later headers use C++20 (operator<=>, concepts): code that includes them
# must compile as C++20. The generator's torch-free stages stay C++17 (generator/CMakeLists.txt).
set(BACKENDBENCH_TORCH_CXX_STANDARD 17)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.10)
  set(BACKENDBENCH_TORCH_CXX_STANDARD 20)
endif()

# CUDA kernels: need a CUDA-enabled libtorch (torch_cuda) and a CUDA compiler.
set(BACKENDBENCH_WITH_CUDA OFF)
if(NOT BACKENDBENCH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND TARGET torch_cuda)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES OFF)  # torch's package adds -gencode from TORCH_CUDA_ARCH_LIST
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc 13's C++20 flag (the torch target's cxx_std_20 then fails
    # as "CUDA20"): teach it, and use the standard libtorch needs (torch's package pins 17).
    if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD ${BACKENDBENCH_TORCH_CXX_STANDARD})
    set(BACKENDBENCH_WITH_CUDA ON)
  elseif(BACKENDBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BACKENDBENCH_CUDA=ON but no CUDA compiler or no CUDA-enabled libtorch was found")
  endif()
endif()
message(STATUS "backendbench: CUDA kernels ${BACKENDBENCH_WITH_CUDA}")

# backendbench::torch — libtorch as the suite's executables use it. A pip wheel's
# libtorch_cuda finds its CUDA, cuDNN and NCCL libraries in site-packages/nvidia/*/lib
# through its own RUNPATH at run time; the linker needs the same folders (-rpath-link) so
# that it does not pick an older copy (say /usr/local/cuda's NCCL) for their symbols.
add_library(backendbench_torch INTERFACE)
target_link_libraries(backendbench_torch INTERFACE ${TORCH_LIBRARIES})
file(GLOB _backendbench_wheel_cuda_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
foreach(_dir IN LISTS _backendbench_wheel_cuda_libs)
  target_link_options(backendbench_torch INTERFACE "LINKER:-rpath-link,${_dir}")
endforeach()
add_library(backendbench::torch ALIAS backendbench_torch)


# backendbench::torch_cpu — the CPU part only, for tools that need the operator registry
# and nothing of CUDA (the generator).
add_library(backendbench_torch_cpu INTERFACE)
target_link_libraries(backendbench_torch_cpu INTERFACE torch_cpu c10)
target_include_directories(backendbench_torch_cpu INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(backendbench_torch_cpu INTERFACE ${TORCH_CXX_FLAGS})
add_library(backendbench::torch_cpu ALIAS backendbench_torch_cpu)
