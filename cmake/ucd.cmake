# Readers of the Unicode Character Database's data files, for the generators of tables from
# Debian's unicode-data (gen_unicode_scripts.cmake, gen_unicode_age.cmake).

# Zero-padded decimal, so that list(SORT) orders code points numerically.
function(pad7 out hex)
  math(EXPR v "0x${hex}")
  string(LENGTH "${v}" n)
  while(n LESS 7)
    string(PREPEND v "0")
    math(EXPR n "${n} + 1")
  endwhile()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()
function(unpad out v)
  math(EXPR v "1${v} - 10000000")
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# The data lines "XXXX[..YYYY] ; value" of a UCD file, ';' turned into ':' (CMake's list
# separator) and comments dropped.
function(ucd_lines out file)
  file(READ "${file}" text)
  string(REPLACE ";" ":" text "${text}")
  string(REGEX MATCHALL "\n[0-9A-F]+(\\.\\.[0-9A-F]+)? *: *[A-Za-z0-9_.]+" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# One such line as "first-last-value", the code points zero-padded (a single one is first = last).
function(ucd_range out line)
  string(REGEX MATCH "([0-9A-F]+)(\\.\\.([0-9A-F]+))? *: *([A-Za-z0-9_.]+)" _ "${line}")
  set(a "${CMAKE_MATCH_1}")
  set(b "${CMAKE_MATCH_3}")
  if(b STREQUAL "")
    set(b "${a}")
  endif()
  pad7(pa "${a}")
  pad7(pb "${b}")
  set(${out} "${pa}-${pb}-${CMAKE_MATCH_4}" PARENT_SCOPE)
endfunction()

# The "first-last" ranges (zero-padded, sorted) of DerivedAge.txt whose age compares to `version`
# by `test` (VERSION_LESS_EQUAL: assigned by that version; VERSION_GREATER: assigned after it).
function(ucd_age_ranges out file test version)
  ucd_lines(lines "${file}")
  set(ranges "")
  foreach(l IN LISTS lines)
    ucd_range(r "${l}")
    string(REGEX MATCH "^([0-9]+-[0-9]+)-(.*)$" _ "${r}")
    if(CMAKE_MATCH_2 ${test} version)
      list(APPEND ranges "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(SORT ranges)
  set(${out} "${ranges}" PARENT_SCOPE)
endfunction()
