// SPDX-License-Identifier: MIT
// hiprtc_entry.cpp - the hipRTC calls the shim defines, exported under hipRTC's names, so that a
// program linked against hipRTC (libamdhip64.so.5, libhiprtc.so.6/.7) reaches them first.
#include <cstddef>
#include <string_view>

#include "intercept/program.h"
#include "intercept/real_rtc.h"

using namespace hipacm::intercept;

#define HIPACM_SHIM_API extern "C" __attribute__((visibility("default")))

namespace {
constexpr Rtc kHip = Rtc::kHiprtc;
}  // namespace

// The calls that name no program answer from the linked library; a library a program dlopens
// gets copies of its own (real_rtc.cpp).
HIPACM_SHIM_API RtcResult hiprtcCreateProgram(RealProgram* prog, const char* src, const char* name,
                                              int num_headers, const char** headers,
                                              const char** include_names) {
  return create_program(linked_rtc(kHip), prog, src, name, num_headers, headers, include_names);
}

HIPACM_SHIM_API const char* hiprtcGetErrorString(RtcResult result) {
  const RealRtc* api = linked_rtc(kHip);
  return api != nullptr ? api->error_string(result) : "HIPRTC_ERROR_INTERNAL_ERROR";
}

HIPACM_SHIM_API RtcResult hiprtcVersion(int* major, int* minor) {
  const RealRtc* api = linked_rtc(kHip);
  return api != nullptr ? api->version(major, minor) : kRtcInternalError;
}

HIPACM_SHIM_API RtcResult hiprtcAddNameExpression(RealProgram prog, const char* expression) {
  return add_name_expression(kHip, prog, expression);
}

HIPACM_SHIM_API RtcResult hiprtcCompileProgram(RealProgram prog, int num_options,
                                               const char** options) {
  return compile_program(kHip, prog, num_options, options);
}

HIPACM_SHIM_API RtcResult hiprtcGetCodeSize(RealProgram prog, std::size_t* size) {
  return get_output_size(kHip, prog, kHipCode, size);
}

HIPACM_SHIM_API RtcResult hiprtcGetCode(RealProgram prog, char* code) {
  return get_output(kHip, prog, kHipCode, code);
}

HIPACM_SHIM_API RtcResult hiprtcGetProgramLogSize(RealProgram prog, std::size_t* size) {
  return get_log_size(kHip, prog, size);
}

HIPACM_SHIM_API RtcResult hiprtcGetProgramLog(RealProgram prog, char* log) {
  return get_log(kHip, prog, log);
}

HIPACM_SHIM_API RtcResult hiprtcGetLoweredName(RealProgram prog, const char* expression,
                                               const char** lowered) {
  return get_lowered_name(kHip, prog, expression, lowered);
}

// Not served (ROCm 6 and 7 only), but they take a program: the real one, made for them.
HIPACM_SHIM_API RtcResult hiprtcGetBitcodeSize(RealProgram prog, std::size_t* size) {
  return get_output_size(kHip, prog, kHipBitcode, size);
}

HIPACM_SHIM_API RtcResult hiprtcGetBitcode(RealProgram prog, char* bitcode) {
  return get_output(kHip, prog, kHipBitcode, bitcode);
}

HIPACM_SHIM_API RtcResult hiprtcDestroyProgram(RealProgram* prog) {
  return destroy_program(kHip, prog);
}

namespace hipacm::intercept {

void* hiprtc_program_call(std::string_view name) noexcept {
  struct Entry {
    std::string_view name;
    void* call;
  };
  static const Entry kCalls[] = {
      {"hiprtcAddNameExpression", reinterpret_cast<void*>(&hiprtcAddNameExpression)},
      {"hiprtcCompileProgram", reinterpret_cast<void*>(&hiprtcCompileProgram)},
      {"hiprtcGetCodeSize", reinterpret_cast<void*>(&hiprtcGetCodeSize)},
      {"hiprtcGetCode", reinterpret_cast<void*>(&hiprtcGetCode)},
      {"hiprtcGetProgramLogSize", reinterpret_cast<void*>(&hiprtcGetProgramLogSize)},
      {"hiprtcGetProgramLog", reinterpret_cast<void*>(&hiprtcGetProgramLog)},
      {"hiprtcGetLoweredName", reinterpret_cast<void*>(&hiprtcGetLoweredName)},
      {"hiprtcGetBitcodeSize", reinterpret_cast<void*>(&hiprtcGetBitcodeSize)},
      {"hiprtcGetBitcode", reinterpret_cast<void*>(&hiprtcGetBitcode)},
      {"hiprtcDestroyProgram", reinterpret_cast<void*>(&hiprtcDestroyProgram)},
  };
  for (const Entry& entry : kCalls)
    if (entry.name == name) return entry.call;
  return nullptr;
}

}  // namespace hipacm::intercept
