# ctest helper: runs COMMAND (a ;-list) and checks both its exit code (EXPECT_EXIT: a number,
# or "failure" for any exit that is neither 0 nor 77, signals included) and that its combined
# output matches the regex EXPECT_OUTPUT. Usage:
#   cmake -DCOMMAND=a;b -DEXPECT_EXIT=1 -DEXPECT_OUTPUT=regex -P ExpectCommand.cmake
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE exit_code OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(EXPECT_EXIT STREQUAL "failure")
  if(exit_code STREQUAL "0" OR exit_code STREQUAL "77")
    message(FATAL_ERROR "exit code ${exit_code}, expected a failure")
  endif()
elseif(NOT exit_code STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${exit_code}, expected ${EXPECT_EXIT}")
endif()
if(NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match: ${EXPECT_OUTPUT}")
endif()
