// SPDX-License-Identifier: MIT
// cache_remote.h - `hipacm cache remote stats|push|pull`: the remote cache tier (Redis) seen from
// a machine's local cache, and what those subcommands share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_settings.h"
#include "tools/cache/cache_options.h"
#include "tools/common/commands.h"

namespace hipacm::cli {

struct RemoteCommandOptions {
  std::string url;       ///< --remote-cache; "" = $HIPACM_REMOTE_CACHE
  std::string mode;      ///< --mode; "" = $HIPACM_REMOTE_CACHE_MODE
  std::string key_file;  ///< --key-file; "" = $HIPACM_REMOTE_CACHE_KEY_FILE
  bool json = false;
  bool dry_run = false;                 ///< push: count, write nothing
  std::vector<std::string> paths;       ///< pull: manifests, record files, kernel files
  std::vector<std::string> archs;       ///< pull: --arch
  bool allow_compiler_plugins = false;  ///< pull: as warmup's
};

/// The remote the options or the environment name; InputError when none is named.
cache::remote::RemoteSettings require_remote(const RemoteCommandOptions& options);

/// A connection within the settings' timeout; InputError-free: the failure is returned.
Expected<cache::remote::RedisConnection> connect(const cache::remote::RemoteSettings& remote);

/// `cache remote push` (cache_remote_push.cpp): every valid local entry, signed, put if absent.
int run_remote_push(const CacheOptions& cache, const RemoteCommandOptions& options);
/// `cache remote pull` (cache_remote_pull.cpp): what the request files need, verified, stored.
int run_remote_pull(const CacheOptions& cache, const RemoteCommandOptions& options);

/// Adds `remote` and its subcommands under `cache` (cache_remote_command.cpp).
void add_cache_remote_command(CLI::App* cache_cmd, std::shared_ptr<CacheOptions> cache,
                              AppContext& context);

}  // namespace hipacm::cli
