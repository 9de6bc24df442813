// SPDX-License-Identifier: MIT
// argument_errors.h - the tool's own words for CLI11's parse errors, and `hipacm help [CMD...]`.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hipacm::cli {

/// The commands of `app` (not the options' groups), in the order they were added.
std::vector<CLI::App*> subcommands_of(CLI::App& app);

/// `name` ("-q", "--db") as an option of `app` or of a command above it, where CLI11's
/// fallthrough would find it; nullptr when none has it.
const CLI::Option* find_option(CLI::App* app, const std::string& name);

/// "hipacm", "hipacm warmup", "hipacm cache stats": how the tool names `command` in messages.
std::string command_path(const CLI::App* command);

/// Prints CLI11's parse `error` (not help or version) of the first `argc` words of `argv` as
/// "hipacm CMD: error: ...", with a did-you-mean for a mistyped option (of the command it was
/// given to, or naming the command it belongs to), and returns kExitUsage.
int report_argument_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

/// A word on the command line that CLI11 would misread: a long option with one dash ("-jobs",
/// which it reads as "-j obs"). Checked before the parse so that no command runs with the
/// misread value; prints the error and returns kExitUsage, or returns -1 when there is none.
int check_single_dash_words(CLI::App& app, int argc, char** argv);

/// `hipacm help [CMD [SUBCMD]]`: `words` are those after "help". Prints what `hipacm CMD
/// [SUBCMD] --help` prints and returns kExitOk; an unknown command is an error with a
/// did-you-mean (kExitUsage).
int run_help(CLI::App& app, const std::vector<std::string>& words);

}  // namespace hipacm::cli
