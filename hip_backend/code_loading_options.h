// SPDX-License-Identifier: MIT
// code_loading_options.h - which compiler options load code into the compiler, and which leave
// state behind in a compiler process.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hipacm::backend {

/// An option that makes the compiler load or run code of the option's choosing.
struct CodeLoadingOption {
  std::size_t index = 0;  ///< its place in the option list
  std::string option;     ///< the option as given
  std::string why;        ///< what it does, e.g. "loads a Clang plugin"
};

/// The first option in `options` that loads or runs code in or from the compiler: a Clang
/// plugin (`-Xclang -load`, `-Xclang -plugin`, `-Xclang -add-plugin`, `-fplugin=`), an LLVM pass
/// plugin (`-fpass-plugin=`, `--load-pass-plugin`), an LLVM `-load` (through `-mllvm`), more
/// options from a file (`@FILE`, `--config`) or programs from another place (`-B`, `--prefix`,
/// `-fuse-ld=`, `--ld-path=`). Every spelling counts: one or two leading dashes, a joined
/// `=VALUE`, and each forwarding form (`-Xclang X`, `-Xclang=X`, `-mllvm X`, `-mllvm=X`,
/// `-Xlinker X`, `-Wl,X,Y`, ...): each token is judged on its own, so `-Xclang -load -Xclang
/// x.so` is found at `-load`. nullopt when none does.
std::optional<CodeLoadingOption> find_code_loading_option(const std::vector<std::string>& options);

/// Whether a compile with `options` may leave something behind in the compiler process that
/// would change or endanger a later compile of another request: code it loaded, or LLVM's
/// process-wide settings, which `-mllvm` and `-Xclang` reach. A worker that ran such a compile
/// serves no other compile.
bool options_leave_compiler_state(const std::vector<std::string>& options);

}  // namespace hipacm::backend
