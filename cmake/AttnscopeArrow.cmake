# Arrow and Parquet C++ (the columnar trace cache, `export --parquet`, the per-rank summaries), found
# where PyPI's pyarrow wheel puts them, as cmake/AttnscopeTorch.cmake finds LibTorch in the torch wheel:
#   pyarrow/include/{arrow,parquet}           the C++ headers
#   pyarrow/libarrow.so.NNNN, libparquet.so.NNNN   the libraries (no unversioned libarrow.so in the wheel)
# Debian 12 has no Arrow C++ package; the wheel is the same library pyarrow, pandas and DuckDB use.
#
# In:  ATTNSCOPE_ARROW (AUTO|ON|OFF, cache): OFF builds without it (no cache: every open parses the
#      JSON, `export --parquet` and the summaries' cache say so); ON fails the configure step when it is
#      missing; AUTO uses it when found. ATTNSCOPE_PYARROW_DIR (cache): the pyarrow package folder
#      (python3 -c 'import pyarrow; print(pyarrow.__path__[0])'), found by asking python3 when empty.
# Out: ATTNSCOPE_ARROW_FOUND, ATTNSCOPE_ARROW_WHY (what was missing), the imported target
#      attnscope::arrow (headers, libarrow and libparquet, ATTNSCOPE_HAVE_ARROW defined).

set(ATTNSCOPE_ARROW AUTO CACHE STRING "Build the columnar cache with Arrow/Parquet C++ from the pyarrow wheel: AUTO|ON|OFF")
set_property(CACHE ATTNSCOPE_ARROW PROPERTY STRINGS AUTO ON OFF)
set(ATTNSCOPE_PYARROW_DIR "" CACHE PATH "The pyarrow package folder (pyarrow.__path__[0]); found when empty")
set(ATTNSCOPE_ARROW_FOUND OFF)
set(ATTNSCOPE_ARROW_WHY "")

function(_attnscope_find_arrow)
  set(ATTNSCOPE_ARROW_FOUND OFF PARENT_SCOPE)
  if(ATTNSCOPE_ARROW STREQUAL "OFF")
    set(ATTNSCOPE_ARROW_WHY "ATTNSCOPE_ARROW=OFF" PARENT_SCOPE)
    return()
  endif()
  set(dir "${ATTNSCOPE_PYARROW_DIR}")
  if(NOT dir)
    find_package(Python3 QUIET COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import pyarrow; print(pyarrow.__path__[0])"
                      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        set(dir "")
      endif()
    endif()
  endif()
  if(NOT dir OR NOT EXISTS "${dir}/include/arrow/api.h" OR NOT EXISTS "${dir}/include/parquet/arrow/writer.h")
    set(ATTNSCOPE_ARROW_WHY "no pyarrow wheel with Arrow's C++ headers (pip install pyarrow==26.0.1; scripts/build \
does it; or set ATTNSCOPE_PYARROW_DIR)" PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${dir}/include/arrow/util/config.h" so REGEX "#define ARROW_SO_VERSION \"[0-9]+\"")
  string(REGEX MATCH "[0-9]+" so "${so}")
  if(NOT so OR so LESS 1500)
    set(ATTNSCOPE_ARROW_WHY "pyarrow at ${dir} is too old (Arrow ${so}; 15 or newer is needed)" PARENT_SCOPE)
    return()
  endif()
  foreach(lib arrow parquet)
    if(NOT EXISTS "${dir}/lib${lib}.so.${so}")
      set(ATTNSCOPE_ARROW_WHY "pyarrow at ${dir} has no lib${lib}.so.${so}" PARENT_SCOPE)
      return()
    endif()
    add_library(attnscope::${lib}_lib SHARED IMPORTED GLOBAL)
    set_target_properties(attnscope::${lib}_lib PROPERTIES IMPORTED_LOCATION "${dir}/lib${lib}.so.${so}"
                          IMPORTED_SONAME "lib${lib}.so.${so}")
  endforeach()
  add_library(attnscope::arrow INTERFACE IMPORTED GLOBAL)
  set_target_properties(attnscope::arrow PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${dir}/include"
    INTERFACE_COMPILE_DEFINITIONS "ATTNSCOPE_HAVE_ARROW"
    INTERFACE_LINK_LIBRARIES "attnscope::parquet_lib;attnscope::arrow_lib")
  set(ATTNSCOPE_ARROW_FOUND ON PARENT_SCOPE)
  set(ATTNSCOPE_ARROW_DIR "${dir}" PARENT_SCOPE)
  set(ATTNSCOPE_ARROW_SO "${so}" PARENT_SCOPE)
endfunction()

_attnscope_find_arrow()
if(ATTNSCOPE_ARROW_FOUND)
  message(STATUS "attnscope: Arrow/Parquet C++ ${ATTNSCOPE_ARROW_SO} from ${ATTNSCOPE_ARROW_DIR}: the columnar cache is on")
elseif(ATTNSCOPE_ARROW STREQUAL "ON")
  message(FATAL_ERROR "ATTNSCOPE_ARROW=ON but Arrow C++ was not found: ${ATTNSCOPE_ARROW_WHY}")
else()
  message(STATUS "attnscope: built without Arrow (${ATTNSCOPE_ARROW_WHY}): no columnar cache, every open parses "
                 "the JSON; export --parquet and the per-rank summaries' cache are off")
endif()
