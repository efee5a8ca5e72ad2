# Fails when a doctest case name cannot be registered with CTest one to one: a ';' splits it into
# two CTest tests whose filters match nothing, and doctest passes a filter that matches nothing.
# Usage: cmake -DTEST_BINARY=<exe> -P check_test_names.cmake
execute_process(COMMAND ${TEST_BINARY} --list-test-cases --no-version
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_BINARY} --list-test-cases failed")
endif()
string(FIND "${out}" ";" semicolon)
if(NOT semicolon EQUAL -1)
  message(FATAL_ERROR "a test case name in ${TEST_BINARY} contains ';':\n${out}")
endif()
