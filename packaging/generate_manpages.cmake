# SPDX-License-Identifier: MIT
# Writes hipacm(1) and hipacm-<subcommand>(1) with help2man from the tool's --help, one page per
# subcommand the tool lists; a page's subcommands (cache's) get their own --help in it too.
# hipacm(1) gets an ENVIRONMENT section made from the users' table of docs/SETTINGS.md, which a test
# keeps equal to the list of settings (support/setting_list.cpp); every page gets an EXIT STATUS
# section made from its help's "Exit status:" line.
# cmake -DHIPACM_EXE=<tool> -DHELP2MAN=<help2man> -DVERSION=<x.y.z> -DOUTPUT_DIR=<dir>
#       -DSETTINGS_DOC=<docs/SETTINGS.md> -P generate_manpages.cmake
cmake_policy(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/cli_help.cmake)
foreach(var HIPACM_EXE HELP2MAN VERSION OUTPUT_DIR SETTINGS_DOC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "generate_manpages.cmake needs -D${var}=...")
  endif()
endforeach()
set(work_dir ${OUTPUT_DIR}/help2man)
file(REMOVE_RECURSE ${work_dir})
file(MAKE_DIRECTORY ${work_dir})
file(GLOB stale ${OUTPUT_DIR}/*.1)
if(stale)
  file(REMOVE ${stale})
endif()

hipacm_cli_help(top_help ${HIPACM_EXE})
hipacm_cli_subcommands(subcommands "${top_help}")
set(pages hipacm)
foreach(sub IN LISTS subcommands)
  list(APPEND pages hipacm-${sub})
endforeach()
list(TRANSFORM pages APPEND "(1)" OUTPUT_VARIABLE see_also)
list(JOIN see_also ", " see_also)

# The [ENVIRONMENT] section of an h2m include: one tagged paragraph per row of the "For users"
# table ("| `NAME` | takes | default | stands in for | meaning |"), backticks dropped. Semicolons
# and brackets would split or join CMake list items, so they travel as placeholders.
function(hipacm_environment_section out_var)
  file(READ ${SETTINGS_DOC} text)
  string(REPLACE ";" "@SEMI@" text "${text}")
  string(REPLACE "[" "@OPEN@" text "${text}")
  string(REPLACE "]" "@CLOSE@" text "${text}")
  string(REPLACE "`" "" text "${text}")
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(section "[ENVIRONMENT]\n")
  set(in_users OFF)
  foreach(line IN LISTS lines)
    if(line MATCHES "^## ")
      if(line STREQUAL "## For users")
        set(in_users ON)
      else()
        set(in_users OFF)
      endif()
    elseif(in_users AND line MATCHES "^\\| (HIPACM_[A-Z0-9_]+) \\| (.*) \\| (.*) \\| (.*) \\| (.*) \\|$")
      set(name ${CMAKE_MATCH_1})
      set(takes "${CMAKE_MATCH_2}")
      set(default "${CMAKE_MATCH_3}")
      set(field "${CMAKE_MATCH_4}")
      set(meaning "${CMAKE_MATCH_5}")
      string(APPEND section ".TP\n.B ${name}\n${meaning}. Takes ${takes}@SEMI@ default: ${default}")
      if(NOT field STREQUAL "-")
        string(APPEND section "@SEMI@ stands in for hipacm_mode_config.${field}")
      endif()
      string(APPEND section ".\n")
    endif()
  endforeach()
  string(APPEND section "\nThe full list, with the variables for tests, is docs/SETTINGS.md.\n")
  string(REPLACE "@SEMI@" ";" section "${section}")
  string(REPLACE "@OPEN@" "[" section "${section}")
  string(REPLACE "@CLOSE@" "]" section "${section}")
  set(${out_var} "${section}" PARENT_SCOPE)
endfunction()
hipacm_environment_section(environment_section)

# The [EXIT STATUS] section of an h2m include, from the "Exit status: 0 ok, 1 failures, ..." line
# that ends every command's help (tools/common/commands.h): one tagged paragraph per status; words
# before the first number ("COMMAND's own;") make a paragraph of their own. Empty when the help
# has no such line.
function(hipacm_exit_status_section out_var text)
  set(${out_var} "" PARENT_SCOPE)
  string(FIND "${text}" "Exit status: " at)
  if(at EQUAL -1)
    return()
  endif()
  math(EXPR at "${at} + 13")
  string(SUBSTRING "${text}" ${at} -1 statuses)
  string(REGEX REPLACE "[ \n]+" " " statuses "${statuses}")
  string(STRIP "${statuses}" statuses)
  string(REGEX REPLACE "\\.$" "" statuses "${statuses}")
  string(REPLACE ";" "@SEMI@" statuses "${statuses}")
  string(REPLACE "\\" "\\e" statuses "${statuses}")
  # Each status starts at a number (or "128+N") after the start or after ", " or "; ".
  string(REGEX REPLACE "(^|, |@SEMI@ )([0-9]+(\\+N)? )" "\n\\2" statuses "${statuses}")
  string(REPLACE "\n" ";" items "${statuses}")
  set(section "[EXIT STATUS]\n")
  foreach(item IN LISTS items)
    string(REGEX REPLACE "@SEMI@$" "" item "${item}")
    string(REPLACE "@SEMI@" ";" item "${item}")
    if(item MATCHES "^([0-9]+(\\+N)?) (.*)$")
      string(APPEND section ".TP\n.B ${CMAKE_MATCH_1}\n${CMAKE_MATCH_3}.\n")
    elseif(NOT item STREQUAL "")
      string(APPEND section ".PP\n${item}.\n")
    endif()
  endforeach()
  set(${out_var} "${section}" PARENT_SCOPE)
endfunction()

# The lines of a page's script that print the helps of the subcommands under `help_text` (the
# help of `hipacm ARGN`), indented, and theirs below them (`cache remote push`'s options too).
function(hipacm_nested_helps out_var help_text indent)
  hipacm_cli_subcommands(nested "${help_text}")
  list(JOIN ARGN " " words)
  set(script "")
  foreach(sub IN LISTS nested)
    string(APPEND script "echo\necho '${indent}${words} ${sub}:'\n"
                         "\"${HIPACM_EXE}\" ${words} ${sub} --help | sed 's/^/${indent}  /' || exit 1\n")
    hipacm_cli_help(sub_text ${HIPACM_EXE} ${ARGN} ${sub})
    hipacm_nested_helps(deeper "${sub_text}" "${indent}  " ${ARGN} ${sub})
    string(APPEND script "${deeper}")
  endforeach()
  set(${out_var} "${script}" PARENT_SCOPE)
endfunction()

# help2man runs a program by the page's name with --help: a small script that prints the
# subcommand's help (and its own subcommands' helps, at every depth, so that their options are
# documented too).
function(hipacm_write_page page)
  hipacm_cli_help(text ${HIPACM_EXE} ${ARGN})
  hipacm_cli_summary(summary "${text}")
  set(script "#!/bin/sh\n\"${HIPACM_EXE}\" ${ARGN} --help || exit 1\n")
  hipacm_nested_helps(nested_script "${text}" "" ${ARGN})
  string(APPEND script "${nested_script}")
  file(WRITE ${work_dir}/${page} "${script}")
  file(CHMOD ${work_dir}/${page} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  list(REMOVE_ITEM see_also "${page}(1)")
  string(REPLACE "${page}(1), " "" others "${see_also}, ")
  string(REGEX REPLACE ", $" "" others "${others}")
  set(include_text "[SEE ALSO]\n${others}\n")
  if(page STREQUAL "hipacm")
    string(APPEND include_text "${environment_section}")
  endif()
  hipacm_exit_status_section(exit_status "${text}")
  if(exit_status STREQUAL "")
    message(FATAL_ERROR "'hipacm ${ARGN} --help' has no \"Exit status:\" line for ${page}(1)")
  endif()
  string(APPEND include_text "${exit_status}")
  file(WRITE ${work_dir}/${page}.h2m "${include_text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
                          ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION}
                          --name=${summary} --section=1 --include=${work_dir}/${page}.h2m
                          --output=${OUTPUT_DIR}/${page}.1 ${work_dir}/${page}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man failed for ${page}: ${err}")
  endif()
endfunction()

hipacm_write_page(hipacm)
foreach(sub IN LISTS subcommands)
  hipacm_write_page(hipacm-${sub} ${sub})
endforeach()
file(REMOVE_RECURSE ${work_dir})
