// SPDX-License-Identifier: MIT
// tool_main.cpp - the hipacm command-line tool: global options, --version, and dispatch.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "support/nearest_name.h"
#include "support/settings.h"
#include "tools/common/argument_errors.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"
#include "tools/doctor/backend_probe.h"

namespace {

using hipacm::cli::find_option;
using hipacm::cli::subcommands_of;

std::string version_text() {
  using namespace hipacm::cli;
  const PluginProbe plugin = probe_plugin();
  const LibraryProbe hiprtc = probe_hiprtc();
  const LibraryProbe comgr = probe_comgr(nullptr);
  auto library_line = [](const char* name, const LibraryProbe& probe) {
    return probe.found ? fmt::format("{} {} ({})", name,
                                     probe.version.empty() ? "?" : probe.version, probe.path)
                       : fmt::format("{} not found", name);
  };
  return fmt::format("hipacm {} (ABI {}, {})\n{}\n{}", plugin.version, plugin.abi_version,
                     plugin.path, library_line("hipRTC", hiprtc), library_line("comgr", comgr));
}

// A word where a command name belongs that names none, and the command it was given to.
struct UnknownCommand {
  CLI::App* parent;
  std::string word;
};

// Walks the command line as CLI11 will, before it does: CLI11 itself only says that a
// subcommand is required, which hides the typo.
std::optional<UnknownCommand> find_unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* option = find_option(current, word);
      // An option's value is the next word unless it came as --name=value.
      if (option != nullptr && option->get_items_expected_max() > 0 &&
          word.find('=') == std::string::npos)
        ++i;
      continue;
    }
    const std::vector<CLI::App*> commands = subcommands_of(*current);
    if (commands.empty()) break;  // the rest are the command's own arguments
    CLI::App* next = nullptr;
    for (CLI::App* command : commands) {
      if (command->check_name(word)) next = command;
    }
    if (next == nullptr) return UnknownCommand{current, word};
    current = next;
  }
  return std::nullopt;
}

// The number of words CLI11 parses: all of them, unless a prefix command (`run`) is given, whose
// words from the first that is not one of its options (or from after `--`) go to `words` instead,
// so that COMMAND's own options (even --help) stay COMMAND's.
int words_to_parse(CLI::App& app, int argc, char** argv, std::vector<std::string>& words) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const bool prefix = current != &app && current->get_prefix_command();
    if (prefix && word == "--") {
      words.assign(argv + i + 1, argv + argc);
      return i;
    }
    if (word.size() > 1 && word[0] == '-' && word != "--") {
      const CLI::Option* option = find_option(current, word);
      if (option != nullptr && option->get_items_expected_max() > 0 &&
          word.find('=') == std::string::npos)
        ++i;
      continue;
    }
    if (prefix) {
      words.assign(argv + i, argv + argc);
      return i;
    }
    CLI::App* next = nullptr;
    for (CLI::App* command : subcommands_of(*current)) {
      if (command->check_name(word)) next = command;
    }
    if (next == nullptr) break;
    current = next;
  }
  return argc;
}

// `hipacm [-q|-v] help [CMD...]`: the words after "help", or nullopt when the command is not
// help. Not a CLI11 command, so that `hipacm --help` (which man pages and completions are made
// from) stays as it was.
std::optional<std::vector<std::string>> help_words(int argc, char** argv) {
  int i = 1;
  for (; i < argc; ++i) {
    const std::string word = argv[i];
    if (word != "-q" && word != "--quiet" && word != "-v" && word != "--verbose") break;
  }
  if (i >= argc || std::string(argv[i]) != "help") return std::nullopt;
  return std::vector<std::string>(argv + i + 1, argv + argc);
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

int report_unknown_command(const UnknownCommand& unknown) {
  std::vector<std::string> names;
  for (CLI::App* command : subcommands_of(*unknown.parent)) names.push_back(command->get_name());
  const std::string where =
      unknown.parent->get_parent() == nullptr ? "" : unknown.parent->get_name() + " ";
  const std::vector<std::string> near = hipacm::nearest_names(unknown.word, names);
  const std::string path = "hipacm " + where;
  fmt::print(stderr,
             "hipacm: error: unknown {}command '{}'; {}\nRun '{}--help' for more information.\n",
             where, hipacm::cli::printable(unknown.word),
             near.empty() ? "the commands are " + hipacm::cli::printable(join_names(names))
                          : "did you mean " + hipacm::one_of(near, "'") + "?",
             path);
  return hipacm::cli::kExitUsage;
}

// -q and -v belong to the whole tool: given before a command or after it, every command sees
// them in AppContext; a command with flags of the same name (warmup) gets them set as well, and
// sets the tool's when they are given to it.
void add_output_flags(CLI::App& app, hipacm::cli::AppContext& context) {
  const std::string log_variable = hipacm::settings::name(hipacm::settings::Id::kLog);
  CLI::Option* quiet = app.add_flag(
      "-q,--quiet", context.quiet,
      "Results, warnings and errors only: no progress, headings, totals lines or hints");
  CLI::Option* verbose = app.add_flag(
      "-v,--verbose", context.verbose,
      std::string("More detail (e.g. whole cache keys), and the library's info-level log (") +
          log_variable + "=info) unless " + log_variable + " is set");
  quiet->excludes(verbose);
}

// A prefix command (`run`) keeps what it does not know: from its first unknown word on, the words
// are the command line it runs, which the tool's options must not take.
void let_options_fall_through(CLI::App& app) {
  for (CLI::App* command : subcommands_of(app)) {
    command->fallthrough(!command->get_prefix_command());
    let_options_fall_through(*command);
  }
}

void share_flag(CLI::App& command, const char* name, bool& tool_value) {
  CLI::Option* own = command.get_option_no_throw(name);
  if (own == nullptr) return;
  if (own->count() > 0) {
    tool_value = true;
  } else if (tool_value) {
    own->add_result("true");
    own->run_callback();
  }
}

void share_output_flags(CLI::App& app, hipacm::cli::AppContext& context) {
  for (CLI::App* command : app.get_subcommands()) {
    share_flag(*command, "--quiet", context.quiet);
    share_flag(*command, "--verbose", context.verbose);
    share_output_flags(*command, context);
  }
  // Read on every log line, so it also reaches a library loaded later.
  if (context.verbose)
    hipacm::settings::put(hipacm::settings::Id::kLog, "info", /*overwrite=*/false);
}

}  // namespace

namespace hipacm::cli {

int run_tool(int argc, char** argv, const ClusterRunner* cluster) {
  CLI::App app{"hipacm: warm, inspect and diagnose hipacm's asynchronous HIP kernel compiles",
               "hipacm"};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.footer(examples_footer(
      {"hipacm warmup examples/kernels --arch gfx90a,gfx1030", "hipacm inspect kernel.co",
       "hipacm cache stats", "hipacm doctor", "hipacm help warmup"},
      "0 ok, 1 failures, 2 usage or input error, 3 no compiler backend."));

  AppContext context;
  context.arguments.assign(argv, argv + argc);
  add_warmup_command(app, context, cluster);
  add_inspect_command(app, context);
  add_doctor_command(app, context);
  add_cache_command(app, context);
  add_run_command(app, context);
  add_output_flags(app, context);
  let_options_fall_through(app);
  app.parse_complete_callback([&] { share_output_flags(app, context); });

  if (const std::optional<std::vector<std::string>> words = help_words(argc, argv))
    return run_help(app, *words);
  if (const std::optional<UnknownCommand> unknown = find_unknown_command(app, argc, argv))
    return report_unknown_command(*unknown);

  const int parsed = words_to_parse(app, argc, argv, context.prefix_words);
  if (const int misread = check_single_dash_words(app, parsed, argv); misread >= 0) return misread;
  try {
    app.parse(parsed, argv);
  } catch (const CLI::Success& e) {
    app.exit(e);  // prints the help or the version
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return report_argument_error(app, e, parsed, argv);
  } catch (const InputError& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    return kExitUsage;
  } catch (const BackendUnavailable& e) {
    fmt::print(stderr, "hipacm: error: {}\n(run 'hipacm doctor' for what is missing)\n",
               printable(e.what()));
    return kExitNoBackend;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    return kExitFailures;
  }
  return context.exit_code;
}

}  // namespace hipacm::cli
