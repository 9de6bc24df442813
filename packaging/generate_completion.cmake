# SPDX-License-Identifier: MIT
# Writes hipacm's bash, zsh and fish completions from the tool's --help: its subcommands, their
# options, which options take a value, and (at completion time) the archs for --arch.
# cmake -DHIPACM_EXE=<tool> -DOUTPUT_DIR=<dir> -P generate_completion.cmake
#   writes DIR/hipacm (bash), DIR/_hipacm (zsh) and DIR/hipacm.fish (fish)
cmake_policy(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/cli_help.cmake)
foreach(var HIPACM_EXE OUTPUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "generate_completion.cmake needs -D${var}=...")
  endif()
endforeach()

function(hipacm_append property text)
  set_property(GLOBAL APPEND_STRING PROPERTY ${property} "${text}")
endfunction()

# fish reads single-quoted words literally but for \' and \\.
function(hipacm_fish_quote out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "'" "\\'" text "${text}")
  set(${out} "'${text}'" PARENT_SCOPE)
endfunction()

# Rows of every shell's tables for one command, keyed by the words that name it ("hipacm cache
# stats"); ARGN holds the words after "hipacm". Then the same for its subcommands.
function(hipacm_completion_rows key)
  hipacm_cli_help(text ${HIPACM_EXE} ${ARGN})
  hipacm_cli_subcommands(subcommands "${text}")
  hipacm_cli_options(options "${text}")
  hipacm_cli_value_options(value_options "${text}")
  list(JOIN subcommands " " subcommand_words)
  list(JOIN options " " option_words)
  list(JOIN value_options " " value_words)
  # `hipacm help [CMD [SUBCMD]]` is read before the tool's parser, so no --help lists it: it is
  # offered beside the commands, and after it the same command words as without it.
  if(key STREQUAL "hipacm")
    set(subcommand_words "${subcommand_words} help")
  endif()
  foreach(table subcommand option value)
    hipacm_append(bash_${table}_rows "    [\"${key}\"]=\"${${table}_words}\"\n")
    hipacm_append(zsh_${table}_rows "    '${key}' '${${table}_words}'\n")
  endforeach()
  if(subcommands)
    string(REGEX REPLACE "^hipacm" "hipacm help" help_key "${key}")
    list(JOIN subcommands " " help_words)
    hipacm_append(bash_subcommand_rows "    [\"${help_key}\"]=\"${help_words}\"\n")
    hipacm_append(zsh_subcommand_rows "    '${help_key}' '${help_words}'\n")
    hipacm_fish_quote(help_condition "__hipacm_is \"${help_key}\"")
    hipacm_append(fish_rows "complete -c hipacm -n ${help_condition} -f -a '${help_words}'\n")
    hipacm_append(fish_subcommand_cases " '${help_key}'")
  endif()

  # fish: a subcommand's own line, offered where its parent command is typed, with the summary
  # its help begins with; then one line per option spelling.
  if(NOT key STREQUAL "hipacm")
    string(REGEX REPLACE " [^ ]+$" "" parent "${key}")
    string(REGEX REPLACE "^.* " "" word "${key}")
    hipacm_fish_quote(parent_condition "__hipacm_is \"${parent}\"")
    hipacm_cli_summary(summary "${text}")
    hipacm_fish_quote(summary "${summary}")
    hipacm_append(fish_rows
                  "complete -c hipacm -n ${parent_condition} -f -a ${word} -d ${summary}\n")
    hipacm_append(fish_subcommand_cases " '${key}'")
  endif()
  hipacm_fish_quote(condition "__hipacm_is \"${key}\"")
  foreach(option IN LISTS options)
    if(option MATCHES "^--(.+)")
      set(spelling "-l ${CMAKE_MATCH_1}")
    elseif(option MATCHES "^-(.)$")
      set(spelling "-s ${CMAKE_MATCH_1}")
    else()
      string(SUBSTRING "${option}" 1 -1 old_style)
      set(spelling "-o ${old_style}")
    endif()
    set(takes "")
    if(option IN_LIST value_options)
      if(option STREQUAL "--arch" OR option STREQUAL "-a")
        set(takes " -x -a '(__hipacm_archs)'")
      else()
        set(takes " -r")
      endif()
    endif()
    hipacm_append(fish_rows "complete -c hipacm -n ${condition} ${spelling}${takes}\n")
  endforeach()

  foreach(sub IN LISTS subcommands)
    hipacm_completion_rows("${key} ${sub}" ${ARGN} ${sub})
  endforeach()
endfunction()

hipacm_completion_rows("hipacm")
hipacm_append(fish_rows "complete -c hipacm -n '__hipacm_is \"hipacm\"' -f -a help -d 'Print the help of a command: hipacm help CMD [SUBCMD]'\n")
foreach(name bash_subcommand_rows bash_option_rows bash_value_rows zsh_subcommand_rows
             zsh_option_rows zsh_value_rows fish_rows fish_subcommand_cases)
  get_property(${name} GLOBAL PROPERTY ${name})
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/hipacm-completion.bash.in ${OUTPUT_DIR}/hipacm @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/hipacm-completion.zsh.in ${OUTPUT_DIR}/_hipacm @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/hipacm-completion.fish.in ${OUTPUT_DIR}/hipacm.fish
               @ONLY)
