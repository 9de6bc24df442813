// SPDX-License-Identifier: MIT
// program.h - the program object the shim hands out in place of hipRTC's and NVRTC's: each call
// answered from hipacm's result, or from a real program made lazily with the same arguments.
#pragma once

#include <cstddef>

#include "intercept/real_rtc.h"

namespace hipacm::intercept {

/// The create call of the library `api` (null: none found, INTERNAL_ERROR). Ordinary arguments
/// are kept and no real program is made yet; unusual ones (NULLs, negative counts) make the real
/// program at once, which then answers every call.
RtcResult create_program(const RealRtc* api, RealProgram* prog, const char* source,
                         const char* name, int num_headers, const char** headers,
                         const char** include_names);

// The calls that take a program, as the libraries declare them. A handle the shim did not make
// goes to the call of `rtc`'s linked library unchanged.
RtcResult add_name_expression(Rtc rtc, RealProgram prog, const char* expression);
RtcResult compile_program(Rtc rtc, RealProgram prog, int num_options, const char** options);
/// hiprtcGetCodeSize, nvrtcGetPTXSize, ...: served for the output hipacm compiled, else the real
/// program's.
RtcResult get_output_size(Rtc rtc, RealProgram prog, Output output, std::size_t* size);
RtcResult get_output(Rtc rtc, RealProgram prog, Output output, char* code);
RtcResult get_log_size(Rtc rtc, RealProgram prog, std::size_t* size);
RtcResult get_log(Rtc rtc, RealProgram prog, char* log);
RtcResult get_lowered_name(Rtc rtc, RealProgram prog, const char* expression, const char** lowered);
RtcResult destroy_program(Rtc rtc, RealProgram* prog);

// NVRTC's other calls on a program: always the real program's.
RtcResult nvrtc_pch_create_status(RealProgram prog);
RtcResult nvrtc_pch_heap_size_required(RealProgram prog, std::size_t* size);
RtcResult nvrtc_set_flow_callback(RealProgram prog, int (*callback)(void*, void*), void* payload);

}  // namespace hipacm::intercept
