// SPDX-License-Identifier: MIT
// code_loading_options.cpp - finds compiler options that load code into the compiler.
#include "hip_backend/code_loading_options.h"

#include <array>
#include <string_view>

namespace hipacm::backend {
namespace {

struct Rule {
  std::string_view name;  // without leading dashes or "=VALUE"
  bool prefix;            // also every name that starts with it
  std::string_view why;
};

// Matched against a name with its leading dashes and any "=VALUE" removed, so that `-load`,
// `--load`, `-load=x.so` and `-fplugin=x.so` are all found.
constexpr std::array<Rule, 12> kRules{{
    {"load", false, "loads a shared library into the compiler"},
    {"plugin", true, "loads or runs a Clang plugin"},  // also -plugin-arg-NAME
    {"add-plugin", false, "runs a Clang plugin"},
    {"fplugin", true, "loads a Clang plugin"},  // also -fplugin-arg-NAME
    {"fpass-plugin", false, "loads an LLVM pass plugin"},
    {"load-pass-plugin", false, "loads an LLVM pass plugin"},
    {"pass-plugin", false, "loads an LLVM pass plugin"},
    {"config", true, "reads more options from a file"},  // --config, --config-system-dir=
    {"prefix", false, "runs compiler tools from another directory"},
    {"fuse-ld", false, "runs another linker"},
    {"ld-path", false, "runs another linker"},
    {"ccc-install-dir", false, "runs compiler tools from another directory"},
}};

constexpr std::string_view kStateRules[] = {"Xclang", "mllvm"};

// What follows the forwarding options: each part is another option given to the next stage.
constexpr std::string_view kJoinedForwards[] = {
    "-Xclang=", "-mllvm=", "-Xlinker=", "-Xoffload-linker=", "-Xarch_device=", "-Xarch_host="};

// One token: an option, or a part that a forwarding option hands on.
std::optional<std::string_view> judge_token(std::string_view token);

std::optional<std::string_view> judge_name(std::string_view token) {
  if (token.empty()) return std::nullopt;
  if (token.front() == '@') return "reads more options from a file";
  if (token.front() != '-') return std::nullopt;
  // -B DIR and -BDIR: where the driver looks for the programs it runs (not -Bstatic and the like,
  // which it passes to the linker).
  if (token.size() >= 2 && token[1] == 'B' && token.rfind("-Bstatic", 0) != 0 &&
      token.rfind("-Bdynamic", 0) != 0 && token.rfind("-Bsymbolic", 0) != 0)
    return "runs compiler tools from another directory";
  std::string_view name = token.substr(token.size() > 1 && token[1] == '-' ? 2 : 1);
  name = name.substr(0, name.find('='));
  for (const Rule& rule : kRules)
    if (rule.prefix ? name.rfind(rule.name, 0) == 0 : name == rule.name) return rule.why;
  return std::nullopt;
}

std::optional<std::string_view> judge_token(std::string_view token) {
  if (auto why = judge_name(token)) return why;
  for (std::string_view forward : kJoinedForwards)
    if (token.rfind(forward, 0) == 0) return judge_token(token.substr(forward.size()));
  // -Wl,A,B and -Wa,A,B: each part goes to the linker or assembler.
  if (token.rfind("-Wl,", 0) == 0 || token.rfind("-Wa,", 0) == 0) {
    std::string_view rest = token.substr(4);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (auto why = judge_token(rest.substr(0, comma))) return why;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<CodeLoadingOption> find_code_loading_option(const std::vector<std::string>& options) {
  for (std::size_t i = 0; i < options.size(); ++i)
    if (const auto why = judge_token(options[i]))
      return CodeLoadingOption{i, options[i], std::string(*why)};
  return std::nullopt;
}

bool options_leave_compiler_state(const std::vector<std::string>& options) {
  if (find_code_loading_option(options)) return true;
  for (const std::string& option : options) {
    const std::string_view token(option);
    const std::string_view name = token.substr(token.rfind("--", 0) == 0 ? 2 : 1);
    for (std::string_view rule : kStateRules)
      if (!token.empty() && token.front() == '-' && name.rfind(rule, 0) == 0) return true;
  }
  return false;
}

}  // namespace hipacm::backend
