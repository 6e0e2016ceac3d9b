# Writes OUT (a header with the version string) only when it changed, so builds stay incremental.
execute_process(COMMAND git describe --always --dirty --abbrev=12 WORKING_DIRECTORY ${ROOT}
                OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT git)
  set(git "no git")
endif()
set(text "#pragma once\n#define CLUSTERSIM_VERSION_STRING \"${VERSION} (${git})\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
