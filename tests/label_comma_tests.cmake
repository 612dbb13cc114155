# Included by CTest after the tests doctest_discover_tests declared (tests/CMakeLists.txt,
# TEST_INCLUDE_FILES), with ANYCL_LABELLED_TESTS set to the test program: gives a test whose name
# holds a comma its doctest suites as labels. Debian's doctestAddTests.cmake (2.4.9) asks the program
# for a test's suites with the name unescaped; doctest splits a filter at commas, so such a name
# matches no test and the test got no label: five "cli" tests (host behaviour) ran in the Intel pass.
function(anycl_doctest_lines out)  # the program's listing for ARGN, without doctest's own lines
  execute_process(COMMAND "${ANYCL_LABELLED_TESTS}" ${ARGN} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(WARNING "label_comma_tests: ${ANYCL_LABELLED_TESTS} ${ARGN} failed (${rc}); labels left as they are")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "\n" ";" listing "${listing}")
  set(lines "")
  foreach(line IN LISTS listing)
    if(line STREQUAL "" OR line MATCHES "^\\[doctest\\] " OR line MATCHES "^=+$")
      continue()
    endif()
    list(APPEND lines "${line}")
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# A build of some targets only (tools/run-tsan.sh builds three C programs) has no test program to ask:
# its tests are not run either.
if(NOT EXISTS "${ANYCL_LABELLED_TESTS}")
  return()
endif()
# CTest's own set_tests_properties sets a test's labels whole (set_property(TEST) is CMake's, unknown
# here): each name's suites are gathered first.
anycl_doctest_lines(suites --list-test-suites)
set(comma_names "")
foreach(suite IN LISTS suites)
  anycl_doctest_lines(names --list-test-cases "--test-suite=${suite}")
  foreach(name IN LISTS names)
    if(name MATCHES ",")
      string(MD5 key "${name}")
      list(APPEND comma_names "${name}")
      list(APPEND "suites_${key}" "${suite}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES comma_names)
foreach(name IN LISTS comma_names)
  string(MD5 key "${name}")
  set_tests_properties("${name}" PROPERTIES LABELS "${suites_${key}}")
endforeach()
