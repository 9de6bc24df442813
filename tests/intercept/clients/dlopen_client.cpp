// SPDX-License-Identifier: MIT
// dlopen_client.cpp - a hipRTC program that loads the library by soname at run time and looks the
// functions up with dlsym, as PyTorch and CuPy do.
#include <dlfcn.h>

#include <cstdio>

#include "client_common.h"

namespace {

template <typename Function>
bool find(void* library, const char* name, Function& function, bool required = true) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr && required) std::fprintf(stderr, "client: no %s in the library\n", name);
  return function != nullptr || !required;
}

}  // namespace

int main(int argc, char** argv) {
  const client::Options options = client::parse_options(argc, argv);
  void* library = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "client: cannot load %s: %s\n", options.library.c_str(), dlerror());
    return 1;
  }
  client::Api api;
  const bool found =
      find(library, "hiprtcGetErrorString", api.get_error_string) &&
      find(library, "hiprtcVersion", api.version) &&
      find(library, "hiprtcCreateProgram", api.create_program) &&
      find(library, "hiprtcAddNameExpression", api.add_name_expression) &&
      find(library, "hiprtcCompileProgram", api.compile_program) &&
      find(library, "hiprtcGetProgramLogSize", api.get_program_log_size) &&
      find(library, "hiprtcGetProgramLog", api.get_program_log) &&
      find(library, "hiprtcGetCodeSize", api.get_code_size) &&
      find(library, "hiprtcGetCode", api.get_code) &&
      find(library, "hiprtcGetLoweredName", api.get_lowered_name) &&
      find(library, "hiprtcDestroyProgram", api.destroy_program) &&
      find(library, "hiprtcGetBitcodeSize", api.get_bitcode_size, /*required=*/false) &&
      find(library, "hiprtcGetBitcode", api.get_bitcode, /*required=*/false);
  if (!found) return 1;
  const int status = client::run_client(api, options);
  // A program unloads what it loaded; the dump is already out.
  dlclose(library);
  return status;
}
