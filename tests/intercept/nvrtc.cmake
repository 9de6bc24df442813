# SPDX-License-Identifier: MIT
# `hipacm run`'s NVRTC tests (label `intercept`), included from this folder's CMakeLists.txt: an
# ordinary NVRTC client with no hipacm code, built linked against libnvrtc and again dlopening it
# by soname (and its Python twin, clients/nvrtc_ctypes_client.py), and the pytest suite that runs
# them plain and under `hipacm run` over clients/nvrtc_kernels/. Built only where
# CUDA's NVRTC header and library are found ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda).
set(hipacm_cuda_hints $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda)
find_path(HIPACM_NVRTC_INCLUDE_DIR nvrtc.h HINTS ${hipacm_cuda_hints} PATH_SUFFIXES include)
find_library(HIPACM_NVRTC_LINK_LIBRARY NAMES nvrtc HINTS ${hipacm_cuda_hints}
             PATH_SUFFIXES lib64 lib)
if(NOT HIPACM_NVRTC_INCLUDE_DIR OR NOT HIPACM_NVRTC_LINK_LIBRARY)
  message(STATUS "NVRTC's header or library was not found: the NVRTC intercept tests are not built")
  return()
endif()

# Linked: calls NVRTC by name (the library found through its RUNPATH, as a CUDA build links it).
add_executable(hipacm_intercept_nvrtc_linked_client clients/nvrtc_client.cpp)
target_include_directories(hipacm_intercept_nvrtc_linked_client SYSTEM
                           PRIVATE ${HIPACM_NVRTC_INCLUDE_DIR})
target_link_libraries(hipacm_intercept_nvrtc_linked_client
                      PRIVATE ${HIPACM_NVRTC_LINK_LIBRARY} PkgConfig::NETTLE
                              nlohmann_json::nlohmann_json Threads::Threads)
hipacm_set_warnings(hipacm_intercept_nvrtc_linked_client)

# dlopen by soname + dlsym, as CuPy and PyTorch do: links no NVRTC (the header gives the types).
add_executable(hipacm_intercept_nvrtc_dlopen_client clients/nvrtc_client.cpp)
target_compile_definitions(hipacm_intercept_nvrtc_dlopen_client PRIVATE NVRTC_CLIENT_DLOPEN)
target_include_directories(hipacm_intercept_nvrtc_dlopen_client SYSTEM
                           PRIVATE ${HIPACM_NVRTC_INCLUDE_DIR})
target_link_libraries(hipacm_intercept_nvrtc_dlopen_client
                      PRIVATE ${CMAKE_DL_LIBS} PkgConfig::NETTLE nlohmann_json::nlohmann_json
                              Threads::Threads)
hipacm_set_warnings(hipacm_intercept_nvrtc_dlopen_client)

add_custom_target(hipacm_intercept_nvrtc_clients)
add_dependencies(hipacm_intercept_nvrtc_clients hipacm_intercept_nvrtc_linked_client
                 hipacm_intercept_nvrtc_dlopen_client)

# A sanitizer build's shim cannot be preloaded into uninstrumented programs: release only.
if(HIPACM_SANITIZE STREQUAL "")
  get_filename_component(hipacm_nvrtc_dir ${HIPACM_NVRTC_LINK_LIBRARY} DIRECTORY)
  # NVRTC 12 beside the system's 13, as scripts/nvrtc12.sh (run by .ci/install-deps) unpacks it.
  set(HIPACM_TEST_NVRTC12_DIR "/var/cache/hipacm/nvrtc-12/root/usr/lib/x86_64-linux-gnu"
      CACHE PATH "a folder holding libnvrtc.so.12 for the NVRTC intercept tests")
  hipacm_add_pytest(intercept.run_nvrtc ${CMAKE_CURRENT_SOURCE_DIR}/test_run_nvrtc.py
                    LABELS intercept
                    ENVIRONMENT "HIPACM_CLI=$<TARGET_FILE:hipacm-cli>"
                                "HIPACM_INTERCEPT_CLIENTS=${CMAKE_CURRENT_BINARY_DIR}"
                                "HIPACM_TEST_NVRTC_DIR=${hipacm_nvrtc_dir}"
                                "HIPACM_TEST_NVRTC12_DIR=${HIPACM_TEST_NVRTC12_DIR}")
endif()
