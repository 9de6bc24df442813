# SPDX-License-Identifier: MIT
# Warning flags shared by every hipacm target; HIPACM_WERROR=ON (CI) makes them errors.
# Off by default so that a newer compiler's new warning cannot break a user's or a packager's build.
option(HIPACM_WERROR "Treat compiler warnings as errors (CI turns it on)" OFF)

# -Werror when HIPACM_WERROR is on, for targets that pick their own warning flags.
function(hipacm_warnings_as_errors target)
  if(HIPACM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(hipacm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align
                                           -Wformat=2)
  hipacm_warnings_as_errors(${target})
endfunction()
