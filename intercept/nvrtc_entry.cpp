// SPDX-License-Identifier: MIT
// nvrtc_entry.cpp - the NVRTC calls the shim defines, exported under NVRTC's names, so that a
// program linked against libnvrtc.so.12/.13 reaches them first: every call that takes a program
// (a program the shim made must never reach the real library) and nvrtcCreateProgram. The calls
// that name no program (nvrtcVersion, nvrtcGetErrorString, nvrtcGetSupportedArchs, the PCH heap
// size) are not defined: they reach the real library untouched.
#include <cstddef>
#include <string_view>

#include "intercept/program.h"
#include "intercept/real_rtc.h"

using namespace hipacm::intercept;

#define HIPACM_SHIM_API extern "C" __attribute__((visibility("default")))

namespace {
constexpr Rtc kNv = Rtc::kNvrtc;
}  // namespace

// A library a program dlopens gets a copy of its own (real_rtc.cpp).
HIPACM_SHIM_API RtcResult nvrtcCreateProgram(RealProgram* prog, const char* src, const char* name,
                                             int num_headers, const char** headers,
                                             const char** include_names) {
  return create_program(linked_rtc(kNv), prog, src, name, num_headers, headers, include_names);
}

HIPACM_SHIM_API RtcResult nvrtcAddNameExpression(RealProgram prog, const char* expression) {
  return add_name_expression(kNv, prog, expression);
}

HIPACM_SHIM_API RtcResult nvrtcCompileProgram(RealProgram prog, int num_options,
                                              const char** options) {
  return compile_program(kNv, prog, num_options, options);
}

HIPACM_SHIM_API RtcResult nvrtcGetProgramLogSize(RealProgram prog, std::size_t* size) {
  return get_log_size(kNv, prog, size);
}

HIPACM_SHIM_API RtcResult nvrtcGetProgramLog(RealProgram prog, char* log) {
  return get_log(kNv, prog, log);
}

HIPACM_SHIM_API RtcResult nvrtcGetLoweredName(RealProgram prog, const char* expression,
                                              const char** lowered) {
  return get_lowered_name(kNv, prog, expression, lowered);
}

// The outputs: PTX or CUBIN served for the arch hipacm compiled, the rest from the real program.
#define HIPACM_NVRTC_OUTPUT(Name, output)                                               \
  HIPACM_SHIM_API RtcResult nvrtcGet##Name##Size(RealProgram prog, std::size_t* size) { \
    return get_output_size(kNv, prog, output, size);                                    \
  }                                                                                     \
  HIPACM_SHIM_API RtcResult nvrtcGet##Name(RealProgram prog, char* out) {               \
    return get_output(kNv, prog, output, out);                                          \
  }
HIPACM_NVRTC_OUTPUT(PTX, kPtx)
HIPACM_NVRTC_OUTPUT(CUBIN, kCubin)
HIPACM_NVRTC_OUTPUT(LTOIR, kLtoir)
HIPACM_NVRTC_OUTPUT(OptiXIR, kOptixir)
HIPACM_NVRTC_OUTPUT(NVVM, kNvvm)
#undef HIPACM_NVRTC_OUTPUT

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

HIPACM_SHIM_API RtcResult nvrtcDestroyProgram(RealProgram* prog) {
  return destroy_program(kNv, prog);
}

namespace hipacm::intercept {

void* nvrtc_program_call(std::string_view name) noexcept {
  struct Entry {
    std::string_view name;
    void* call;
  };
#define HIPACM_NVRTC_CALL(name) \
  { #name, reinterpret_cast < void*>(&name) }
  static const Entry kCalls[] = {
      HIPACM_NVRTC_CALL(nvrtcAddNameExpression),
      HIPACM_NVRTC_CALL(nvrtcCompileProgram),
      HIPACM_NVRTC_CALL(nvrtcGetProgramLogSize),
      HIPACM_NVRTC_CALL(nvrtcGetProgramLog),
      HIPACM_NVRTC_CALL(nvrtcGetLoweredName),
      HIPACM_NVRTC_CALL(nvrtcGetPTXSize),
      HIPACM_NVRTC_CALL(nvrtcGetPTX),
      HIPACM_NVRTC_CALL(nvrtcGetCUBINSize),
      HIPACM_NVRTC_CALL(nvrtcGetCUBIN),
      HIPACM_NVRTC_CALL(nvrtcGetLTOIRSize),
      HIPACM_NVRTC_CALL(nvrtcGetLTOIR),
      HIPACM_NVRTC_CALL(nvrtcGetOptiXIRSize),
      HIPACM_NVRTC_CALL(nvrtcGetOptiXIR),
      HIPACM_NVRTC_CALL(nvrtcGetNVVMSize),
      HIPACM_NVRTC_CALL(nvrtcGetNVVM),
      HIPACM_NVRTC_CALL(nvrtcGetPCHCreateStatus),
      HIPACM_NVRTC_CALL(nvrtcGetPCHHeapSizeRequired),
      HIPACM_NVRTC_CALL(nvrtcSetFlowCallback),
      HIPACM_NVRTC_CALL(nvrtcDestroyProgram),
  };
#undef HIPACM_NVRTC_CALL
  for (const Entry& entry : kCalls)
    if (entry.name == name) return entry.call;
  return nullptr;
}

}  // namespace hipacm::intercept
