// SPDX-License-Identifier: MIT
// linked_client.cpp - an ordinary hipRTC program: linked against hipRTC's library, calling it by
// name.
#include <hip/hiprtc.h>

#include "client_common.h"

namespace {

// The client's Api is hipRTC's own functions; the casts only drop hipRTC's enum and handle types,
// whose ABI is int and a pointer.
template <typename To, typename From>
To as(From function) {
  return reinterpret_cast<To>(function);
}

}  // namespace

int main(int argc, char** argv) {
  const client::Options options = client::parse_options(argc, argv);
  client::Api api;
  api.get_error_string = as<decltype(api.get_error_string)>(&hiprtcGetErrorString);
  api.version = as<decltype(api.version)>(&hiprtcVersion);
  api.create_program = as<decltype(api.create_program)>(&hiprtcCreateProgram);
  api.add_name_expression = as<decltype(api.add_name_expression)>(&hiprtcAddNameExpression);
  api.compile_program = as<decltype(api.compile_program)>(&hiprtcCompileProgram);
  api.get_program_log_size = as<decltype(api.get_program_log_size)>(&hiprtcGetProgramLogSize);
  api.get_program_log = as<decltype(api.get_program_log)>(&hiprtcGetProgramLog);
  api.get_code_size = as<decltype(api.get_code_size)>(&hiprtcGetCodeSize);
  api.get_code = as<decltype(api.get_code)>(&hiprtcGetCode);
  api.get_lowered_name = as<decltype(api.get_lowered_name)>(&hiprtcGetLoweredName);
  api.destroy_program = as<decltype(api.destroy_program)>(&hiprtcDestroyProgram);
  return client::run_client(api, options);
}
