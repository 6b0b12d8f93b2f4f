# sluice_target_warnings(target): the warning set every sluice target builds with.
function(sluice_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
  # GCC 12 reports std::string concatenation (`"a" + std::to_string(n)`) as
  # overlapping memcpy in optimised builds: a known false positive (GCC bugs
  # 105329, 105651), fixed in GCC 13.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(SLUICE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
