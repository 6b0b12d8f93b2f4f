# Writes OUT, a header defining SLUICE_REVISION: the git revision of SOURCE
# ("2124641abcde", "-dirty" when the tree has changes), or "unknown" outside
# a git checkout. Run at every build; OUT changes only when the revision
# does, so nothing rebuilds otherwise.
set(revision unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} describe --always --dirty --abbrev=12 --exclude=*
                  OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(NOT failed AND described)
    set(revision ${described})
  endif()
endif()
set(text "#pragma once\n#define SLUICE_REVISION \"${revision}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
