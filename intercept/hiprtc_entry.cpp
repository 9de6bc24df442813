// SPDX-License-Identifier: MIT
// hiprtc_entry.cpp - the hipRTC calls the shim defines, exported under hipRTC's names, so that a
// program linked against hipRTC (libamdhip64.so.5, libhiprtc.so.6/.7) reaches them first.
#include <string_view>

#include "intercept/rtc_entry.h"

using namespace hipacm::intercept;

namespace {
constexpr Rtc kHip = Rtc::kHiprtc;
}  // namespace

HIPACM_RTC_PROGRAM_CALLS(hiprtc, kHip)
HIPACM_RTC_OUTPUT_CALLS(hiprtc, Code, kHip, kHipCode)
// Not served (ROCm 6 and 7 only), but they take a program: the real one, made for them.
HIPACM_RTC_OUTPUT_CALLS(hiprtc, Bitcode, kHip, kHipBitcode)

// The calls that name no program answer from the linked library; a library a program dlopens
// gets copies of its own (real_rtc.cpp).
HIPACM_SHIM_API const char* hiprtcGetErrorString(RtcResult result) {
  const RealRtc* api = linked_rtc(kHip);
  return api != nullptr ? api->error_string(result) : "HIPRTC_ERROR_INTERNAL_ERROR";
}

HIPACM_SHIM_API RtcResult hiprtcVersion(int* major, int* minor) {
  const RealRtc* api = linked_rtc(kHip);
  return api != nullptr ? api->version(major, minor) : kRtcInternalError;
}

namespace hipacm::intercept {

void* hiprtc_program_call(std::string_view name) noexcept {
  static const ProgramCall kCalls[] = {
      HIPACM_RTC_PROGRAM_CALL_ROWS(hiprtc),
      HIPACM_RTC_OUTPUT_CALL_ROWS(hiprtc, Code),
      HIPACM_RTC_OUTPUT_CALL_ROWS(hiprtc, Bitcode),
  };
  return find_program_call(kCalls, name);
}

}  // namespace hipacm::intercept
