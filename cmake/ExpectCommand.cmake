# ctest helper: runs COMMAND (a ;-list) and checks both its exit code (EXPECT_EXIT) and that
# its combined output matches the regex EXPECT_OUTPUT. Usage:
#   cmake -DCOMMAND=a;b -DEXPECT_EXIT=1 -DEXPECT_OUTPUT=regex -P ExpectCommand.cmake
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE exit_code OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT exit_code STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${exit_code}, expected ${EXPECT_EXIT}")
endif()
if(NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match: ${EXPECT_OUTPUT}")
endif()
