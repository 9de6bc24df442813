// SPDX-License-Identifier: MIT
// remote_cache_option.h - the remote cache a command is pointed at: `--remote-cache URL` (never
// with a password: a command line is readable by every user of the machine) or the environment,
// with the command's own --mode and --key-file over the environment's.
#pragma once

#include <optional>
#include <string>

#include "plugin/cache/remote/remote_settings.h"

namespace hipacm::cli {

/// Throws InputError when `url`, given as `option` on the command line, holds a password, telling
/// the user where a password belongs instead. A malformed URL is an InputError too. "" and "off"
/// pass.
void refuse_password_in_argv(const char* option, const std::string& url);

/// The remote settings of a command: `url_option` (checked by refuse_password_in_argv) or
/// $HIPACM_REMOTE_CACHE, then `mode_option` ("read", "read-write"; "" = the environment's) and
/// `key_file_option` ("" = the environment's) over what the environment says. nullopt when none
/// is named. Throws InputError for a malformed URL or mode.
std::optional<cache::remote::RemoteSettings> command_remote_settings(
    const std::string& url_option, const std::string& mode_option,
    const std::string& key_file_option);

/// The remote a run uses as it may be shown (its password replaced): `url_option`, else
/// $HIPACM_REMOTE_CACHE; "" when neither names one (or names `off`) or it does not parse.
std::string remote_cache_display(const std::string& url_option);

/// "read" or "read-write".
const char* remote_mode_word(cache::remote::Mode mode);

}  // namespace hipacm::cli
