# SPDX-License-Identifier: MIT
# Writes hipacm.pc for the prefix the tree is being installed into, run by `cmake --install`:
# configure time cannot know a prefix given later with --prefix.
# Needs CMAKE_INSTALL_PREFIX (set by the install), HIPACM_PC_TEMPLATE, HIPACM_PC_OUTPUT, LIBDIR,
# INCLUDEDIR and PROJECT_VERSION.
set(pc_prefix "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  string(TOLOWER "${dir}" name)
  if(IS_ABSOLUTE "${${dir}}")
    set(pc_${name} "${${dir}}")
  else()
    set(pc_${name} "\${prefix}/${${dir}}")
  endif()
endforeach()
configure_file("${HIPACM_PC_TEMPLATE}" "${HIPACM_PC_OUTPUT}" @ONLY)
