// SPDX-License-Identifier: MIT
// client_common.h - what the test's ordinary hipRTC clients share: the jobs, the compile loop, the
// dump.
//
// These clients know nothing of hipacm: they are what an application that compiles kernels at run
// time looks like, so that `hipacm run` can be checked against plain hipRTC on the same program.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace client {

// hipRTC's C types, spelled here so that the dlopen client needs no hipRTC header (as PyTorch and
// CuPy carry their own declarations). The values are hipRTC's ABI.
using Result = int;
using Program = void*;

/// The hipRTC entry points a client calls, however it found them.
struct Api {
  const char* (*get_error_string)(Result) = nullptr;
  Result (*version)(int*, int*) = nullptr;
  Result (*create_program)(Program*, const char*, const char*, int, const char* const*,
                           const char* const*) = nullptr;
  Result (*add_name_expression)(Program, const char*) = nullptr;
  Result (*compile_program)(Program, int, const char* const*) = nullptr;
  Result (*get_program_log_size)(Program, std::size_t*) = nullptr;
  Result (*get_program_log)(Program, char*) = nullptr;
  Result (*get_code_size)(Program, std::size_t*) = nullptr;
  Result (*get_code)(Program, char*) = nullptr;
  Result (*get_lowered_name)(Program, const char*, const char**) = nullptr;
  Result (*destroy_program)(Program*) = nullptr;
  // Only in libraries that have them (hipRTC 6 and later); null elsewhere.
  Result (*get_bitcode_size)(Program, std::size_t*) = nullptr;
  Result (*get_bitcode)(Program, char*) = nullptr;
};

/// The command line every client takes:
///   CLIENT [--threads N] [--only TEXT] [--option OPT]... [--bitcode] [--fork] [--time] [--library
///   SONAME] MANIFEST...
struct Options {
  int threads = 1;
  std::vector<std::string> only;           ///< keep jobs whose label contains one of these
  std::vector<std::string> extra_options;  ///< appended to every job's options (-fgpu-rdc)
  bool bitcode = false;                    ///< also ask for the bitcode (a passthrough case)
  bool fork = false;                       ///< then fork, and compile everything again in the child
  bool time = false;                       ///< print the compile loop's time on stderr
  std::string library = "libamdhip64.so.5";
  std::vector<std::string> manifests;
};

/// Parses the command line; prints usage and exits 2 on an error.
Options parse_options(int argc, char** argv);

/// Compiles every job of the manifests with `api` and prints the canonical dump on stdout (with
/// --fork, then forks and the child does the same after a "forked child" line). Returns the
/// process's exit status: 0 when every call ran (failed compiles included), 1 when a manifest or
/// source cannot be read or the forked child failed.
int run_client(const Api& api, const Options& options);

}  // namespace client
