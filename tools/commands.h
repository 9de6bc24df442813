// commands.h - the hipacm subcommands: each lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

namespace hipacm::cli {

/// State shared by the whole invocation. A subcommand's callback stores its
/// exit status here; main() returns it once CLI11 has run the callback.
struct AppContext {
  int exit_code = 0;
};

/// `hipacm warmup PATHS... --arch A[,B]`: compiles kernels through modes (warmup_command.cpp).
void add_warmup_command(CLI::App& app, AppContext& context);

/// `hipacm inspect FILE`: kernels, arch and machine of a code object (inspect_command.cpp).
void add_inspect_command(CLI::App& app, AppContext& context);

/// `hipacm doctor`: backend libraries, worker, cache location, archs, devices (doctor_command.cpp).
void add_doctor_command(CLI::App& app, AppContext& context);

/// `hipacm cache stats|list|verify|prune|clear|export|import` (cache_command.cpp).
void add_cache_command(CLI::App& app, AppContext& context);

}  // namespace hipacm::cli
