# SPDX-License-Identifier: MIT
# Reads the hipacm tool's --help (CLI11's layout): its summary line, subcommands and options.
# Included by the man page and completion generators, which run at build time so that both follow
# the options the tool has now.

# The --help text of `hipacm <words...>`; a tool that cannot print it fails the build.
function(hipacm_cli_help out exe)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${exe} ${ARGN} --help
                  OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${exe} ${ARGN} --help' failed (${rc}): ${err}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The help text as a list of lines (semicolons kept out of the list separators).
function(hipacm_cli_help_lines out text)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# The first line: what the command does (for the top-level command, without its "hipacm: ").
function(hipacm_cli_summary out text)
  hipacm_cli_help_lines(lines "${text}")
  list(GET lines 0 first)
  string(REGEX REPLACE "^hipacm: " "" first "${first}")
  set(${out} "${first}" PARENT_SCOPE)
endfunction()

# Names listed under "Subcommands:".
function(hipacm_cli_subcommands out text)
  hipacm_cli_help_lines(lines "${text}")
  set(section "")
  set(names "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([A-Za-z][A-Za-z ]*):$")
      set(section "${CMAKE_MATCH_1}")
    elseif(section STREQUAL "Subcommands" AND line MATCHES "^  ([a-z][a-z0-9-]*)( |$)")
      list(APPEND names "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# The option spellings ("-a", "--arch", ...) of the entries whose line matches `pattern`, whose
# first group is the entry's comma-separated spellings; entries start a line at CLI11's two-space
# indent in any section but the examples.
function(hipacm_cli_option_entries out text pattern)
  hipacm_cli_help_lines(lines "${text}")
  set(section "")
  set(options "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([A-Za-z][A-Za-z ]*):$")
      set(section "${CMAKE_MATCH_1}")
    elseif(NOT section MATCHES "^Examples?$" AND line MATCHES "${pattern}")
      string(REPLACE "," ";" spellings "${CMAKE_MATCH_1}")
      foreach(spelling IN LISTS spellings)
        if(spelling MATCHES "^--?[A-Za-z0-9]")
          list(APPEND options "${spelling}")
        endif()
      endforeach()
    endif()
  endforeach()
  set(${out} "${options}" PARENT_SCOPE)
endfunction()

# Every option spelling.
function(hipacm_cli_options out text)
  hipacm_cli_option_entries(options "${text}" "^  (-[-A-Za-z0-9_,]+)")
  set(${out} "${options}" PARENT_SCOPE)
endfunction()

# The spellings of the options that take a value: CLI11 prints a type word after them
# ("--arch TEXT ...", "-j,--jobs UINT:INT", "--timeout TEXT=600"); flags have none.
function(hipacm_cli_value_options out text)
  hipacm_cli_option_entries(options "${text}" "^  (-[-A-Za-z0-9_,]+) [A-Z][A-Z]+([: =]|$)")
  set(${out} "${options}" PARENT_SCOPE)
endfunction()
