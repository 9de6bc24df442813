// SPDX-License-Identifier: MIT
// path_options.cpp - which compile options name files or directories, and the one rewrite that
// anchors their relative paths at the host's working directory.
#include "plugin/cache/key/path_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>

namespace hipacm::cache {
namespace {

// Other options whose value is a file or directory the compiler reads or writes: the next option,
// after '=', or (where `joined`) right after the name.
struct PathOption {
  std::string_view name;
  bool joined;
};
constexpr PathOption kPathOptions[] = {
    {"-include-pch", false},
    {"-ivfsoverlay", true},
    {"-isysroot", true},
    {"-iprefix", true},
    {"-iframework", true},
    {"-resource-dir", false},
    {"--sysroot", false},
    {"--config", false},
    {"-mlink-builtin-bitcode", false},
    {"-mlink-bitcode-file", false},
    {"--dependency-output", false},
    {"-MF", true},
    {"-F", true},
    {"-B", true},
    {"-L", true},
};
// Options that name a file or directory only after '=' (the spelling with '=' included).
constexpr std::string_view kPathAfterEqualsOptions[] = {
    "--gcc-toolchain=",
    "--gcc-install-dir=",
    "--rocm-path=",
    "--hip-path=",
    "--rocm-device-lib-path=",
    "--hip-device-lib-path=",
    "--cuda-path=",
    "-fplugin=",
    "-fpass-plugin=",
    "-fprofile-use=",
    "-fprofile-instr-use=",
    "-fprofile-sample-use=",
    "-fprofile-list=",
    "-fprofile-remapping-file=",
    "-fprofile-generate=",
    "-fprofile-instr-generate=",
    "-fcs-profile-generate=",
    "-fsanitize-blacklist=",
    "-fsanitize-ignorelist=",
    "-fsanitize-system-ignorelist=",
    "-fsanitize-coverage-allowlist=",
    "-fsanitize-coverage-blocklist=",
    "-fxray-always-instrument=",
    "-fxray-never-instrument=",
    "-fxray-attr-list=",
    "-fmodules-cache-path=",
    "-fprebuilt-module-path=",
    "-fmodule-map-file=",
    "-fembed-offload-object=",
    "-fcrash-diagnostics-dir=",
    "-fthinlto-index=",
    "--pch-dir=",
    "--use-pch=",
    "--create-pch=",
};
// A prefix table's entry as a PathOption: its value joined (or after its own '=').
PathOption path_option(const PathOption& option) { return option; }
PathOption path_option(std::string_view prefix) { return {prefix, true}; }
// Options whose next option is handed to another tool as it is: never read as an option here.
constexpr std::string_view kPassThroughOptions[] = {
    "-Xclang",       "-Xpreprocessor", "-Xassembler",      "-Xlinker",     "-mllvm",
    "-Xarch_device", "-Xarch_host",    "-Xoffload-linker", "-Xcuda-ptxas", "-Xcuda-fatbinary",
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_relative(std::string_view path) { return !path.empty() && path.front() != '/'; }

/// The working directory, read once per rewrite and only when a relative path needs it.
class WorkingDirectory {
 public:
  const Expected<std::string>& get() {
    if (!path_) path_.emplace(read());
    return *path_;
  }

 private:
  static Expected<std::string> read() {
    std::string buffer(PATH_MAX + 1, '\0');
    if (::getcwd(buffer.data(), buffer.size()) == nullptr) {
      const int error = errno;
      return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                     "the working directory cannot be read (" + std::string(std::strerror(error)) +
                         "), so relative paths in the options mean nothing"};
    }
    buffer.resize(std::char_traits<char>::length(buffer.c_str()));
    return buffer;
  }

  std::optional<Expected<std::string>> path_;
};

/// Where option i's value is: joined after `prefix` (after an '=' too), or the next option.
/// Returns false when option i does not start with `prefix`.
/// With `joined` false, only "NAME", "NAME=VALUE" and "NAME VALUE" are this option.
bool value_of(std::vector<std::string>& options, std::size_t* i, std::string_view prefix,
              bool joined, std::string** owner, std::size_t* offset) {
  const std::string& option = options[*i];
  if (!starts_with(option, prefix)) return false;
  std::size_t at = prefix.size();
  if (!joined && at < option.size() && option[at] != '=') return false;
  if (at < option.size() && option[at] == '=' && prefix.back() != '=') ++at;
  // "NAME=" of an option spelled with its '=' has an empty value, never the next option.
  if (prefix.back() == '=' || at < option.size()) {
    *owner = &options[*i];
    *offset = at;
  } else if (*i + 1 < options.size()) {
    *owner = &options[++*i];
    *offset = 0;
  } else {
    *owner = nullptr;  // no value: the compiler reports it
  }
  return true;
}

}  // namespace

Expected<void> anchor_relative_paths(std::vector<std::string>* options_in) {
  std::vector<std::string>& options = *options_in;
  WorkingDirectory cwd;
  // Anchors the value at owner[offset...] when it is relative; `forced` only when it exists.
  const auto anchor = [&](std::string* owner, std::size_t offset, bool forced,
                          bool needs_slash) -> Expected<void> {
    if (owner == nullptr) return {};
    const std::string_view value = std::string_view(*owner).substr(offset);
    // "-I-" and the like are switches, not paths.
    if (!is_relative(value) || value == "-") return {};
    // A configuration file named without a directory is looked up in the compiler's own
    // configuration directories, not here.
    if (needs_slash && value.find('/') == std::string_view::npos) return {};
    const Expected<std::string>& dir = cwd.get();
    if (!dir) return dir.failure();
    std::string absolute = dir.value() + "/" + std::string(value);
    if (forced) {
      struct stat st {};
      if (::lstat(absolute.c_str(), &st) != 0) return {};  // found along the include path
    }
    owner->replace(offset, std::string::npos, absolute);
    return {};
  };
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string_view option = options[i];
    // Macro text and what another tool receives are never paths to us.
    if (option == "-D" || option == "-U") {
      ++i;
      continue;
    }
    if (starts_with(option, "-D") || starts_with(option, "-U")) continue;
    bool skip_next = false;
    for (std::string_view pass : kPassThroughOptions) skip_next = skip_next || option == pass;
    if (skip_next || starts_with(option, "-Xarch_")) {
      ++i;
      continue;
    }
    if (starts_with(option, "@")) {
      if (Expected<void> anchored = anchor(&options[i], 1, false, false); !anchored)
        return anchored;
      continue;
    }
    std::string* owner = nullptr;
    std::size_t offset = 0;
    Expected<void> anchored;
    // The first option of `table` that this one is: its value is anchored, `forced` as a forced
    // include.
    const auto anchor_first = [&](const auto& table, bool forced) {
      for (const auto& entry : table) {
        const PathOption path = path_option(entry);
        if (value_of(options, &i, path.name, path.joined, &owner, &offset)) {
          anchored = anchor(owner, offset, forced, path.name == "--config");
          return true;
        }
      }
      return false;
    };
    // The tables in turn until one has the option: -include-pch before -include, the longest
    // spellings first within each table.
    (void)(anchor_first(kPathOptions, false) || anchor_first(kPathAfterEqualsOptions, false) ||
           anchor_first(kIncludeDirOptions, false) || anchor_first(kForcedIncludeOptions, true));
    if (!anchored) return anchored;
  }
  return {};
}

}  // namespace hipacm::cache
