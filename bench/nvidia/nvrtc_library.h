// SPDX-License-Identifier: MIT
// nvrtc_library.h - plain NVRTC, loaded with dlopen: the serial baseline every variant is
// compared against.
#pragma once

#include <cstddef>
#include <string>

#include "kernel_set_dir.h"
#include "support/libraries/lazy_library.h"

namespace hipacm::bench::nvidia {

// NVRTC's C API, declared here so the benchmark builds without the CUDA toolkit.
using NvrtcResult = int;
using NvrtcProgram = void*;

// X-macro: (name, return type, parameter list) of the entry points the baseline calls.
#define HIPACM_BENCH_NVRTC_SYMBOLS(X)                                                       \
  X(nvrtcVersion, NvrtcResult, (int*, int*))                                                \
  X(nvrtcCreateProgram, NvrtcResult,                                                        \
    (NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*)) \
  X(nvrtcDestroyProgram, NvrtcResult, (NvrtcProgram*))                                      \
  X(nvrtcCompileProgram, NvrtcResult, (NvrtcProgram, int, const char* const*))              \
  X(nvrtcGetCUBINSize, NvrtcResult, (NvrtcProgram, std::size_t*))                           \
  X(nvrtcGetCUBIN, NvrtcResult, (NvrtcProgram, char*))                                      \
  X(nvrtcGetProgramLogSize, NvrtcResult, (NvrtcProgram, std::size_t*))                      \
  X(nvrtcGetProgramLog, NvrtcResult, (NvrtcProgram, char*))                                 \
  X(nvrtcAddNameExpression, NvrtcResult, (NvrtcProgram, const char*))                       \
  X(nvrtcGetErrorString, const char*, (NvrtcResult))

struct NvrtcEntryPoints {
  HIPACM_BENCH_NVRTC_SYMBOLS(HIPACM_LIBRARY_FIELD)
};

/// NVRTC for this object's lifetime (closed with it).
class NvrtcLibrary {
 public:
  /// Loads $HIPACM_NVRTC_LIBRARY, else libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.
  /// Throws std::runtime_error naming every path tried when none loads.
  NvrtcLibrary();

  /// The candidate that loaded, as the list spells it.
  const std::string& path() const { return library_.candidate; }
  std::string version() const;

  /// Compiles one kernel to a CUBIN for `arch` (e.g. "sm_90") and returns its size. Throws
  /// std::runtime_error with NVRTC's status and log on failure.
  std::size_t compile_to_cubin(const SetKernel& kernel, const std::string& arch) const;

 private:
  backend::BoundLibrary<NvrtcEntryPoints> library_;
};

}  // namespace hipacm::bench::nvidia
