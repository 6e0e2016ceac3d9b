# Writes OUT, a header with the version and the git commit, only when it changed (so builds stay
# incremental). Run at build time, so the commit is never older than the sources being built.
execute_process(COMMAND git describe --always --dirty --abbrev=12 WORKING_DIRECTORY ${ROOT}
                OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT git)
  set(git "unknown")
endif()
set(text "#pragma once\n#define CLUSTERSIM_GIT_DESCRIBE \"${git}\"\n#define CLUSTERSIM_VERSION_STRING \"${VERSION} (${git})\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
