# SPDX-License-Identifier: MIT
# Source and build paths written as "." in what the compiler emits (debug info, __FILE__), so that
# a built library or package holds no path of the machine that built it.
option(HIPACM_FILE_PREFIX_MAP
       "Map the source and build directories to '.' in debug info and __FILE__ (-ffile-prefix-map)"
       ON)
if(HIPACM_FILE_PREFIX_MAP)
  # The build directory last: GCC and clang try the last given map first, and the build directory
  # often lies inside the source directory (build/release), where the source's map would leave
  # "./build/release" behind.
  add_compile_options("-ffile-prefix-map=${CMAKE_SOURCE_DIR}=."
                      "-ffile-prefix-map=${CMAKE_BINARY_DIR}=.")
endif()
