# SPDX-License-Identifier: MIT
# HIPACM_FUZZ=ON (clang only): libFuzzer and ASan+UBSan instrumentation everywhere, for tests/fuzz.
option(HIPACM_FUZZ "Build the libFuzzer targets of tests/fuzz instead of the test suite (clang)" OFF)
if(HIPACM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HIPACM_FUZZ needs clang: -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT HIPACM_SANITIZE STREQUAL "")
    message(FATAL_ERROR "HIPACM_FUZZ brings its own sanitizers; leave HIPACM_SANITIZE empty")
  endif()
  # fuzzer-no-link gives the libraries coverage feedback; only the targets link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # The fuzz tree builds the libraries and the targets only; the suite runs in the release tree.
  set(HIPACM_BUILD_TESTS OFF)
endif()
