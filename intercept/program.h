// SPDX-License-Identifier: MIT
// program.h - the program object the shim hands out in place of hipRTC's: each call answered
// from hipacm's result, or from a real program made lazily with the same arguments.
#pragma once

#include <cstddef>
#include <string_view>

#include "intercept/real_hiprtc.h"

namespace hipacm::intercept {

/// hiprtcCreateProgram for the library `api` (null: none found, INTERNAL_ERROR). Ordinary
/// arguments are kept and no real program is made yet; unusual ones (NULLs, negative counts)
/// make the real program at once, which then answers every call.
RtcResult create_program(const RealHiprtc* api, RealProgram* prog, const char* source,
                         const char* name, int num_headers, const char** headers,
                         const char** include_names);

// The calls that take a program, as hipRTC declares them. A handle the shim did not make goes to
// the linked library's call unchanged.
RtcResult add_name_expression(RealProgram prog, const char* expression);
RtcResult compile_program(RealProgram prog, int num_options, const char** options);
RtcResult get_code_size(RealProgram prog, std::size_t* size);
RtcResult get_code(RealProgram prog, char* code);
RtcResult get_log_size(RealProgram prog, std::size_t* size);
RtcResult get_log(RealProgram prog, char* log);
RtcResult get_lowered_name(RealProgram prog, const char* expression, const char** lowered);
RtcResult get_bitcode_size(RealProgram prog, std::size_t* size);
RtcResult get_bitcode(RealProgram prog, char* bitcode);
RtcResult destroy_program(RealProgram* prog);

/// The shim's exported definition of a hipRTC call that takes a program (hiprtcGetCode, ...),
/// or null for a name it does not serve.
void* shared_program_call(std::string_view name) noexcept;

}  // namespace hipacm::intercept
