// SPDX-License-Identifier: MIT
// real_hiprtc.h - the real hipRTC libraries a process uses: their entry points, found without
// hipRTC's headers (one shim serves ROCm 5, 6 and 7), and the dlsym that hands out the shim's.
#pragma once

#include <cstddef>

namespace hipacm::intercept {

using RtcResult = int;      // hiprtcResult: the same numbers in every ROCm
using RealProgram = void*;  // hiprtcProgram of the real library

inline constexpr RtcResult kRtcSuccess = 0;
inline constexpr RtcResult kRtcInvalidInput = 3;
inline constexpr RtcResult kRtcInvalidProgram = 4;
inline constexpr RtcResult kRtcInternalError = 11;

/// One real hipRTC library's entry points. Bitcode calls are null where the library has none
/// (ROCm 5).
struct RealHiprtc {
  RtcResult (*create)(RealProgram*, const char*, const char*, int, const char**, const char**);
  RtcResult (*destroy)(RealProgram*);
  RtcResult (*add_name_expression)(RealProgram, const char*);
  RtcResult (*compile)(RealProgram, int, const char**);
  RtcResult (*code_size)(RealProgram, std::size_t*);
  RtcResult (*code)(RealProgram, char*);
  RtcResult (*log_size)(RealProgram, std::size_t*);
  RtcResult (*log)(RealProgram, char*);
  RtcResult (*lowered_name)(RealProgram, const char*, const char**);
  RtcResult (*bitcode_size)(RealProgram, std::size_t*);
  RtcResult (*bitcode)(RealProgram, char*);
  const char* (*error_string)(RtcResult);
  RtcResult (*version)(int*, int*);
};

/// The hipRTC that a linked program's calls would reach without the shim (the next definition
/// after it), or null when the process has none.
const RealHiprtc* linked_hiprtc() noexcept;

using DlsymFn = void* (*)(void*, const char*);

/// libc's dlsym (null only when it cannot be found), for the interposer's tail call.
DlsymFn libc_dlsym() noexcept;

/// libc's dlsym, for lookups the shim makes itself.
void* real_dlsym(void* handle, const char* name) noexcept;

/// Whether this process is one of hipacm's own (hipacm-worker: a worker or the compile
/// service), which must reach hipRTC itself: the shim is inherited through LD_PRELOAD.
bool hipacm_process() noexcept;

}  // namespace hipacm::intercept
