# SPDX-License-Identifier: MIT
# HIPACM_ABI_MAJOR and HIPACM_ABI_MINOR, read from include/hipacm/hipacm.h (the one place they are
# declared): the library's file name and SONAME follow the ABI, not the project version.
set(hipacm_abi_header ${PROJECT_SOURCE_DIR}/include/hipacm/hipacm.h)
file(STRINGS ${hipacm_abi_header} hipacm_abi_lines
     REGEX "^#define HIPACM_ABI_VERSION_(MAJOR|MINOR) +[0-9]+ *$")
foreach(line IN LISTS hipacm_abi_lines)
  if(line MATCHES "^#define HIPACM_ABI_VERSION_(MAJOR|MINOR) +([0-9]+)")
    set(HIPACM_ABI_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT DEFINED HIPACM_ABI_MAJOR OR NOT DEFINED HIPACM_ABI_MINOR)
  message(FATAL_ERROR "no HIPACM_ABI_VERSION_MAJOR/MINOR #defines in ${hipacm_abi_header}")
endif()
# A new ABI version in the header reconfigures, so the library's name follows it.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${hipacm_abi_header})
unset(hipacm_abi_lines)
