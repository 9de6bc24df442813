// SPDX-License-Identifier: MIT
// remote_check.h - `hipacm doctor`'s check of the remote cache tier the environment names.
#pragma once

#include <optional>

#include "tools/doctor/doctor_checks.h"

namespace hipacm::cli {

/// nullopt when no remote cache is named ($HIPACM_REMOTE_CACHE unset, empty or `off`). Otherwise
/// its address (never its password), whether it answers a PING within the timeout, the mode,
/// whether the key is there and usable (its fingerprint, never the key), and in read-write mode a
/// signed round trip: a probe entry put with a short expiry, read back, verified and deleted.
std::optional<Check> remote_cache_check();

/// $HIPACM_REMOTE_CACHE as doctor may show it: its password replaced (RemoteAddress::display),
/// or the text unchanged when it is not a URL that parses.
std::string displayable_remote_url(const std::string& value);

}  // namespace hipacm::cli
