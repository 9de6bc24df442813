// SPDX-License-Identifier: MIT
// nvrtc_api.h - the NVRTC entry points, loaded at run time with dlopen/dlsym.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/rtc/rtc_shared.h"
#include "support/failure.h"
#include "support/libraries/lazy_library.h"

namespace hipacm::backend {

// Mirrors of NVRTC's C types, so the plugin builds and loads without CUDA.
using nvrtc_result = int;  // nvrtcResult; 0 = NVRTC_SUCCESS
using nvrtc_program = struct nvrtc_program_opaque*;

// kNvrtcSuccess, kNvrtcErrorCompilation, ... (the list is HIPACM_RTC_RESULT_CODES).
#define HIPACM_NVRTC_RESULT_CODE(name, value) inline constexpr nvrtc_result kNvrtc##name = value;
HIPACM_RTC_RESULT_CODES(HIPACM_NVRTC_RESULT_CODE)
#undef HIPACM_NVRTC_RESULT_CODE

// X-macro: (name, return type, parameter list), as for hipRTC.
#define HIPACM_NVRTC_SYMBOLS(X)                                                              \
  HIPACM_RTC_SHARED_SYMBOLS(X, nvrtc, nvrtc_result, nvrtc_program)                           \
  X(nvrtcGetNumSupportedArchs, nvrtc_result, (int*))                                         \
  X(nvrtcGetSupportedArchs, nvrtc_result, (int*))                                            \
  X(nvrtcCreateProgram, nvrtc_result,                                                        \
    (nvrtc_program*, const char*, const char*, int, const char* const*, const char* const*)) \
  X(nvrtcCompileProgram, nvrtc_result, (nvrtc_program, int, const char* const*))             \
  X(nvrtcGetCUBINSize, nvrtc_result, (nvrtc_program, std::size_t*))                          \
  X(nvrtcGetCUBIN, nvrtc_result, (nvrtc_program, char*))                                     \
  X(nvrtcGetPTXSize, nvrtc_result, (nvrtc_program, std::size_t*))                            \
  X(nvrtcGetPTX, nvrtc_result, (nvrtc_program, char*))

/// The loaded NVRTC library. Lives until process exit once loaded.
struct NvrtcApi {
  HIPACM_NVRTC_SYMBOLS(HIPACM_LIBRARY_FIELD)
  std::string library_path;          ///< the file that was opened
  std::string version;               ///< "major.minor" from nvrtcVersion
  std::vector<int> supported_archs;  ///< e.g. {75, 80, ..., 90, 100}
};

/// A loaded NVRTC: the handle keeps the library referenced, the table holds
/// its entry points.
using LoadedNvrtc = BoundLibrary<NvrtcApi>;

/// Loads NVRTC once per process (thread-safe). NVRTC is thread-safe, so
/// unlike hipRTC nothing here or in its compiles takes a process-wide lock.
/// Candidates: nvrtc_library_candidates(). A failure (BACKEND_UNAVAILABLE) when
/// none opens or the opened one lacks a symbol. The table lives until process exit.
Expected<const NvrtcApi*> load_nvrtc();

/// $HIPACM_NVRTC_LIBRARY alone when set and non-empty; otherwise
/// libnvrtc.so.13, .12, .11 on the default search path, then the same names in
/// $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
std::vector<std::string> nvrtc_library_candidates();

/// The uncached loader behind load_nvrtc: opens the candidates in order and
/// stops at the first that opens.
Expected<LoadedNvrtc> load_nvrtc_from(const std::vector<std::string>& candidates);

/// The NVRTC in the file `file` (a resolved path), loaded once per process and file: what a CUDA
/// program's own NVRTC is compiled with (`hipacm run`'s raw NVRTC requests), which may be another
/// release than load_nvrtc()'s or a pip wheel's copy.
/// The file must be a regular file owned by this user or root and writable by no one else (a
/// request names it, and a worker runs its code). At most 8 files per process. A failure
/// (BACKEND_UNAVAILABLE) otherwise, or when it does not open as NVRTC.
Expected<const NvrtcApi*> load_nvrtc_file(const std::string& file);

/// The compiler's identity for cache keys: "nvrtc 13.0 (/path/libnvrtc.so.13)",
/// or "nvrtc unavailable" when it cannot be loaded.
std::string nvrtc_version_string();

/// "NVRTC_ERROR_COMPILATION" etc. from a local table.
std::string nvrtc_result_name(nvrtc_result result);

}  // namespace hipacm::backend
