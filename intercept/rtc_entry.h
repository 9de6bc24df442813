// SPDX-License-Identifier: MIT
// rtc_entry.h - the shape hiprtc_entry.cpp and nvrtc_entry.cpp define their exported calls in:
// the program calls hipRTC and NVRTC share, an output's pair of calls, and the table of program
// calls the dlsym interposer hands out.
#pragma once

#include <cstddef>
#include <string_view>

#include "intercept/program.h"
#include "intercept/real_rtc.h"

// Exported under the library's own name (the shim's other symbols are hidden).
#define HIPACM_SHIM_API extern "C" __attribute__((visibility("default")))

// The calls with the same parameters in both libraries, as <prefix>CreateProgram and so on, each
// answered by program.h's call for the library `rtc`. The extern "C" names are the libraries', so
// a macro, not a template, makes them. A library a program dlopens gets a copy of its own
// (real_rtc.cpp).
#define HIPACM_RTC_PROGRAM_CALLS(prefix, rtc)                                                     \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##CreateProgram(                           \
      ::hipacm::intercept::RealProgram* prog, const char* src, const char* name, int num_headers, \
      const char** headers, const char** include_names) {                                         \
    return ::hipacm::intercept::create_program(::hipacm::intercept::linked_rtc(rtc), prog, src,   \
                                               name, num_headers, headers, include_names);        \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##AddNameExpression(                       \
      ::hipacm::intercept::RealProgram prog, const char* expression) {                            \
    return ::hipacm::intercept::add_name_expression(rtc, prog, expression);                       \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##CompileProgram(                          \
      ::hipacm::intercept::RealProgram prog, int num_options, const char** options) {             \
    return ::hipacm::intercept::compile_program(rtc, prog, num_options, options);                 \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##GetProgramLogSize(                       \
      ::hipacm::intercept::RealProgram prog, std::size_t* size) {                                 \
    return ::hipacm::intercept::get_log_size(rtc, prog, size);                                    \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##GetProgramLog(                           \
      ::hipacm::intercept::RealProgram prog, char* log) {                                         \
    return ::hipacm::intercept::get_log(rtc, prog, log);                                          \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##GetLoweredName(                          \
      ::hipacm::intercept::RealProgram prog, const char* expression, const char** lowered) {      \
    return ::hipacm::intercept::get_lowered_name(rtc, prog, expression, lowered);                 \
  }                                                                                               \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##DestroyProgram(                          \
      ::hipacm::intercept::RealProgram* prog) {                                                   \
    return ::hipacm::intercept::destroy_program(rtc, prog);                                       \
  }

// An output's two calls, <prefix>Get<Name>Size and <prefix>Get<Name>: served for the output
// hipacm compiled, the rest from the real program.
#define HIPACM_RTC_OUTPUT_CALLS(prefix, Name, rtc, output)                                     \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##Get##Name##Size(                      \
      ::hipacm::intercept::RealProgram prog, std::size_t* size) {                              \
    return ::hipacm::intercept::get_output_size(rtc, prog, ::hipacm::intercept::output, size); \
  }                                                                                            \
  HIPACM_SHIM_API ::hipacm::intercept::RtcResult prefix##Get##Name(                            \
      ::hipacm::intercept::RealProgram prog, char* out) {                                      \
    return ::hipacm::intercept::get_output(rtc, prog, ::hipacm::intercept::output, out);       \
  }

namespace hipacm::intercept {

/// One exported call that takes a program, by name, for the dlsym interposer.
struct ProgramCall {
  std::string_view name;
  void* call;
};

}  // namespace hipacm::intercept

// A table row for the exported call `name`.
#define HIPACM_RTC_CALL(name) \
  ::hipacm::intercept::ProgramCall { #name, reinterpret_cast < void*>(&name) }

// The rows of HIPACM_RTC_PROGRAM_CALLS' calls that take a program (the create call takes none).
#define HIPACM_RTC_PROGRAM_CALL_ROWS(prefix)                                              \
  HIPACM_RTC_CALL(prefix##AddNameExpression), HIPACM_RTC_CALL(prefix##CompileProgram),    \
      HIPACM_RTC_CALL(prefix##GetProgramLogSize), HIPACM_RTC_CALL(prefix##GetProgramLog), \
      HIPACM_RTC_CALL(prefix##GetLoweredName), HIPACM_RTC_CALL(prefix##DestroyProgram)

// The rows of HIPACM_RTC_OUTPUT_CALLS' two calls.
#define HIPACM_RTC_OUTPUT_CALL_ROWS(prefix, Name) \
  HIPACM_RTC_CALL(prefix##Get##Name##Size), HIPACM_RTC_CALL(prefix##Get##Name)

namespace hipacm::intercept {

/// The call named `name` in `calls`, or null.
template <std::size_t N>
void* find_program_call(const ProgramCall (&calls)[N], std::string_view name) noexcept {
  for (const ProgramCall& entry : calls)
    if (entry.name == name) return entry.call;
  return nullptr;
}

}  // namespace hipacm::intercept
