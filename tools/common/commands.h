// SPDX-License-Identifier: MIT
// commands.h - the hipacm subcommands: each lives in its own folder and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace hipacm::cli {

/// State shared by the whole invocation. A subcommand's callback stores its
/// exit status here; main() returns it once CLI11 has run the callback.
struct AppContext {
  int exit_code = 0;
  bool quiet = false;    ///< -q, given anywhere: results and errors only, no progress or hints
  bool verbose = false;  ///< -v, given anywhere: more detail, and the library's info log
  /// The command line as given, for a command that hands the run to another executable.
  std::vector<std::string> arguments;
  /// A prefix command's (`run`'s) command line to run: its words from the first that is not one
  /// of its options, or from after `--`, verbatim; CLI11 never parses them.
  std::vector<std::string> prefix_words;
};

struct ClusterRunner;

/// The end of a command's help: its examples, one a line, and what its exit statuses mean.
inline std::string examples_footer(std::initializer_list<const char*> examples,
                                   const char* exit_status) {
  std::string text = "Examples:\n";
  for (const char* example : examples) text += std::string("  ") + example + "\n";
  return text + "Exit status: " + exit_status;
}

/// Ends a subcommand's set-up: the help footer, and `run` as its callback, whose result
/// becomes the exit status.
inline void finish_command(CLI::App* command, AppContext& context, std::function<int()> run,
                           std::initializer_list<const char*> examples, const char* exit_status) {
  command->footer(examples_footer(examples, exit_status));
  command->callback([&context, run = std::move(run)] { context.exit_code = run(); });
}

/// `hipacm warmup PATHS... --arch A[,B]`: compiles kernels through modes
/// (warmup/warmup_command.cpp). With `cluster` (the MPI helper's), `--mpi` runs through it;
/// without, `--mpi` hands the whole command line to the helper.
void add_warmup_command(CLI::App& app, AppContext& context, const ClusterRunner* cluster = nullptr);

/// The tool's main: parses the command line, runs the command, returns the exit status. The
/// plain tool and the MPI helper differ only in `cluster`.
int run_tool(int argc, char** argv, const ClusterRunner* cluster);

/// `hipacm inspect FILE`: kernels, arch and machine of a code object (inspect/inspect_command.cpp).
void add_inspect_command(CLI::App& app, AppContext& context);

/// `hipacm doctor`: backend libraries, worker, cache location, archs, devices
/// (doctor/doctor_command.cpp).
void add_doctor_command(CLI::App& app, AppContext& context);

/// `hipacm cache stats|list|verify|prune|clear|export|import` (cache/cache_command.cpp).
void add_cache_command(CLI::App& app, AppContext& context);

/// `hipacm run [--stats] [--print-env] [--] COMMAND [ARGS...]`: runs an unchanged program with its
/// hipRTC and NVRTC compiles served by hipacm (run/run_command.cpp).
void add_run_command(CLI::App& app, AppContext& context);

}  // namespace hipacm::cli
