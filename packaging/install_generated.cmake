# SPDX-License-Identifier: MIT
# Run by `cmake --install`: writes the man pages and the bash, zsh and fish completions from the
# built tool's --help into a directory of this install's own, and installs them. Made at install
# time, so that any build that built the tool installs them, whichever targets it built.
# Needs (set by the install(CODE) that includes it): HIPACM_EXE, HELP2MAN (empty: no man pages),
# VERSION, SETTINGS_DOC, SCRIPT_DIR, WORK_PARENT, MANDIR, BASH_COMPLETION_DIR, ZSH_COMPLETION_DIR,
# FISH_COMPLETION_DIR (relative to the install prefix, or absolute).
if(NOT EXISTS "${HIPACM_EXE}")
  message(STATUS "Not installing the man pages and completions: the hipacm tool was not built "
                 "(build the hipacm-cli target, or the default target, before installing)")
  return()
endif()

# One directory per install: two installs of one build tree (the install tests) may run at once.
string(RANDOM LENGTH 12 hipacm_tag)
set(work "${WORK_PARENT}/install-generated-${hipacm_tag}")
file(REMOVE_RECURSE "${work}")

function(hipacm_generate script)
  execute_process(COMMAND "${CMAKE_COMMAND}" ${ARGN} -P "${SCRIPT_DIR}/${script}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    file(REMOVE_RECURSE "${work}")
    message(FATAL_ERROR "${script} failed (${status}):\n${out}")
  endif()
endfunction()

function(hipacm_install_into dir)
  if(NOT IS_ABSOLUTE "${dir}")
    set(dir "${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
  file(INSTALL DESTINATION "${dir}" TYPE FILE FILES ${ARGN})
endfunction()

hipacm_generate(generate_completion.cmake "-DHIPACM_EXE=${HIPACM_EXE}"
                "-DOUTPUT_DIR=${work}/completions")
hipacm_install_into("${BASH_COMPLETION_DIR}" "${work}/completions/hipacm")
hipacm_install_into("${ZSH_COMPLETION_DIR}" "${work}/completions/_hipacm")
hipacm_install_into("${FISH_COMPLETION_DIR}" "${work}/completions/hipacm.fish")

if(HELP2MAN)
  hipacm_generate(generate_manpages.cmake "-DHIPACM_EXE=${HIPACM_EXE}" "-DHELP2MAN=${HELP2MAN}"
                  "-DVERSION=${VERSION}" "-DOUTPUT_DIR=${work}/man1"
                  "-DSETTINGS_DOC=${SETTINGS_DOC}")
  file(GLOB pages "${work}/man1/*.1")
  hipacm_install_into("${MANDIR}/man1" ${pages})
else()
  message(STATUS "Not installing the man pages: HIPACM_BUILD_MANPAGES is off, or help2man was "
                 "not found when hipacm was configured (apt-get install help2man, then configure "
                 "again)")
endif()
file(REMOVE_RECURSE "${work}")
