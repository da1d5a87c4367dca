# Writes OUTPUT with the commit and dirty flag of SOURCE_DIR; runs at every build, rewrites only on change.
set(sha "unknown")
set(dirty "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  # Outputs in results/ do not change what was built: only sources make a build dirty.
  execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain --untracked-files=no -- . ":(exclude)results"
                  ":(exclude)runs" WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status)
    set(dirty "true")
  else()
    set(dirty "false")
  endif()
endif()
set(content "#pragma once\n#define ATTNLAB_GIT_SHA \"${sha}\"\n#define ATTNLAB_GIT_DIRTY \"${dirty}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
