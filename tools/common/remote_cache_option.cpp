// SPDX-License-Identifier: MIT
// remote_cache_option.cpp - the remote cache a command is pointed at, from its options and the
// environment, with no password on the command line.
#include "tools/common/remote_cache_option.h"

#include <fmt/core.h>

#include <exception>

#include "plugin/cache/remote/remote_address.h"
#include "support/settings.h"
#include "tools/common/exit_codes.h"

namespace hipacm::cli {

void refuse_password_in_argv(const char* option, const std::string& url) {
  if (url.empty() || url == "off") return;
  Expected<cache::remote::RemoteAddress> address = cache::remote::parse_remote_address(url);
  // The parser's messages never hold the password, so they may be shown.
  if (!address) throw InputError(fmt::format("{}: {}", option, address.failure().message));
  if (address.value().password.empty()) return;
  // Any user of the machine can read another's command line (ps, /proc/PID/cmdline).
  throw InputError(fmt::format(
      "{} {}: a password on the command line is visible to every user of this machine; give "
      "the URL in ${} or the password in a file named by ${} (mode 0600) instead",
      option, address.value().display(), settings::name(settings::Id::kRemoteCache),
      settings::name(settings::Id::kRemoteCachePasswordFile)));
}

std::optional<cache::remote::RemoteSettings> command_remote_settings(
    const std::string& url_option, const std::string& mode_option,
    const std::string& key_file_option) {
  refuse_password_in_argv("--remote-cache", url_option);
  std::optional<cache::remote::RemoteSettings> remote;
  try {
    remote = cache::remote::resolve_remote_settings(url_option);
  } catch (const std::exception& e) {
    // A malformed URL or $HIPACM_REMOTE_CACHE_MODE: the message never holds the password.
    throw InputError(e.what());
  }
  if (!remote) return remote;
  if (mode_option == "read")
    remote->mode = cache::remote::Mode::kRead;
  else if (mode_option == "read-write")
    remote->mode = cache::remote::Mode::kReadWrite;
  else if (!mode_option.empty())
    throw InputError(fmt::format("--mode {}: expected read or read-write", mode_option));
  if (!key_file_option.empty()) remote->key_file = key_file_option;
  return remote;
}

std::string remote_cache_display(const std::string& url_option) {
  const std::string url = !url_option.empty() ? url_option : settings::remote_cache().value_or("");
  if (url.empty() || url == "off") return "";
  Expected<cache::remote::RemoteAddress> address = cache::remote::parse_remote_address(url);
  return address ? address.value().display() : "";
}

const char* remote_mode_word(cache::remote::Mode mode) {
  return mode == cache::remote::Mode::kReadWrite ? "read-write" : "read";
}

}  // namespace hipacm::cli
