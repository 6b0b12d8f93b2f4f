# cmake -P script: every non-empty line of BLOCK (a CMake block of
# README.md) must be a line of PROJECT_FILE, the project that the
# install_consumer test configures and builds against an installed sluice.
file(STRINGS ${BLOCK} block_lines)
file(STRINGS ${PROJECT_FILE} project_lines)
foreach(line IN LISTS block_lines)
  if(line STREQUAL "")
    continue()
  endif()
  list(FIND project_lines "${line}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "README.md's CMake line '${line}' is not in ${PROJECT_FILE}, which tests/install builds")
  endif()
endforeach()
