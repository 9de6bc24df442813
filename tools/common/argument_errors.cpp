// SPDX-License-Identifier: MIT
// argument_errors.cpp - the tool's own words for CLI11's parse errors, and `hipacm help [CMD...]`.
#include "tools/common/argument_errors.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "support/nearest_name.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

// A word CLI11 reads as an option: a dash and more, but not "--" and not a negative number.
bool option_like(const std::string& word) {
  return word.size() > 1 && word[0] == '-' && word != "--" &&
         std::isdigit(static_cast<unsigned char>(word[1])) == 0 && word[1] != '.';
}

// The option a word names as CLI11 splits it: "--jobs=3" -> "--jobs", "-j4" and "-jobs" -> "-j".
std::string option_name(const std::string& word) {
  if (word.rfind("--", 0) == 0) return word.substr(0, word.find('='));
  return word.substr(0, 2);
}

// A long option typed with one dash ("-jobs" for "--jobs"), as the long name it looks like.
std::optional<std::string> as_long_name(const std::string& word) {
  if (word.rfind("--", 0) == 0 || word.size() <= 2) return std::nullopt;
  return "-" + word.substr(0, word.find('='));
}

// An option-like word and the command it was given to.
struct OptionWord {
  CLI::App* command;
  std::string word;
};

// The command line as CLI11 parses it: the deepest command its words reach, and every word that
// looks like an option, with the command in effect where it stands.
struct Walk {
  CLI::App* command;
  std::vector<OptionWord> options;
};

Walk walk(CLI::App& app, int argc, char** argv) {
  Walk walked{&app, {}};
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // the rest are positionals
    if (option_like(word)) {
      walked.options.push_back({walked.command, word});
      const CLI::Option* option = find_option(walked.command, option_name(word));
      // An option's value is the next word unless it came with the option ("--x=v", "-j4").
      const bool attached =
          word.find('=') != std::string::npos || (word.rfind("--", 0) != 0 && word.size() > 2);
      if (option != nullptr && option->get_items_expected_max() > 0 && !attached) ++i;
      continue;
    }
    for (CLI::App* command : subcommands_of(*walked.command)) {
      if (command->check_name(word)) {
        walked.command = command;
        break;
      }
    }
  }
  return walked;
}

// Every name of the options of `command` and the commands above it, with their dashes.
std::vector<std::string> option_names(CLI::App* command) {
  std::vector<std::string> names;
  for (; command != nullptr; command = command->get_parent()) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
      for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

bool above_or_same(const CLI::App* command, const CLI::App* other) {
  for (; other != nullptr; other = other->get_parent())
    if (other == command) return true;
  return false;
}

// The commands other than `given` (and those above it) that have an option named `name`.
void collect_owners(CLI::App& from, const CLI::App* given, const std::string& name,
                    std::vector<std::string>& owners) {
  for (CLI::App* command : subcommands_of(from)) {
    if (!above_or_same(command, given) && command->get_option_no_throw(name) != nullptr)
      owners.push_back(command_path(command));
    collect_owners(*command, given, name, owners);
  }
}

CLI::App& root_of(CLI::App* command) {
  while (command->get_parent() != nullptr) command = command->get_parent();
  return *command;
}

// What to say of an option that `given.command` and the commands above it do not have.
std::string unknown_option_text(const OptionWord& given) {
  const std::string typed = printable(given.word.substr(0, given.word.find('=')));
  const std::string text = fmt::format("unknown option '{}'", typed);
  // "-jsn" is a long option with a dash too few far more often than short options run together.
  const std::optional<std::string> long_name = as_long_name(given.word);
  const std::string name = long_name ? *long_name : option_name(given.word);
  // "-include-dir" for this command's own --include-dir: the exact name, which nearest_names
  // leaves out.
  if (long_name && find_option(given.command, name) != nullptr)
    return text + "; did you mean '" + name + "'?";
  // An option of another command, named exactly.
  std::vector<std::string> owners;
  collect_owners(root_of(given.command), given.command, name, owners);
  if (!owners.empty())
    return text + fmt::format(": {} is an option of {}, not of '{}'",
                              long_name ? "'" + name + "'" : std::string("it"), one_of(owners, "'"),
                              command_path(given.command));
  const std::vector<std::string> near = nearest_names(name, option_names(given.command));
  return near.empty() ? text : text + "; did you mean " + one_of(near, "'") + "?";
}

// A word with one dash that CLI11 took as a short option and its value ("-job" as "-j ob") when
// it looks like one of the command's long options: the name it most likely meant.
std::optional<std::string> misread_long_option(const OptionWord& given) {
  const std::optional<std::string> long_name = as_long_name(given.word);
  if (!long_name || find_option(given.command, option_name(given.word)) == nullptr)
    return std::nullopt;
  std::vector<std::string> longs;
  for (const std::string& name : option_names(given.command))
    if (name.rfind("--", 0) == 0) longs.push_back(name);
  if (std::find(longs.begin(), longs.end(), *long_name) != longs.end()) return long_name;
  const std::vector<std::string> near = nearest_names(*long_name, longs);
  if (near.size() != 1) return std::nullopt;
  return near.front();
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// CLI11's message in the tool's words where they differ.
std::string parse_error_text(CLI::App* command, const CLI::ParseError& error) {
  const std::string what = error.what();
  if (what == "A subcommand is required") {
    std::vector<std::string> names;
    for (CLI::App* sub : subcommands_of(*command)) names.push_back(sub->get_name());
    return "a subcommand is required: " + join_names(names);
  }
  return printable(what);
}

// "hipacm: error: CMD: ...", as `hipacm run` says its own: every usage error starts with
// "hipacm: error:", and names the command it was given to.
int print_errors(CLI::App* command, const std::vector<std::string>& lines) {
  const std::string path = command_path(command);
  const std::string where =
      command->get_parent() == nullptr ? "" : path.substr(path.find(' ') + 1) + ": ";
  for (const std::string& line : lines) fmt::print(stderr, "hipacm: error: {}{}\n", where, line);
  fmt::print(stderr, "Run '{} --help' for more information.\n", path);
  return kExitUsage;
}

}  // namespace

std::vector<CLI::App*> subcommands_of(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

const CLI::Option* find_option(CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* option = app->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

std::string command_path(const CLI::App* command) {
  std::string path;
  for (; command != nullptr; command = command->get_parent())
    path = command->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

int report_argument_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  const Walk walked = walk(app, argc, argv);
  std::vector<std::string> lines;
  CLI::App* command = walked.command;
  for (const OptionWord& given : walked.options) {
    if (find_option(given.command, option_name(given.word)) != nullptr) continue;
    if (lines.empty()) command = given.command;
    lines.push_back(unknown_option_text(given));
  }
  // The unknown options are what CLI11's "not expected" names; any other error is said too.
  if (lines.empty() || dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr)
    lines.push_back(parse_error_text(walked.command, error));
  for (const OptionWord& given : walked.options) {
    if (const std::optional<std::string> meant = misread_long_option(given))
      lines.push_back(fmt::format("'{}' is read as '{} {}'; did you mean '{}'?",
                                  printable(given.word), given.word.substr(0, 2),
                                  printable(given.word.substr(2)), *meant));
  }
  return print_errors(command, lines);
}

int check_single_dash_words(CLI::App& app, int argc, char** argv) {
  const Walk walked = walk(app, argc, argv);
  for (const OptionWord& given : walked.options) {
    const std::optional<std::string> long_name = as_long_name(given.word);
    // Only an exact long name: "-DEBUG" is "-D EBUG", never a typo of --define.
    if (!long_name || find_option(given.command, option_name(given.word)) == nullptr ||
        find_option(given.command, *long_name) == nullptr)
      continue;
    return print_errors(
        given.command,
        {fmt::format("'{}' would be read as '{} {}'; did you mean '{}'?", printable(given.word),
                     given.word.substr(0, 2), printable(given.word.substr(2)), *long_name)});
  }
  return -1;
}

int run_help(CLI::App& app, const std::vector<std::string>& words) {
  CLI::App* command = &app;
  for (const std::string& word : words) {
    const std::vector<CLI::App*> commands = subcommands_of(*command);
    CLI::App* next = nullptr;
    for (CLI::App* sub : commands)
      if (sub->check_name(word)) next = sub;
    if (next != nullptr) {
      command = next;
      continue;
    }
    std::vector<std::string> names;
    for (CLI::App* sub : commands) names.push_back(sub->get_name());
    const std::string where = command == &app ? "" : command->get_name() + " ";
    std::string why;
    if (names.empty()) {
      why = fmt::format("'{}' has no commands ('{}' is not one)", command_path(command),
                        printable(word));
    } else {
      const std::vector<std::string> near = nearest_names(word, names);
      why = fmt::format("unknown {}command '{}'; {}", where, printable(word),
                        near.empty() ? "the commands are " + join_names(names)
                                     : "did you mean " + one_of(near, "'") + "?");
    }
    fmt::print(
        stderr, "hipacm: error: help: {}\nRun 'hipacm help{}' for more information.\n", why,
        command == &app ? "" : " " + command_path(command).substr(app.get_name().size() + 1));
    return kExitUsage;
  }
  // What `hipacm CMD --help` prints: CLI11 names the command by the path above it.
  const CLI::App* parent = command->get_parent();
  fmt::print("{}", command->help(parent == nullptr ? "" : command_path(parent)));
  return kExitOk;
}

}  // namespace hipacm::cli
