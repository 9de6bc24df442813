// SPDX-License-Identifier: MIT
// kernel_input.h - one kernel to warm, in owned form, and how PATHS become a list of them.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hip_backend/compiler.h"

namespace hipacm::cli {

/// Everything one compile request needs besides the arch.
struct KernelInput {
  std::string path;         ///< as the user will recognise it (the given path, joined)
  std::string source_name;  ///< the file name hipRTC sees, e.g. "saxpy.hip"
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  std::vector<std::string> name_expressions;
  /// Where its own options were read, for messages: "FILE:LINE" (a record), "MANIFEST:
  /// kernels[N]" (a manifest entry) or the kernel file (its directives).
  std::string origin;
  /// The one arch a recorded request was compiled for; "" (every arch of the run) for files and
  /// manifests.
  std::string arch;
  /// `path`, or, when other requests share the path, `path` with what sets this one apart
  /// (its options, else its index among them): what reports print.
  std::string label;

  /// Source and header bytes: what the run's input budget counts.
  std::size_t input_bytes() const;
  /// The same compile request: every field the compiler sees (all but path and label).
  bool same_request(const KernelInput& other) const;
  /// Whether a run compiles it for `run_arch`: a recorded request only for its own arch.
  bool compiles_for(const std::string& run_arch) const { return arch.empty() || arch == run_arch; }
};

/// The compile request `input` is for `arch`, as the C ABI reads one: relative paths in its
/// options anchored at the working directory, so that its cache key is the one a run's has.
backend::CompileRequest compile_request(const KernelInput& input, const std::string& arch);

/// The name hipRTC sees for a kernel file: its file name, with every byte
/// outside the plugin's source-name set (letters, digits, `_ - . + @`) made
/// '_' and cut to 255 bytes, so a file called "my kernel.hip" still
/// compiles. Reports keep the real path.
std::string compiler_source_name(const std::string& file_name);

/// What applies to a whole run's inputs.
struct InputSettings {
  /// The file name endings a directory contributes (e.g. ".hip", ".cpp", ".cu").
  std::vector<std::string> extensions = {".hip"};
  /// Compiler options put before every kernel's own options (-I, -D, --option).
  std::vector<std::string> common_options;
  /// Whether options read from a file (a record line, a manifest entry, a directive) may load
  /// code into the compiler (`-Xclang -load`, `-fplugin=`, ...: see find_code_loading_option).
  /// A data file must not run code by default, so without this they are an input error.
  bool allow_compiler_plugins = false;
};

/// Expands PATHS in order: a file other than .json is one kernel (directives from its
/// leading // block); a directory contributes every file below it, recursively, sorted by
/// path, whose name ends in one of `settings.extensions`; a .json file is a manifest. Every
/// kernel's options start with `settings.common_options`. Only exact
/// duplicates of a whole request are dropped (the first is kept): the same
/// file with other options, headers or name expressions is another kernel,
/// and gets a label that tells it apart. Throws InputError for a missing
/// path, an option read from a file that loads code into the compiler (unless
/// `settings.allow_compiler_plugins`), an unreadable file, a bad directive or manifest, inputs past
/// kMaxInputBytesPerRun, or when nothing is found.
std::vector<KernelInput> collect_kernel_inputs(const std::vector<std::string>& paths,
                                               const InputSettings& settings = {});

}  // namespace hipacm::cli
