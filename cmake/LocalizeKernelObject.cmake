# Copies one kernel binding's object file with its own symbols made local, for the one library
# that holds every kernel (backendbench_add_backend): two kernels may then define functions of
# the same name (relu_kernel, a launcher) without clashing. Only strong global definitions are
# made local; weak ones (inline functions and templates from ATen's headers, in COMDAT groups)
# stay as they are, since the linker keeps one copy of each group and a local symbol in a
# discarded copy would be a dangling reference. The binding's entries symbol
# (backendbench_kernel_<operator>_impl<N>_entries, named by the generator), which the library's
# index calls, stays global.
#
# A two-part CUDA kernel has two objects (its binding and its device part): INPUT names both,
# separated by '|', and they are first linked into one relocatable object (ld -r), so that the
# binding's calls of the device part's launchers stay resolved once both are local.
#
# cmake -DNM=nm -DOBJCOPY=objcopy -DLINKER=ld -DINPUT=in.o[|in2.o] -DOUTPUT=out.o -P LocalizeKernelObject.cmake
foreach(required IN ITEMS NM OBJCOPY INPUT OUTPUT)
  if(NOT ${required})
    message(FATAL_ERROR "LocalizeKernelObject.cmake: -D${required}= is missing")
  endif()
endforeach()
string(REPLACE "|" ";" inputs "${INPUT}")
list(LENGTH inputs input_count)
if(input_count GREATER 1)
  if(NOT LINKER)
    message(FATAL_ERROR "LocalizeKernelObject.cmake: -DLINKER= is missing; expected ld, to join ${INPUT}")
  endif()
  set(INPUT "${OUTPUT}.joined.o")
  execute_process(COMMAND "${LINKER}" -r -o "${INPUT}" ${inputs} RESULT_VARIABLE result ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${inputs}: error: ld -r failed: ${error}")
  endif()
endif()
execute_process(COMMAND "${NM}" --defined-only --extern-only --format=posix "${INPUT}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE result ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${INPUT}: error: nm failed: ${error}")
endif()
set(local "")
string(REPLACE "\n" ";" lines "${symbols}")
foreach(line IN LISTS lines)
  # posix format: <name> <type> [<value> <size>]; strong global definitions are T D B R G S.
  if(line MATCHES "^([^ ]+) ([TDBRGS])( |$)")
    set(symbol "${CMAKE_MATCH_1}")
    if(NOT symbol MATCHES "^backendbench_kernel_.+_entries$")
      string(APPEND local "${symbol}\n")
    endif()
  endif()
endforeach()
file(WRITE "${OUTPUT}.symbols" "${local}")
execute_process(COMMAND "${OBJCOPY}" "--localize-symbols=${OUTPUT}.symbols" "${INPUT}" "${OUTPUT}"
                RESULT_VARIABLE result ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${INPUT}: error: objcopy failed: ${error}")
endif()
