// SPDX-License-Identifier: MIT
// run_command.cpp - `hipacm run [--stats] [--print-env] [--] COMMAND [ARGS...]`: runs an unchanged
// program with the intercept library preloaded, so that its hipRTC compiles go through hipacm.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/environment.h"
#include "support/settings.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/intercept_library.h"
#include "tools/common/terminal_text.h"
#include "tools/run/child_process.h"
#include "tools/run/run_stats.h"

extern char** environ;

namespace hipacm::cli {
namespace {

struct RunOptions {
  bool stats = false;
  bool print_env = false;
  bool quiet = false;  ///< the tool's -q, given after `run`
  bool verbose = false;
};

// This process's environment with each `NAME=value` of `set` in place of the NAME it had.
std::vector<std::string> environment_with(const std::vector<std::string>& set) {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    bool replaced = false;
    for (const std::string& setting : set)
      replaced = replaced || text.substr(0, setting.find('=') + 1) ==
                                 std::string_view(setting).substr(0, setting.find('=') + 1);
    if (!replaced) environment.emplace_back(text);
  }
  environment.insert(environment.end(), set.begin(), set.end());
  return environment;
}

// The intercept library's path, or an error message on stderr and nullopt.
std::optional<std::string> intercept_library_or_report() {
  const InterceptLibrary found = find_intercept_library();
  if (!found.path) {
    std::string searched;
    for (const std::string& dir : found.searched)
      searched += (searched.empty() ? "" : ", ") + printable(dir);
    fmt::print(stderr,
               "hipacm run: error: {} was not found beside this hipacm (looked in {}); the build "
               "or install is incomplete: build or reinstall hipacm with its intercept library\n",
               kInterceptLibraryName, searched.empty() ? "nowhere" : searched);
    return std::nullopt;
  }
  if (const auto problem = preload_path_problem(*found.path)) {
    fmt::print(stderr, "hipacm run: error: cannot preload {}: {}\n", printable(*found.path),
               *problem);
    return std::nullopt;
  }
  return found.path;
}

int print_environment(const std::string& library) {
  const std::string preload = preload_with(library, backend::environment_value("LD_PRELOAD"));
  fmt::print("export LD_PRELOAD={}\n", shell_quoted(preload));
  return kExitOk;
}

int run_command(const RunOptions& options, const std::vector<std::string>& command) {
  if (options.print_env && !command.empty())
    throw InputError("--print-env prints the environment for a shell and runs no COMMAND");
  if (options.print_env && options.stats)
    throw InputError("--stats needs hipacm run to start the COMMAND; --print-env starts none");
  if (!options.print_env && command.empty())
    throw InputError("give the COMMAND to run: hipacm run [--stats] [--] COMMAND [ARGS...]");

  const std::optional<std::string> library = intercept_library_or_report();
  if (!library) return kRunSetupFailed;
  if (options.print_env) return print_environment(*library);

  std::vector<std::string> settings = {
      "LD_PRELOAD=" + preload_with(*library, backend::environment_value("LD_PRELOAD"))};
  std::optional<StatsFile> stats_file;
  if (options.stats) {
    try {
      stats_file.emplace();
    } catch (const std::runtime_error& e) {
      fmt::print(stderr, "hipacm run: error: {}\n", printable(e.what()));
      return kRunSetupFailed;
    }
    settings.push_back(std::string(hipacm::settings::name(hipacm::settings::Id::kRunStats)) + "=" +
                       stats_file->path());
  }

  // What this tool printed so far must not be printed again by a child that inherits the buffer.
  std::fflush(stdout);
  std::fflush(stderr);
  const ChildOutcome outcome = run_child(command, environment_with(settings));
  if (!outcome.error.empty())
    fmt::print(stderr, "hipacm run: error: cannot run '{}': {}\n", printable(command.front()),
               outcome.error);
  if (stats_file) fmt::print(stderr, "{}\n", summary_line(tally_run_stats(stats_file->read())));
  return outcome.exit_status;
}

}  // namespace

void add_run_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run COMMAND (hipacm run [--stats] [--print-env] [--] COMMAND [ARGS...]) and every "
      "process it starts with their hipRTC and NVRTC compiles served by hipacm: same results, from "
      "warm "
      "workers and the cache");
  // Everything from COMMAND on is COMMAND's own, its options included.
  command->prefix_command();
  command->add_flag("--stats", options->stats,
                    "At exit, print one line to stderr: compiles, cache hits, compiled, failed, "
                    "passed through and why");
  command->add_flag("--print-env", options->print_env,
                    "Print the environment lines to set instead (for job scripts and "
                    "containers): eval \"$(hipacm run --print-env)\"");
  // The tool's -q and -v, given after `run` (before COMMAND), are run's to take: a prefix command
  // passes nothing up to the tool.
  CLI::Option* quiet = command->add_flag("-q,--quiet", options->quiet, "As the tool's -q");
  CLI::Option* verbose = command->add_flag(
      "-v,--verbose", options->verbose, "As the tool's -v: COMMAND's hipacm log at info level too");
  quiet->excludes(verbose);
  finish_command(
      command, context,
      [command, &context, options] {
        // Words run does not know before COMMAND (CLI11 keeps them, as run is a prefix command).
        const std::vector<std::string> unknown = command->remaining();
        if (!unknown.empty())
          throw InputError("run: unknown option '" + printable(unknown.front()) +
                           "'; put '--' before a COMMAND whose name starts with '-'");
        return run_command(*options, context.prefix_words);
      },
      {"hipacm run -- ./my_app --input data.bin", "hipacm run --stats -- python3 train.py",
       "eval \"$(hipacm run --print-env)\""},
      "COMMAND's own; 125 hipacm run could not set up, 126 COMMAND cannot be executed, 127 "
      "COMMAND not found, 128+N COMMAND was killed by signal N, 2 usage error.");
}

}  // namespace hipacm::cli
