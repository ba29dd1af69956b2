# The user-facing build concepts, one function each:
#   backendbench_add_kernels(DIRECTORY dir [NAME set] [VIEW_OF folder] [OP_LIBRARIES lib..])
#                                            kernels under test → one shared library each (a .py
#                                            kernel: its file, run by the Python bridge), and a
#                                            manifest listing them that executables load at run
#                                            time; OP_LIBRARIES adds every operator of those Python
#                                            op libraries (flag_gems) as backends; a named set
#                                            (default: "default") serves suites that ask; VIEW_OF:
#                                            dir is a kernel view whose links lead into folder
#   backendbench_add_suite(NAME n TRACES t.. [KERNELS set] [SHARDS k] [OPS o..] [TOPN n] [BOTTOMN n]
#                          [CASE_TIMEOUT s] [EXCLUDE_UNKNOWN_OPERATORS] [TIER system|e2e])
#                                            a generated gtest executable + CTest entries (each
#                                            labelled with the tier, default system)
#   backendbench_add_backend(NAME lib [KERNELS set] [CHECK_SUITES s..])
#                                            the one shared library (libbackendbench_<lib>.so)
#                                            holding every kernel of a set, which registers the
#                                            chosen ones with the dispatcher when enabled
#                                            (backendbench/enable.h, the Python package); it
#                                            checks kernels without results on the cases of
#                                            CHECK_SUITES (default: smoke and edge, where built)
#   backendbench_add_model_tests(BACKEND lib MODELS m.. [DEVICE d] [SIZE small|full]
#                                [EXPECT_DIVERGENCE op] [FORCE])
#                                            one CTest entry per model (label model,
#                                            model/<model>/<lib>): the model run with and without
#                                            backend `lib` and compared (python -m
#                                            backendbench.models); skipped when the model's
#                                            library (timm, transformers, torchvision) is missing
#   backendbench_add_bench([NAME exe] [KERNELS set])
#                                            ./bench (default name) over every suite of a kernel
#                                            set (default: "default")
#   backendbench_add_candidate_slots(COUNT n)
#                                            n kernel libraries that build whatever candidate the
#                                            llm backends put in them (backendbench run --backend llm)
#   backendbench_torchbench_traces(out_var)  where the TorchBench traces are (fatal if nowhere)
#   backendbench_add_expect_test(name exit output_regex command args..)
#                                            a project test (labels project, system): runs the
#                                            command and checks its exit code and output
#                                            (ExpectCommand.cmake)
#   backendbench_set_test_tier(tier test..)  the tests' tier label instead of the one they had:
#                                            unit (seconds, no suite or kernel build of its own),
#                                            system (galleries, suites, served entries) or e2e
#                                            (the command end to end, security, TorchBench)
#
# Generation runs at build time. Its outputs are fixed per suite (SHARDS files of cases, one
# CTest include file) and per kernel file, so CMake knows them before the generator runs; CTest
# reads the entries through TEST_INCLUDE_FILES, as gtest_discover_tests does. Case tables hold
# no kernels: executables load the kernel libraries a manifest lists, so adding or editing a
# kernel builds that kernel's library and rewrites the CTest entries, and nothing else.
include_guard(GLOBAL)

set(BACKENDBENCH_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")
set(BACKENDBENCH_RESULTS_DIR "${CMAKE_BINARY_DIR}/results")
set(_backendbench_templates_dir "${CMAKE_CURRENT_LIST_DIR}/../templates")
set(_backendbench_expect_script "${CMAKE_CURRENT_LIST_DIR}/ExpectCommand.cmake")
file(GLOB _backendbench_templates CONFIGURE_DEPENDS "${_backendbench_templates_dir}/*.in")
# The llm backends' prompts are read by the command at run time, not by the generator.
list(FILTER _backendbench_templates EXCLUDE REGEX "/llm_[^/]*$")
# Front-end sources compiled into each executable with its own definitions (its kernel manifest).
set(_backendbench_kernel_manifest_source "${CMAKE_CURRENT_LIST_DIR}/../build_tests/frontends/kernel_manifest.cpp")
set(_backendbench_backend_library_source "${CMAKE_CURRENT_LIST_DIR}/../build_tests/frontends/backend/backend_library.cpp")
set(_backendbench_localize_script "${CMAKE_CURRENT_LIST_DIR}/LocalizeKernelObject.cmake")

# The TorchBench traces folder, or "" when there is none.
function(backendbench_torchbench_traces_or_empty out_var)
  set(traces "${BACKENDBENCH_TORCHBENCH_TRACES}")
  if(NOT traces)
    get_filename_component(traces "${CMAKE_SOURCE_DIR}/../shared/traces/torchbench" ABSOLUTE)
  endif()
  if(NOT IS_DIRECTORY "${traces}")
    set(traces "")
  endif()
  set(${out_var} "${traces}" PARENT_SCOPE)
endfunction()

function(backendbench_torchbench_traces out_var)
  backendbench_torchbench_traces_or_empty(traces)
  if(NOT traces)
    message(FATAL_ERROR
      "TorchBench traces not found (BACKENDBENCH_TORCHBENCH_TRACES='${BACKENDBENCH_TORCHBENCH_TRACES}', "
      "nor ../shared/traces/torchbench beside the checkout).\n"
      "Get them from the PyTorch repository (benchmarks/dynamo/microbenchmarks/operator_inp_logs: "
      "hf_train, timm_train, torchbench_train) and pass the folder with "
      "-DBACKENDBENCH_TORCHBENCH_TRACES=/path/to/operator_inp_logs")
  endif()
  set(${out_var} "${traces}" PARENT_SCOPE)
endfunction()

# The OpInfo suite's trace file, exported at build time from the installed torch's op_db by
# generator/opinfo/export_opinfo.py (OpInfo samples, values included, per traced ATen overload).
# OPS (the BACKENDBENCH_OPS selection) limits the export to those operators, so a build that
# selects a few operators does not run every OpInfo.
function(backendbench_opinfo_traces out_var)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "DTYPES;OPS" "")
  string(REPLACE ";" "," ops "${ARG_OPS}")
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../generator/opinfo/export_opinfo.py")
  set(output "${BACKENDBENCH_GENERATED_DIR}/opinfo_traces/opinfo.txt")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${Python3_EXECUTABLE}" "${script}" --output "${output}" --dtypes "${ARG_DTYPES}" --ops "${ops}"
    DEPENDS "${script}"
    COMMENT "Exporting OpInfo sample inputs (${ARG_DTYPES}; operators: ${ops}) from the installed torch"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# The FACTO suite's trace file, expanded at build time by `backendbench-gen facto` from the
# specifications in generator/facto/specs/ (at most CASES cases an operator; OPS: the
# BACKENDBENCH_OPS selection; NAME: the file's name, facto unless given). A bad specification
# fails the build with its location.
function(backendbench_facto_traces out_var)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "CASES;OPS;NAME" "")
  if(NOT ARG_NAME)
    set(ARG_NAME facto)
  endif()
  set(specs_folder "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../generator/facto/specs")
  file(GLOB specs CONFIGURE_DEPENDS "${specs_folder}/*.spec")
  set(output "${BACKENDBENCH_GENERATED_DIR}/facto_traces/${ARG_NAME}.txt")
  set(ops "")
  if(ARG_OPS)
    string(REPLACE ";" "," ops_list "${ARG_OPS}")
    set(ops --ops "${ops_list}")
  endif()
  add_custom_command(
    OUTPUT "${output}"
    COMMAND backendbench::generator facto --specs "${specs_folder}" --output "${output}" --cases-per-operator "${ARG_CASES}" ${ops}
    DEPENDS backendbench::generator ${specs}
    COMMENT "Expanding the FACTO specifications (at most ${ARG_CASES} cases an operator)"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# The target of the kernel set `set_name` (from backendbench_add_kernels) into `out_var`; a
# located error naming `caller` when there is no such set.
function(_backendbench_kernel_set_target caller set_name out_var)
  get_property(target GLOBAL PROPERTY BACKENDBENCH_KERNELS_${set_name}_TARGET)
  if(NOT target)
    message(FATAL_ERROR "${caller}: no kernel set '${set_name}'; expected the NAME of an earlier backendbench_add_kernels()")
  endif()
  set(${out_var} "${target}" PARENT_SCOPE)
endfunction()

function(backendbench_add_kernels)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DIRECTORY;NAME;VIEW_OF" "OP_LIBRARIES")
  if(NOT ARG_NAME)
    set(ARG_NAME default)
  endif()
  if(ARG_NAME STREQUAL "default")
    set(out "${BACKENDBENCH_GENERATED_DIR}/kernels")
    set(prefix "backendbench_kernel_")
    set(set_target backendbench_kernels)
  else()
    set(out "${BACKENDBENCH_GENERATED_DIR}/kernels_${ARG_NAME}")
    set(prefix "backendbench_kernel_${ARG_NAME}_")
    set(set_target backendbench_kernels_${ARG_NAME})
  endif()
  file(GLOB kernel_folders LIST_DIRECTORIES true CONFIGURE_DEPENDS "${ARG_DIRECTORY}/*")
  file(GLOB kernel_sources CONFIGURE_DEPENDS "${ARG_DIRECTORY}/*/*.cpp" "${ARG_DIRECTORY}/*/*.cu")
  file(GLOB python_kernels CONFIGURE_DEPENDS "${ARG_DIRECTORY}/*/*.py")
  set(skip_cuda "")
  if(NOT BACKENDBENCH_WITH_CUDA)
    set(skip_cuda --skip-cuda)
  endif()
  if(NOT BACKENDBENCH_WITH_PYTHON)
    list(APPEND skip_cuda --skip-python)  # passed wherever the generator finds kernels
    foreach(source IN LISTS python_kernels)
      message(STATUS "backendbench: skipping Python kernel ${source} (no embeddable Python; BACKENDBENCH_PYTHON)")
    endforeach()
    set(python_kernels "")
  endif()
  set(bindings "")
  set(libraries "")
  set(local_objects "")
  set(expectation_files "")
  foreach(source IN LISTS kernel_sources python_kernels)
    # A kernel that must fail names the failure in an expect-failure line (`//` or `#`), which
    # goes into the suites' CTest entries: only such files make the suites depend on their
    # contents (and CMake re-read them when edited). Editing any other kernel rebuilds that
    # kernel alone (a .py kernel: nothing).
    file(STRINGS "${source}" expectation REGEX "expect-failure( in [A-Za-z0-9_]+)?:" LIMIT_COUNT 1)
    if(expectation)
      list(APPEND expectation_files "${source}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
    endif()
  endforeach()
  foreach(source IN LISTS kernel_sources)
    get_filename_component(folder_path "${source}" DIRECTORY)
    get_filename_component(folder "${folder_path}" NAME)
    get_filename_component(stem "${source}" NAME_WE)
    get_filename_component(extension "${source}" LAST_EXT)
    if(extension STREQUAL ".cu" AND NOT BACKENDBENCH_WITH_CUDA)
      message(STATUS "backendbench: skipping CUDA kernel ${source} (no CUDA toolchain or CUDA libtorch)")
      continue()
    endif()
    # A two-part .cu kernel (naming::cuda_kernel_has_device_part; the generator names the same
    # files): its binding is C++, its device part a CUDA translation unit of its own.
    set(device_part "")
    if(extension STREQUAL ".cu")
      file(STRINGS "${source}" device_part REGEX "^[ \t]*#.*BACKENDBENCH_DEVICE_PART" LIMIT_COUNT 1)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
    endif()
    if(extension STREQUAL ".cu" AND NOT device_part)
      set(binding "${out}/${folder}/${stem}.binding.cu")
    else()
      set(binding "${out}/${folder}/${stem}.binding.cpp")
    endif()
    list(APPEND bindings "${binding}")
    # One shared library per variant, symbols hidden: two implementations of one operator may
    # define the same helpers without clashing; only the binding's entry point is exported.
    set(target "${prefix}${stem}")
    set(launcher "")
    if(BACKENDBENCH_SANDBOX_BUILDS)
      # Kernel code is untrusted from its first byte: compiled in the sandbox, with the project
      # and this build folder hidden but for what its command names (backendbench-build-sandbox).
      set(launcher "${CMAKE_BINARY_DIR}/backendbench-build-sandbox" --hide "${PROJECT_SOURCE_DIR}" --hide "${CMAKE_BINARY_DIR}")
      if(ARG_VIEW_OF)
        # DIRECTORY is a kernel view (links, made by backendbench run): the folder its links lead
        # into. No other link is followed, so a link in a kernel folder cannot reach a hidden file.
        list(APPEND launcher --read-only "${ARG_VIEW_OF}")
      endif()
      list(APPEND launcher --)
    endif()
    # A C++ binding (a .cpp kernel, or a two-part kernel's host part) compiled by clang against
    # the instantiated precompiled header, as candidates are (_backendbench_clang_pch): 2 s where
    # g++ takes 5 s on the 2-core machine, most of an edited kernel's wait for its verdict.
    set(clang_object "")
    if(BACKENDBENCH_CANDIDATE_CXX AND (extension STREQUAL ".cpp" OR device_part))
      _backendbench_clang_pch("${CMAKE_BINARY_DIR}/candidate_pch")
      set(clang_object "${CMAKE_BINARY_DIR}/kernel_objects/${ARG_NAME}/${folder}/${stem}.binding.o")
      add_custom_command(
        OUTPUT "${clang_object}"
        COMMAND ${launcher} "${BACKENDBENCH_CANDIDATE_CXX}" ${_backendbench_candidate_flags} "-I${ARG_DIRECTORY}"
                -include-pch "${_backendbench_candidate_pch}" -MD -MF "${clang_object}.d" -c "${binding}" -o "${clang_object}"
        DEPENDS "${_backendbench_candidate_pch}" "${binding}"
        DEPFILE "${clang_object}.d"
        # The sandbox starts the compiler where it runs, so in a folder it shows: its output's.
        WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/kernel_objects/${ARG_NAME}/${folder}"
        COMMENT "Building kernel ${folder}/${stem} (clang)"
        COMMAND_EXPAND_LISTS VERBATIM)
    endif()
    set(sources "${binding}")
    if(clang_object)
      set(sources "${clang_object}")
    endif()
    if(device_part)
      set(device_source "${out}/${folder}/${stem}.device.cu")
      list(APPEND bindings "${device_source}")
      list(APPEND sources "${device_source}")
      set_source_files_properties("${device_source}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
    add_library(${target} SHARED ${sources})
    target_link_libraries(${target} PRIVATE backendbench::kernel_binding)
    if(clang_object)
      set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
      add_dependencies(${target} backendbench_candidate_pch)
      if(BACKENDBENCH_CANDIDATE_LINKER)
        get_filename_component(linker "${BACKENDBENCH_CANDIDATE_LINKER}" NAME)
        string(REGEX REPLACE "^ld\\." "" linker "${linker}")  # ld.lld -> -fuse-ld=lld
        target_link_options(${target} PRIVATE "-fuse-ld=${linker}")
      endif()
    elseif(extension STREQUAL ".cpp" OR device_part)
      # ATen's headers, parsed once for every kernel (backendbench_kernel_precompiled_header).
      target_precompile_headers(${target} REUSE_FROM backendbench_kernel_precompiled_header)
    endif()
    target_include_directories(${target} PRIVATE "${ARG_DIRECTORY}")
    set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
                                               VISIBILITY_INLINES_HIDDEN ON)
    if(BACKENDBENCH_SANDBOX_BUILDS)
      set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "${launcher}" CUDA_COMPILER_LAUNCHER "${launcher}")
      add_dependencies(${target} backendbench_build_sandbox)
    else()
      # Not the project's ccache either (backendbench_use_ccache): kernel code must not write a
      # cache the project's own objects come from.
      set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "" CUDA_COMPILER_LAUNCHER "")
    endif()
    list(APPEND libraries ${target})
    # The same object with its own symbols local, for the one library (backendbench_add_backend).
    # A clang-built binding is an object the library links, not one of its own (TARGET_OBJECTS).
    set(objects "$<JOIN:$<TARGET_OBJECTS:${target}>,|>")
    if(clang_object AND device_part)
      set(objects "${clang_object}|${objects}")
    elseif(clang_object)
      set(objects "${clang_object}")
    endif()
    set(local_object "${CMAKE_BINARY_DIR}/kernel_objects/${ARG_NAME}/${folder}/${stem}.local.o")
    add_custom_command(
      OUTPUT "${local_object}"
      COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DOBJCOPY=${CMAKE_OBJCOPY}" "-DLINKER=${CMAKE_LINKER}"
              "-DINPUT=${objects}"
              "-DOUTPUT=${local_object}" -P "${_backendbench_localize_script}"
      DEPENDS ${target} "${_backendbench_localize_script}"
      VERBATIM)
    list(APPEND local_objects "${local_object}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}/generate.stamp"
    BYPRODUCTS ${bindings} "${out}/kernel_index.cpp"
    COMMAND backendbench::generator kernels --kernels "${ARG_DIRECTORY}" --output "${out}"
            --templates "${_backendbench_templates_dir}" ${skip_cuda}
    COMMAND "${CMAKE_COMMAND}" -E touch "${out}/generate.stamp"
    DEPENDS backendbench::generator ${_backendbench_templates} ${kernel_folders}
    COMMENT "Generating kernel bindings for ${ARG_DIRECTORY}"
    VERBATIM)
  add_custom_target(${set_target}_bindings DEPENDS "${out}/generate.stamp")
  foreach(target IN LISTS libraries)
    add_dependencies(${target} ${set_target}_bindings)
  endforeach()
  # The manifest: one library path per line, read at run time (backend.h, load_kernel_manifest),
  # then the lines of the Python bridge (python_bridge.h): each .py kernel, each op library.
  set(manifest_lines "")
  foreach(target IN LISTS libraries)
    string(APPEND manifest_lines "$<TARGET_FILE:${target}>\n")
  endforeach()
  foreach(source IN LISTS python_kernels)
    string(APPEND manifest_lines "python ${source}\n")
  endforeach()
  # Each op library's listing (what it implements; where it cannot run here, why), written at
  # build time by its Python module: suites make one CTest entry per operator from it.
  set(op_library_options "")
  set(op_library_listings "")
  if(ARG_OP_LIBRARIES AND NOT BACKENDBENCH_WITH_PYTHON)
    message(FATAL_ERROR "backendbench_add_kernels(${ARG_NAME}): OP_LIBRARIES ${ARG_OP_LIBRARIES} need the Python bridge, "
                        "which this build does not have; expected an embeddable Python (python3-dev) and BACKENDBENCH_PYTHON not OFF")
  endif()
  foreach(library IN LISTS ARG_OP_LIBRARIES)
    if(NOT library MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "backendbench_add_kernels: OP_LIBRARIES '${library}' is not a name; expected one of "
                          "python/backendbench/op_libraries.py's LIBRARIES (flag_gems, torch_decomp)")
    endif()
    set(listing "${BACKENDBENCH_GENERATED_DIR}/op_libraries/${library}.txt")
    # Run on every build (".refresh" is never written): installing the library changes what it
    # lists; the listing is rewritten only when it changed, so the suites regenerate only then.
    # Run as a script, so that the user's PYTHONPATH (where the library may be) stays as it is.
    add_custom_command(
      OUTPUT "${listing}" "${listing}.refresh"
      COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/python/backendbench/op_libraries.py" --list "${library}"
              --output "${listing}"
      DEPENDS "${PROJECT_SOURCE_DIR}/python/backendbench/op_libraries.py"
      COMMENT "Listing the operators of op library ${library}"
      VERBATIM)
    string(APPEND manifest_lines "op-library ${library} ${listing}\n")
    list(APPEND op_library_options --op-library "${library}=${listing}")
    list(APPEND op_library_listings "${listing}")
  endforeach()
  # Outside ${out}, which the generator owns (it removes files it did not write there).
  set(manifest "${BACKENDBENCH_GENERATED_DIR}/kernel_manifests/${ARG_NAME}.txt")
  file(GENERATE OUTPUT "${manifest}" CONTENT "${manifest_lines}")
  add_custom_target(${set_target} DEPENDS ${libraries} ${op_library_listings})
  if(python_kernels OR ARG_OP_LIBRARIES)
    add_dependencies(${set_target} backendbench_python)
  endif()
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_TARGET ${set_target})
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_MANIFEST "${manifest}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_DIRECTORY "${ARG_DIRECTORY}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_SKIP_CUDA "${skip_cuda}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_LOCAL_OBJECTS "${local_objects}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_INDEX "${out}/kernel_index.cpp")
  # Suites depend on which kernels exist (folder contents: their CTest entries) and on the
  # expect-failure lines; a new kernel rewrites the CTest entries, never the case tables.
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_DEPENDS ${kernel_folders} ${expectation_files}
                                                                      ${op_library_listings})
  set_property(GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_NAME}_OP_LIBRARY_OPTIONS "${op_library_options}")
endfunction()

# The clang precompiled header of candidates, in <folder>: ATen, torch/library.h and the binding
# header, with the kernel libraries' flags, and with its templates instantiated while it is built
# (-fpch-instantiate-templates), which is what makes a translation unit that uses it cheap. Sets
# _backendbench_candidate_flags (the flags every user of it must pass) and _backendbench_candidate_pch
# in the caller's scope. <folder> is not candidate_slots: a slot's build may write there (its
# library), and what every candidate compiles against must stay out of any candidate's reach.
function(_backendbench_clang_pch folder)
  # Once per build: the tree's kernels (backendbench_add_kernels) and the candidate slots share it.
  get_property(made GLOBAL PROPERTY BACKENDBENCH_CLANG_PCH)
  if(made)
    get_property(flags GLOBAL PROPERTY BACKENDBENCH_CLANG_PCH_FLAGS)
    set(_backendbench_candidate_flags "${flags}" PARENT_SCOPE)
    set(_backendbench_candidate_pch "${made}" PARENT_SCOPE)
    return()
  endif()
  set(header "${folder}/candidate_pch.h")
  set(cuda_headers "")
  if(BACKENDBENCH_WITH_CUDA)
    # What a two-part CUDA candidate's host part includes to launch on the current stream.
    set(cuda_headers "#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAException.h>\n#include <c10/cuda/CUDAGuard.h>\n#include <c10/cuda/CUDAStream.h>\n")
  endif()
  file(CONFIGURE OUTPUT "${header}" CONTENT
       "// @generated by backendbench_add_candidate_slots: what every candidate's translation unit has parsed.\n#include <ATen/ATen.h>\n#include <torch/library.h>\n#include \"backendbench/kernel_binding.h\"\n${cuda_headers}")
  set(pch "${header}.pch")
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  separate_arguments(build_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}")
  # The kernel libraries' include folders and definitions (libtorch's, transitively).
  set(includes "$<REMOVE_DUPLICATES:$<TARGET_PROPERTY:backendbench_kernel_precompiled_header,INCLUDE_DIRECTORIES>>")
  set(defines "$<REMOVE_DUPLICATES:$<TARGET_PROPERTY:backendbench_kernel_precompiled_header,COMPILE_DEFINITIONS>>")
  set(flags ${build_flags} -std=c++${BACKENDBENCH_TORCH_CXX_STANDARD} -fPIC -fvisibility=hidden -fvisibility-inlines-hidden
            "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>" "$<$<BOOL:${defines}>:-D$<JOIN:${defines},$<SEMICOLON>-D>>")
  add_custom_command(
    OUTPUT "${pch}"
    COMMAND "${BACKENDBENCH_CANDIDATE_CXX}" ${flags} -fpch-instantiate-templates -x c++-header "${header}" -o "${pch}"
            -MD -MF "${pch}.d"
    DEPENDS "${header}"
    DEPFILE "${pch}.d"
    COMMENT "backendbench: the candidates' precompiled header (clang)"
    COMMAND_EXPAND_LISTS VERBATIM)
  # The slots depend on this target, so that it is built once (the Makefile generators would
  # otherwise run its command in every target that lists it).
  add_custom_target(backendbench_candidate_pch DEPENDS "${pch}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_CLANG_PCH "${pch}")
  set_property(GLOBAL PROPERTY BACKENDBENCH_CLANG_PCH_FLAGS "${flags}")
  set(_backendbench_candidate_flags "${flags}" PARENT_SCOPE)
  set(_backendbench_candidate_pch "${pch}" PARENT_SCOPE)
endfunction()

# backendbench_add_candidate_slots(COUNT <n>)
# Kernel libraries without a kernel of their own, for the llm backends: slot <k> builds whatever
# its sources include (the loop writes candidate_slots/slot_<k>.cpp and slot_<k>.binding.cpp, or
# slot_<k>.cu, slot_<k>.host.cpp and slot_<k>.host.binding.cpp: one #include each of the
# candidate's own part, binding or device part), with the
# kernels' flags and a precompiled header, so that a model's candidate is compiled alone, in
# parallel with others, and nothing is configured again.
function(backendbench_add_candidate_slots)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "COUNT" "")
  if(NOT ARG_COUNT MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "backendbench_add_candidate_slots: COUNT '${ARG_COUNT}' is not a number of slots; expected an integer of at least 1")
  endif()
  set(folder "${CMAKE_BINARY_DIR}/candidate_slots")
  if(BACKENDBENCH_CANDIDATE_CXX)
    _backendbench_clang_pch("${CMAKE_BINARY_DIR}/candidate_pch")
  endif()
  set(languages cpp)
  if(BACKENDBENCH_WITH_CUDA)
    list(APPEND languages cu)
  endif()
  set(targets "")
  math(EXPR last "${ARG_COUNT} - 1")
  foreach(slot RANGE ${last})
    foreach(language IN LISTS languages)
      set(target backendbench_candidate_${language}_${slot})
      # The C++ source of a slot: a C++ candidate's own translation unit, or a two-part CUDA
      # candidate's (its host part); its binding source: the candidate's binding, which is the
      # same for every candidate of an operator, so the loop compiles it only when it changes;
      # the CUDA source: a classic .cu candidate's binding, or a two-part one's device part. The
      # loop writes one #include into each, or leaves the text below.
      set(cxx_source "${folder}/slot_${slot}.cpp")
      set(sources "")
      if(language STREQUAL "cu")
        set(cxx_source "${folder}/slot_${slot}.host.cpp")
        list(APPEND sources "${folder}/slot_${slot}.cu")
      endif()
      string(REGEX REPLACE "\\.cpp$" ".binding.cpp" binding_source "${cxx_source}")
      list(APPEND sources "${cxx_source}" "${binding_source}")
      foreach(source IN LISTS sources)
        if(NOT EXISTS "${source}")
          file(WRITE "${source}" "// A candidate slot of the llm backends: the loop writes a candidate's binding #include here.\n")
        endif()
      endforeach()
      if(BACKENDBENCH_CANDIDATE_CXX)
        # The C++ sources compiled by clang against their instantiated precompiled header
        # (_backendbench_clang_pch) into objects the library links. No depfile: the loop runs
        # these commands itself, in its sandbox, for each candidate (and the build tool's depfile
        # step would write outside the slot's folders).
        foreach(source IN ITEMS "${cxx_source}" "${binding_source}")
          get_filename_component(source_name "${source}" NAME)
          string(REGEX REPLACE "^slot_[0-9]+(\\.host)?" "" suffix "${source_name}")
          string(REGEX REPLACE "\\.cpp$" ".o" suffix "${suffix}")
          set(object "${folder}/objects/${target}${suffix}")
          add_custom_command(
            OUTPUT "${object}"
            COMMAND "${BACKENDBENCH_CANDIDATE_CXX}" ${_backendbench_candidate_flags} -include-pch "${_backendbench_candidate_pch}"
                    -c "${source}" -o "${object}"
            DEPENDS "${_backendbench_candidate_pch}" "${source}"
            COMMAND_EXPAND_LISTS VERBATIM)
          list(REMOVE_ITEM sources "${source}")
          list(APPEND sources "${object}")
        endforeach()
      endif()
      add_library(${target} SHARED EXCLUDE_FROM_ALL ${sources})
      set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
      if(BACKENDBENCH_CANDIDATE_CXX)
        add_dependencies(${target} backendbench_candidate_pch)
      endif()
      target_link_libraries(${target} PRIVATE backendbench::kernel_binding)
      if(BACKENDBENCH_CANDIDATE_LINKER)
        get_filename_component(linker "${BACKENDBENCH_CANDIDATE_LINKER}" NAME)
        string(REGEX REPLACE "^ld\\." "" linker "${linker}")  # ld.lld -> -fuse-ld=lld
        target_link_options(${target} PRIVATE "-fuse-ld=${linker}")
      endif()
      if(NOT BACKENDBENCH_CANDIDATE_CXX)
        target_precompile_headers(${target} REUSE_FROM backendbench_kernel_precompiled_header)
        if(language STREQUAL "cu")
          set_source_files_properties("${folder}/slot_${slot}.cu" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
        endif()
      endif()
      # No launcher: the loop runs these commands in its sandbox itself, and never through the
      # project's ccache (backendbench_use_ccache).
      set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
                                                 VISIBILITY_INLINES_HIDDEN ON LIBRARY_OUTPUT_DIRECTORY "${folder}"
                                                 CXX_COMPILER_LAUNCHER "" CUDA_COMPILER_LAUNCHER "")
      list(APPEND targets ${target})
    endforeach()
  endforeach()
  add_custom_target(backendbench_candidate_slots DEPENDS ${targets})
endfunction()

function(backendbench_add_suite)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "EXCLUDE_UNKNOWN_OPERATORS" "NAME;KERNELS;SHARDS;TOPN;BOTTOMN;CASE_TIMEOUT;TIER"
                        "TRACES;OPS")
  if(NOT ARG_TIER)
    set(ARG_TIER system)
  endif()
  _backendbench_check_tier("backendbench_add_suite(${ARG_NAME})" "${ARG_TIER}")
  if(NOT ARG_SHARDS)
    set(ARG_SHARDS 1)
  endif()
  if(NOT ARG_KERNELS)
    set(ARG_KERNELS default)
  endif()
  if(NOT DEFINED ARG_CASE_TIMEOUT)
    set(ARG_CASE_TIMEOUT "${BACKENDBENCH_CASE_TIMEOUT}")
  endif()
  set(out "${BACKENDBENCH_GENERATED_DIR}/${ARG_NAME}")
  set(executable "backendbench_test_${ARG_NAME}")
  _backendbench_kernel_set_target("backendbench_add_suite(${ARG_NAME})" "${ARG_KERNELS}" kernels_target)
  get_property(kernels_dir GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_DIRECTORY)
  get_property(skip_cuda GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_SKIP_CUDA)
  get_property(kernel_folders GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_DEPENDS)
  get_property(kernel_manifest GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_MANIFEST)
  get_property(op_library_options GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_OP_LIBRARY_OPTIONS)

  set(trace_files "")
  foreach(trace IN LISTS ARG_TRACES)
    if(IS_DIRECTORY "${trace}")
      file(GLOB_RECURSE found CONFIGURE_DEPENDS "${trace}/*.txt" "${trace}/*.json" "${trace}/*.jsonl")
      list(APPEND trace_files ${found})
    else()
      list(APPEND trace_files "${trace}")
    endif()
  endforeach()
  set(options "")
  string(REPLACE "," ";" ops "${ARG_OPS}")
  if(ops)
    list(JOIN ops "," ops_text)
    list(APPEND options --ops "${ops_text}")
  endif()
  if(ARG_TOPN)
    list(APPEND options --top-n "${ARG_TOPN}")
  endif()
  if(ARG_BOTTOMN)
    list(APPEND options --bottom-n "${ARG_BOTTOMN}")
  endif()
  if(ARG_EXCLUDE_UNKNOWN_OPERATORS)
    list(APPEND options --exclude-unknown-operators)
  endif()
  if(BACKENDBENCH_INCLUDE_SYNTHETIC)
    list(APPEND options --include-synthetic)
  endif()
  if(BACKENDBENCH_OVERHEAD_DOMINATED_ONLY)
    list(APPEND options --overhead-dominated-only)
  endif()

  set(cases "")
  math(EXPR last "${ARG_SHARDS} - 1")
  foreach(shard RANGE ${last})
    list(APPEND cases "${out}/cases_${shard}.cpp")
  endforeach()
  add_custom_command(
    OUTPUT "${out}/generate.stamp"
    BYPRODUCTS ${cases} "${out}/ctest.cmake" "${out}/excluded.csv" "${out}/suite.json"
    COMMAND backendbench::generator suite --name "${ARG_NAME}" --traces ${ARG_TRACES} --output "${out}"
            --templates "${_backendbench_templates_dir}" --kernels "${kernels_dir}" ${skip_cuda} ${op_library_options}
            --shards "${ARG_SHARDS}" --test-executable "${CMAKE_BINARY_DIR}/${executable}"
            --results-dir "${BACKENDBENCH_RESULTS_DIR}" --timeout "${BACKENDBENCH_TEST_TIMEOUT}"
            --case-timeout "${ARG_CASE_TIMEOUT}" --cases-per-entry "${BACKENDBENCH_CASES_PER_ENTRY}" --test-labels "${ARG_TIER}"
            --cmake-command "${CMAKE_COMMAND}"
            --expect-script "${_backendbench_expect_script}" ${options}
    COMMAND "${CMAKE_COMMAND}" -E touch "${out}/generate.stamp"
    DEPENDS backendbench::generator ${_backendbench_templates} ${trace_files} ${kernel_folders}
    COMMENT "Generating suite ${ARG_NAME}"
    VERBATIM)
  add_custom_target(backendbench_generate_${ARG_NAME} DEPENDS "${out}/generate.stamp")

  # Case tables as an OBJECT library: their static registrars must reach both executables.
  add_library(backendbench_cases_${ARG_NAME} OBJECT ${cases})
  target_link_libraries(backendbench_cases_${ARG_NAME} PUBLIC backendbench::runtime)
  add_dependencies(backendbench_cases_${ARG_NAME} backendbench_generate_${ARG_NAME})
  if(BACKENDBENCH_BACKEND_ONLY)
    return()  # the case tables alone: the backend library checks kernels on them
  endif()

  # The executable: the case tables, the GoogleTest front-end, and the path of the kernel
  # manifest; it loads the kernels at start-up, so it never relinks when one changes.
  add_executable(${executable} "${_backendbench_kernel_manifest_source}")
  target_compile_definitions(${executable} PRIVATE BACKENDBENCH_KERNEL_MANIFEST="${kernel_manifest}")
  target_link_libraries(${executable} PRIVATE backendbench_cases_${ARG_NAME} backendbench::gtest_frontend)
  # The kernel worker it starts, and the client `backendbench run`'s entries run it through.
  add_dependencies(${executable} backendbench_worker backendbench_entry)
  # It loads the kernels at start-up, so its build needs none of them; a build that waits for
  # them all makes one kernel that does not compile stop every suite (BACKENDBENCH_KERNELS_APART:
  # backendbench run builds the libraries itself and leaves out those that fail).
  if(NOT BACKENDBENCH_KERNELS_APART)
    add_dependencies(${executable} ${kernels_target})
  endif()
  set_target_properties(${executable} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")

  set(include_file "${CMAKE_BINARY_DIR}/backendbench_${ARG_NAME}_tests.cmake")
  file(WRITE "${include_file}"
       "if(EXISTS \"${out}/ctest.cmake\")\n"
       "  include(\"${out}/ctest.cmake\")\n"
       "else()\n"
       "  add_test(${ARG_NAME}_NOT_BUILT ${ARG_NAME}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
  # ./bench times the kernels users ship (the default set); a bench of another set is for tests.
  set_property(GLOBAL APPEND PROPERTY BACKENDBENCH_SUITE_CASES_${ARG_KERNELS} backendbench_cases_${ARG_NAME})
endfunction()

function(backendbench_add_bench)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;KERNELS" "")
  if(NOT ARG_NAME)
    set(ARG_NAME bench)
  endif()
  if(NOT ARG_KERNELS)
    set(ARG_KERNELS default)
  endif()
  get_property(case_libraries GLOBAL PROPERTY BACKENDBENCH_SUITE_CASES_${ARG_KERNELS})
  get_property(kernel_manifest GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_MANIFEST)
  _backendbench_kernel_set_target("backendbench_add_bench(${ARG_NAME})" "${ARG_KERNELS}" kernels_target)
  add_executable(${ARG_NAME} "${_backendbench_kernel_manifest_source}")
  target_compile_definitions(${ARG_NAME} PRIVATE BACKENDBENCH_KERNEL_MANIFEST="${kernel_manifest}")
  target_link_libraries(${ARG_NAME} PRIVATE ${case_libraries} backendbench::bench_frontend)
  add_dependencies(${ARG_NAME} backendbench_worker)
  if(NOT BACKENDBENCH_KERNELS_APART)
    add_dependencies(${ARG_NAME} ${kernels_target})  # as the suites' executables (above)
  endif()
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")
endfunction()

function(backendbench_add_backend)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;KERNELS" "CHECK_SUITES")
  if(NOT ARG_NAME)
    message(FATAL_ERROR "backendbench_add_backend: NAME is missing; expected the library's target name")
  endif()
  if(NOT DEFINED ARG_CHECK_SUITES)
    set(ARG_CHECK_SUITES smoke edge)
  endif()
  if(NOT ARG_KERNELS)
    set(ARG_KERNELS default)
  endif()
  _backendbench_kernel_set_target("backendbench_add_backend(${ARG_NAME})" "${ARG_KERNELS}" kernels_target)
  get_property(local_objects GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_LOCAL_OBJECTS)
  get_property(index GLOBAL PROPERTY BACKENDBENCH_KERNELS_${ARG_KERNELS}_INDEX)
  set(case_libraries "")
  foreach(suite IN LISTS ARG_CHECK_SUITES)
    if(TARGET backendbench_cases_${suite})
      list(APPEND case_libraries backendbench_cases_${suite})
    endif()
  endforeach()
  set_source_files_properties(${local_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_source_files_properties("${index}" PROPERTIES GENERATED TRUE)
  add_library(${ARG_NAME} SHARED "${_backendbench_backend_library_source}" "${index}" ${local_objects})
  # The case tables of the set's suites: enable() checks a kernel without results on them.
  # The runtime is linked in privately (one copy, inside the library); users get its headers
  # (backendbench/enable.h) and libtorch.
  target_link_libraries(${ARG_NAME} PRIVATE ${case_libraries} backendbench::overrides backendbench::supervisor
                                            backendbench::kernel_binding)
  target_include_directories(${ARG_NAME} PUBLIC $<TARGET_PROPERTY:backendbench::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(${ARG_NAME} PUBLIC backendbench::torch)
  add_dependencies(${ARG_NAME} ${kernels_target}_bindings ${kernels_target})
  set_target_properties(${ARG_NAME} PROPERTIES OUTPUT_NAME "backendbench_${ARG_NAME}")
  # A private libstdc++: in a Python process the torch wheel is loaded first and exports its own
  # statically linked copies of libstdc++'s stream and locale functions (pytorch/pytorch#133437),
  # which then serve this library's calls too; formatting an integer into a stream crashed in
  # 1 of 6 enable() calls on the GPU machine (torch 2.11). Linked in and kept local, the library's
  # own copy serves every call it makes.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_link_options(${ARG_NAME} PRIVATE -static-libstdc++ -Wl,--exclude-libs,libstdc++.a)
  endif()
  add_library(backendbench::${ARG_NAME} ALIAS ${ARG_NAME})
endfunction()

function(backendbench_add_model_tests)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "FORCE" "BACKEND;DEVICE;SIZE;EXPECT_DIVERGENCE" "MODELS")
  if(NOT TARGET "${ARG_BACKEND}")
    message(FATAL_ERROR "backendbench_add_model_tests: BACKEND '${ARG_BACKEND}' is not a target; expected the NAME "
                        "of a backendbench_add_backend()")
  endif()
  if(NOT ARG_MODELS)
    message(FATAL_ERROR "backendbench_add_model_tests: MODELS is missing; expected model names "
                        "(python -m backendbench.models --list)")
  endif()
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(options --library "$<TARGET_FILE:${ARG_BACKEND}>")
  if(ARG_DEVICE)
    list(APPEND options --device "${ARG_DEVICE}")
  endif()
  if(ARG_SIZE)
    list(APPEND options --size "${ARG_SIZE}")
  endif()
  if(ARG_FORCE)
    list(APPEND options --force)
  endif()
  if(ARG_EXPECT_DIVERGENCE)
    list(APPEND options --expect-divergence "${ARG_EXPECT_DIVERGENCE}")
  endif()
  foreach(model IN LISTS ARG_MODELS)
    add_test(NAME "model/${model}/${ARG_BACKEND}"
             COMMAND "${Python3_EXECUTABLE}" -m backendbench.models --model "${model}" ${options}
                     --output "${BACKENDBENCH_RESULTS_DIR}/model/${ARG_BACKEND}")
    # The package from this source tree, and an empty results folder: each kernel is checked
    # first, as for a fresh install.
    set_tests_properties("model/${model}/${ARG_BACKEND}" PROPERTIES
                         LABELS "model;e2e" SKIP_RETURN_CODE 77 TIMEOUT 900
                         ENVIRONMENT "PYTHONPATH=${PROJECT_SOURCE_DIR}/python;BACKENDBENCH_RESULTS=")
  endforeach()
endfunction()

# Positional, not cmake_parse_arguments: the regex and the command's arguments may hold ';'
# (a list separator), and named parameters keep each argument whole.
function(backendbench_add_expect_test name expect_exit expect_output)
  add_test(NAME "${name}"
           COMMAND "${CMAKE_COMMAND}" "-DEXPECT_EXIT=${expect_exit}" "-DEXPECT_OUTPUT=${expect_output}"
                   "-DCOMMAND=${ARGN}" -P "${_backendbench_expect_script}")
  set_tests_properties("${name}" PROPERTIES LABELS "project;system" TIMEOUT 600)
endfunction()

set(_backendbench_test_tiers unit system e2e)
function(_backendbench_check_tier caller tier)
  if(NOT tier IN_LIST _backendbench_test_tiers)
    message(FATAL_ERROR "${caller}: test tier '${tier}'; expected one of: ${_backendbench_test_tiers}")
  endif()
endfunction()

function(backendbench_set_test_tier tier)
  _backendbench_check_tier("backendbench_set_test_tier" "${tier}")
  foreach(test IN LISTS ARGN)
    get_property(labels TEST "${test}" PROPERTY LABELS)
    list(REMOVE_ITEM labels ${_backendbench_test_tiers})
    list(APPEND labels "${tier}")
    set_property(TEST "${test}" PROPERTY LABELS "${labels}")
  endforeach()
endfunction()
