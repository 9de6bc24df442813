// SPDX-License-Identifier: MIT
// remote_settings.cpp - whether and how a mode uses the remote cache: from its config and the
// environment, resolved once at mode enter.
#include "plugin/cache/remote/remote_settings.h"

#include "support/files/secret_file.h"
#include "support/log.h"
#include "support/status_error.h"

namespace hipacm::cache::remote {
namespace {

// Redis passwords may be long (ACL passwords are often hashes or random tokens).
constexpr std::size_t kMaxPasswordBytes = 1024;

}  // namespace

std::optional<RemoteSettings> resolve_remote_settings(const std::string& mode_url) {
  const std::string url = !mode_url.empty() ? mode_url : settings::remote_cache().value_or("");
  if (url.empty() || url == "off") return std::nullopt;
  Expected<RemoteAddress> address = parse_remote_address(url);
  if (!address) {
    const std::string where =
        mode_url.empty() ? settings::name(settings::Id::kRemoteCache) : "remote_cache";
    throw StatusError(address.failure().status, where + ": " + address.failure().message);
  }
  Expected<settings::RemoteCacheMode> mode = settings::remote_cache_mode();
  if (!mode) throw StatusError(mode.failure().status, mode.failure().message);

  RemoteSettings out;
  out.address = std::move(address.value());
  out.mode = mode.value();
  out.key_file = settings::remote_cache_key_file().value_or("");
  out.timeout = std::chrono::milliseconds(settings::remote_cache_timeout_ms());
  if (out.address.password.empty()) {
    if (const std::optional<std::string> file = settings::remote_cache_password_file()) {
      std::string why;
      out.address.password = backend::read_secret_file(*file, 1, kMaxPasswordBytes, &why);
      if (out.address.password.empty())
        backend::log_once(backend::LogLevel::kWarning, "remote-cache-password-file",
                          std::string(settings::name(settings::Id::kRemoteCachePasswordFile)) +
                              ": " + why + "; connecting to " + out.address.display() +
                              " without a password");
    }
  }
  return out;
}

}  // namespace hipacm::cache::remote
