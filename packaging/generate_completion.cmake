# SPDX-License-Identifier: MIT
# Writes the bash completion for hipacm from the tool's --help: subcommands and their options.
# cmake -DHIPACM_EXE=<tool> -DOUTPUT=<file> -P generate_completion.cmake
cmake_policy(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/cli_help.cmake)
foreach(var HIPACM_EXE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "generate_completion.cmake needs -D${var}=...")
  endif()
endforeach()

# One table row per command, keyed by the words that name it ("hipacm cache stats"); ARGN holds
# the words after "hipacm".
function(hipacm_completion_rows key)
  hipacm_cli_help(text ${HIPACM_EXE} ${ARGN})
  hipacm_cli_subcommands(subcommands "${text}")
  hipacm_cli_options(options "${text}")
  list(JOIN subcommands " " subcommand_words)
  list(JOIN options " " option_words)
  set_property(GLOBAL APPEND_STRING PROPERTY hipacm_subcommand_rows
               "    [\"${key}\"]=\"${subcommand_words}\"\n")
  set_property(GLOBAL APPEND_STRING PROPERTY hipacm_option_rows
               "    [\"${key}\"]=\"${option_words}\"\n")
  foreach(sub IN LISTS subcommands)
    hipacm_completion_rows("${key} ${sub}" ${ARGN} ${sub})
  endforeach()
endfunction()

hipacm_completion_rows("hipacm")
get_property(subcommand_rows GLOBAL PROPERTY hipacm_subcommand_rows)
get_property(option_rows GLOBAL PROPERTY hipacm_option_rows)
configure_file(${CMAKE_CURRENT_LIST_DIR}/hipacm-completion.bash.in ${OUTPUT} @ONLY)
