// SPDX-License-Identifier: MIT
// nvrtc_entry.cpp - the NVRTC calls the shim defines, exported under NVRTC's names, so that a
// program linked against libnvrtc.so.12/.13 reaches them first: every call that takes a program
// (a program the shim made must never reach the real library) and nvrtcCreateProgram. The calls
// that name no program (nvrtcVersion, nvrtcGetErrorString, nvrtcGetSupportedArchs, the PCH heap
// size) are not defined: they reach the real library untouched.
#include <cstddef>
#include <string_view>

#include "intercept/rtc_entry.h"

using namespace hipacm::intercept;

namespace {
constexpr Rtc kNv = Rtc::kNvrtc;
}  // namespace

HIPACM_RTC_PROGRAM_CALLS(nvrtc, kNv)
// The outputs: PTX or CUBIN served for the arch hipacm compiled, the rest from the real program.
HIPACM_RTC_OUTPUT_CALLS(nvrtc, PTX, kNv, kPtx)
HIPACM_RTC_OUTPUT_CALLS(nvrtc, CUBIN, kNv, kCubin)
HIPACM_RTC_OUTPUT_CALLS(nvrtc, LTOIR, kNv, kLtoir)
HIPACM_RTC_OUTPUT_CALLS(nvrtc, OptiXIR, kNv, kOptixir)
HIPACM_RTC_OUTPUT_CALLS(nvrtc, NVVM, kNv, kNvvm)

HIPACM_SHIM_API RtcResult nvrtcGetPCHCreateStatus(RealProgram prog) {
  return nvrtc_pch_create_status(prog);
}

HIPACM_SHIM_API RtcResult nvrtcGetPCHHeapSizeRequired(RealProgram prog, std::size_t* size) {
  return nvrtc_pch_heap_size_required(prog, size);
}

HIPACM_SHIM_API RtcResult nvrtcSetFlowCallback(RealProgram prog, int (*callback)(void*, void*),
                                               void* payload) {
  return nvrtc_set_flow_callback(prog, callback, payload);
}

namespace hipacm::intercept {

void* nvrtc_program_call(std::string_view name) noexcept {
  static const ProgramCall kCalls[] = {
      HIPACM_RTC_PROGRAM_CALL_ROWS(nvrtc),         HIPACM_RTC_OUTPUT_CALL_ROWS(nvrtc, PTX),
      HIPACM_RTC_OUTPUT_CALL_ROWS(nvrtc, CUBIN),   HIPACM_RTC_OUTPUT_CALL_ROWS(nvrtc, LTOIR),
      HIPACM_RTC_OUTPUT_CALL_ROWS(nvrtc, OptiXIR), HIPACM_RTC_OUTPUT_CALL_ROWS(nvrtc, NVVM),
      HIPACM_RTC_CALL(nvrtcGetPCHCreateStatus),    HIPACM_RTC_CALL(nvrtcGetPCHHeapSizeRequired),
      HIPACM_RTC_CALL(nvrtcSetFlowCallback),
  };
  return find_program_call(kCalls, name);
}

}  // namespace hipacm::intercept
