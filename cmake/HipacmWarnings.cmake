# SPDX-License-Identifier: MIT
# Warning flags shared by every hipacm target: -Wall -Wextra -Werror with GCC and Clang.
function(hipacm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wformat=2)
  # GCC 12 at -O3 reports false -Wrestrict overlaps inside std::string concatenation (GCC PR
  # 105329): it stays a warning there, never a build failure.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
    target_compile_options(${target} PRIVATE -Wno-error=restrict)
  endif()
endfunction()
