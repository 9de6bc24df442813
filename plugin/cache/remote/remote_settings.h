// SPDX-License-Identifier: MIT
// remote_settings.h - whether and how a mode uses the remote cache: from its config and the
// environment, resolved once at mode enter.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "plugin/cache/remote/remote_address.h"
#include "support/settings.h"

namespace hipacm::cache::remote {

using Mode = settings::RemoteCacheMode;

struct RemoteSettings {
  RemoteAddress address;  ///< with the password file's password when the URL names none
  Mode mode = Mode::kRead;
  std::string key_file;  ///< empty: none, and nothing from the remote is served
  /// The limit on a connect and on each command.
  std::chrono::milliseconds timeout{250};
};

/// The remote cache a mode uses: `mode_url` (the config's remote_cache) when not empty, else
/// $HIPACM_REMOTE_CACHE; nullopt when neither names one, or the one named is `off`. Throws
/// hipacm::StatusError (INVALID_ARGUMENT) for a malformed URL or $HIPACM_REMOTE_CACHE_MODE; a
/// password file that cannot be used is reported once and left out.
std::optional<RemoteSettings> resolve_remote_settings(const std::string& mode_url);

}  // namespace hipacm::cache::remote
