# Linking CLBlast's DLL delay-loaded into anycl.dll (mingw-w64, -DANYCL_CLBLAST_DELAY_LOAD=ON): the
# DLL then loads without it, and only the first CLBlast call needs it. GNU ld has no /DELAYLOAD, so
# a delay-import library is made from CLBlast's ordinary import library at configure time: the DLL
# name it records (dlltool --identify), the functions and data it imports (nm: __imp_<name>, with
# a code thunk <name> for a function) into a .def, and `dlltool --output-delaylib` from that. The
# helper that resolves the imports on first use (__delayLoadHelper2) is in mingw-w64's libmingwex.
# src/blas/clblast_library.cpp loads the DLL by the same name before the first call, so a missing
# DLL is an anycl error naming it instead of the helper's unhandled exception.

function(anycl_link_clblast_delay_loaded target)
  if(NOT MINGW)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD is implemented for mingw-w64 only (with MSVC it would "
                        "be /DELAYLOAD:clblast.dll and delayimp.lib, not built here) — pass -DANYCL_CLBLAST_DELAY_LOAD=OFF")
  endif()
  if(NOT ANYCL_SHARED)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD needs the DLL (ANYCL_SHARED=ON): a static libanycl leaves "
                        "linking CLBlast to the application")
  endif()
  # The import library of the `clblast` target: IMPORTED_IMPLIB, or that of one of its configurations.
  get_target_property(implib clblast IMPORTED_IMPLIB)
  if(NOT implib)
    get_target_property(configs clblast IMPORTED_CONFIGURATIONS)
    foreach(config IN LISTS configs)
      get_target_property(implib clblast IMPORTED_IMPLIB_${config})
      if(implib)
        break()
      endif()
    endforeach()
  endif()
  if(NOT implib OR NOT EXISTS "${implib}")
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD: the clblast target names no import library (IMPORTED_IMPLIB) — "
                        "point CLBlast_DIR at a CLBlast for mingw-w64, or pass -DANYCL_CLBLAST_DELAY_LOAD=OFF")
  endif()
  string(REGEX REPLACE "nm$" "dlltool" dlltool_guess "${CMAKE_NM}")
  find_program(ANYCL_DLLTOOL NAMES "${dlltool_guess}" ${CMAKE_DLLTOOL} x86_64-w64-mingw32-dlltool dlltool
               DOC "binutils' dlltool for the delay-import library of CLBlast")
  if(NOT ANYCL_DLLTOOL OR NOT CMAKE_NM)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD needs binutils' dlltool and nm for mingw-w64 (Debian: binutils-mingw-w64-x86-64)")
  endif()

  execute_process(COMMAND "${ANYCL_DLLTOOL}" --identify "${implib}" OUTPUT_VARIABLE dll
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR dll STREQUAL "")
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD: dlltool --identify ${implib} failed: ${err}")
  endif()
  execute_process(COMMAND "${CMAKE_NM}" "${implib}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD: nm ${implib} failed: ${err}")
  endif()
  string(REGEX MATCHALL " I __imp_[^\n]+" imports "${symbols}")
  string(REGEX MATCHALL " T [^\n]+" thunks "${symbols}")
  list(TRANSFORM imports REPLACE "^ I __imp_" "")
  list(TRANSFORM thunks REPLACE "^ T " "")
  list(REMOVE_DUPLICATES imports)
  if(NOT imports)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD: ${implib} imports nothing from ${dll}")
  endif()
  set(def "LIBRARY ${dll}\nEXPORTS\n")
  foreach(name IN LISTS imports)
    if(name IN_LIST thunks)
      string(APPEND def "${name}\n")
    else()
      string(APPEND def "${name} DATA\n")  # no code thunk: data, which a delay load cannot serve
    endif()
  endforeach()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/clblast-delay-load")
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dir}/clblast.def" "${def}")
  execute_process(COMMAND "${ANYCL_DLLTOOL}" -d "${dir}/clblast.def" -D "${dll}" -y "${dir}/libclblast.delay.a"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ANYCL_CLBLAST_DELAY_LOAD: dlltool --output-delaylib failed: ${err}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${implib}")  # a new CLBlast: redo it
  list(LENGTH imports count)
  message(STATUS "anycl: ${dll} delay-loaded (${count} imports, ${dir}/libclblast.delay.a)")

  # CLBlast's headers and definitions from its target; its library from the delay-import library.
  target_include_directories(${target} PRIVATE $<TARGET_PROPERTY:clblast,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${target} PRIVATE $<TARGET_PROPERTY:clblast,INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(${target} PRIVATE "${dir}/libclblast.delay.a")
  set_target_properties(${target} PROPERTIES ANYCL_CLBLAST_DLL "${dll}")  # for the tests
  set_property(SOURCE "${PROJECT_SOURCE_DIR}/src/blas/clblast_library.cpp" TARGET_DIRECTORY ${target}
               APPEND PROPERTY COMPILE_DEFINITIONS "ANYCL_CLBLAST_DLL=\"${dll}\"")
endfunction()
