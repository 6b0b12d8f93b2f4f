# cmake -P script: PROGRAM run with ARGS (separated by commas) must exit
# with status 2 and print exactly one line, on stderr, and nothing on stdout.
string(REPLACE "," ";" args "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines lines)
if(NOT rc EQUAL 2 OR NOT lines EQUAL 1 OR NOT out STREQUAL "")
  message(FATAL_ERROR "sluice ${args}: expected exit status 2 and one line on stderr, found status ${rc}, "
                      "stderr:\n${err}\nstdout:\n${out}")
endif()
