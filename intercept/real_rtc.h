// SPDX-License-Identifier: MIT
// real_rtc.h - the real hipRTC and NVRTC libraries a process uses: their entry points, found
// without their headers (one shim serves ROCm 5, 6 and 7, NVRTC 12 and 13), and the dlsym that
// hands out the shim's.
#pragma once

#include <cstddef>
#include <string_view>

namespace hipacm::intercept {

using RtcResult = int;      // hiprtcResult / nvrtcResult: the same numbers for what the shim uses
using RealProgram = void*;  // hiprtcProgram / nvrtcProgram of the real library

inline constexpr RtcResult kRtcSuccess = 0;
inline constexpr RtcResult kRtcOutOfMemory = 1;
inline constexpr RtcResult kRtcInvalidInput = 3;
inline constexpr RtcResult kRtcInvalidProgram = 4;
inline constexpr RtcResult kRtcInternalError = 11;

/// The runtime compilers the shim stands in for.
enum class Rtc { kHiprtc = 0, kNvrtc = 1 };
inline constexpr std::size_t kRtcCount = 2;

/// What a compiled program hands out through a pair of size and copy calls.
enum Output : std::size_t {
  kHipCode,     // hiprtcGetCode
  kHipBitcode,  // hiprtcGetBitcode (ROCm 6 and 7)
  kPtx,         // nvrtcGetPTX
  kCubin,       // nvrtcGetCUBIN
  kLtoir,       // nvrtcGetLTOIR
  kOptixir,     // nvrtcGetOptiXIR
  kNvvm,        // nvrtcGetNVVM (NVRTC 12 only)
  kOutputs
};

/// One real library's entry points. An output call is null where the library has none.
struct RealRtc {
  Rtc rtc;
  RtcResult (*create)(RealProgram*, const char*, const char*, int, const char**, const char**);
  RtcResult (*destroy)(RealProgram*);
  RtcResult (*add_name_expression)(RealProgram, const char*);
  RtcResult (*compile)(RealProgram, int, const char**);
  RtcResult (*log_size)(RealProgram, std::size_t*);
  RtcResult (*log)(RealProgram, char*);
  RtcResult (*lowered_name)(RealProgram, const char*, const char**);
  RtcResult (*output_size[kOutputs])(RealProgram, std::size_t*);
  RtcResult (*output[kOutputs])(RealProgram, char*);
  // NVRTC's other calls on a program, never served (null for hipRTC).
  RtcResult (*pch_create_status)(RealProgram);
  RtcResult (*pch_heap_size_required)(RealProgram, std::size_t*);
  RtcResult (*set_flow_callback)(RealProgram, int (*)(void*, void*), void*);
  // Calls that name no program.
  const char* (*error_string)(RtcResult);
  RtcResult (*version)(int*, int*);
  RtcResult (*num_supported_archs)(int*);  // NVRTC
  RtcResult (*supported_archs)(int*);      // NVRTC
};

/// The library of `rtc` that a linked program's calls would reach without the shim (the next
/// definition after it), or null when the process has none.
const RealRtc* linked_rtc(Rtc rtc) noexcept;

/// linked_rtc(rtc), else the first library of `rtc` a program has dlopened and looked calls up
/// in, else null: where a call on a handle the shim did not make (null, or a program already
/// destroyed) goes, so that the program gets the library's own answer to it.
const RealRtc* any_real_rtc(Rtc rtc) noexcept;

/// The shim's exported definition of a call of `rtc` that takes a program (hiprtcGetCode,
/// nvrtcGetPTX, ...), or null for a name it does not serve (hiprtc_entry.cpp, nvrtc_entry.cpp).
void* hiprtc_program_call(std::string_view name) noexcept;
void* nvrtc_program_call(std::string_view name) noexcept;

using DlsymFn = void* (*)(void*, const char*);

/// libc's dlsym (null only when it cannot be found), for the interposer's tail call.
DlsymFn libc_dlsym() noexcept;

/// libc's dlsym, for lookups the shim makes itself.
void* real_dlsym(void* handle, const char* name) noexcept;

/// Whether this process is one of hipacm's own (hipacm-worker: a worker or the compile
/// service), which must reach the compilers themselves: the shim is inherited through LD_PRELOAD.
bool hipacm_process() noexcept;

}  // namespace hipacm::intercept
