// SPDX-License-Identifier: MIT
// doctor_command.cpp - `hipacm doctor`: reports what hipacm found here and what to fix.
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>

#include "support/settings.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/terminal_text.h"
#include "tools/doctor/accepted_archs.h"
#include "tools/doctor/doctor_checks.h"
#include "tools/doctor/remote_check.h"

namespace hipacm::cli {
namespace {

struct DoctorOptions {
  bool json = false;
  bool archs = false;
};

void print_checks(const std::vector<Check>& checks) {
  for (const Check& check : checks) {
    // Summaries quote paths from the environment and names from the libraries found.
    fmt::print("[{:<7}] {:<8} {}\n", level_name(check.level), check.name, printable(check.summary));
    if (!check.hint.empty()) fmt::print("{:<19}hint: {}\n", "", printable(check.hint));
  }
  fmt::print("{}\n", usable(checks) ? "hipacm is usable here."
                                    : "hipacm cannot compile here: fix the errors above.");
}

// Every variable of the settings list (support/settings.h), with what this process reads in it:
// the same list as docs/SETTINGS.md and the man page's ENVIRONMENT section.
nlohmann::ordered_json settings_report() {
  auto or_null = [](const char* text) {
    return *text == '\0' ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
  };
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const settings::Info& setting : settings::list()) {
    std::optional<std::string> value = settings::text(setting.id);
    // The remote cache's URL may carry a password, which doctor never shows.
    if (value && setting.id == settings::Id::kRemoteCache) value = displayable_remote_url(*value);
    list.push_back({{"name", setting.name},
                    {"value", value ? nlohmann::ordered_json(*value) : nullptr},
                    {"takes", setting.takes},
                    {"default", setting.default_value},
                    {"overrides", or_null(setting.config_field)},
                    {"for", settings::audience_word(setting.audience)},
                    {"replaced_by", or_null(setting.replaced_by)}});
  }
  return list;
}

// One arch a line and nothing else: the shell completions' list of --arch values.
int print_accepted_archs() {
  const std::vector<std::string> archs = accepted_archs();
  for (const std::string& arch : archs) fmt::print("{}\n", printable(arch));
  if (!archs.empty()) return kExitOk;
  fmt::print(stderr,
             "hipacm: error: neither comgr nor NVRTC was found here: no arch is accepted "
             "(run 'hipacm doctor' for the details)\n");
  return kExitFailures;
}

int run(const DoctorOptions& options) {
  if (options.archs) return print_accepted_archs();
  const std::vector<Check> checks = run_doctor_checks();
  if (options.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Check& check : checks) {
      list.push_back({{"name", check.name},
                      {"level", level_name(check.level)},
                      {"summary", check.summary},
                      {"hint", check.hint.empty() ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(check.hint)},
                      {"details", check.details}});
    }
    write_json({{"schema", "hipacm-doctor-1"},
                {"usable", usable(checks)},
                {"checks", list},
                {"settings", settings_report()}},
               "-");
  } else {
    print_checks(checks);
  }
  return usable(checks) ? kExitOk : kExitFailures;
}

}  // namespace

void add_doctor_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check the compiler backend, worker, cache, default arch and GPU devices");
  CLI::Option* json =
      doctor->add_flag("--json", options->json, "Print a JSON document instead of text");
  doctor
      ->add_flag("--archs", options->archs,
                 "Print only the archs the compilers here accept, one a line (comgr's gfx "
                 "processors, then NVRTC's as sm_NN and compute_NN); the shell completions "
                 "offer them for --arch")
      ->excludes(json);
  finish_command(
      doctor, context, [options] { return run(*options); },
      {"hipacm doctor", "hipacm doctor --json | jq '.checks[] | select(.level != \"ok\")'",
       "hipacm doctor --archs | grep gfx11"},
      "0 usable (warnings allowed), 1 hipacm cannot compile here (with --archs: no arch is "
      "accepted), 2 usage error.");
}

}  // namespace hipacm::cli
