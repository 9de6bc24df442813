// SPDX-License-Identifier: MIT
// cache_remote_push.cpp - `hipacm cache remote push`: every valid entry of this cache, signed and
// put to the remote unless it is there already.
#include <fmt/core.h>

#include <optional>
#include <string>
#include <vector>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/remote/remote_tier.h"
#include "plugin/cache/remote/remote_value.h"
#include "plugin/cache/remote/signing_key.h"
#include "support/settings.h"
#include "tools/cache/cache_remote.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

using cache::remote::RedisConnection;
using cache::remote::RemoteSettings;

struct PushReport {
  std::size_t pushed = 0;   ///< with --dry-run: would be pushed
  std::size_t present = 0;  ///< the remote had the key already
  std::vector<cache::RejectedEntry> failed;
  std::vector<cache::RejectedEntry> invalid;  ///< skipped: failed validate_entry, or too large
};

cache::remote::SigningKey load_key(const RemoteSettings& remote) {
  if (remote.mode != cache::remote::Mode::kReadWrite)
    throw InputError(
        fmt::format("push writes the remote cache: pass --mode read-write or set {}=read-write",
                    settings::name(settings::Id::kRemoteCacheMode)));
  if (remote.key_file.empty())
    throw InputError(
        fmt::format("push signs every entry, and no key is named: pass --key-file FILE or set {}",
                    settings::name(settings::Id::kRemoteCacheKeyFile)));
  Expected<cache::remote::SigningKey> key = cache::remote::SigningKey::load(remote.key_file);
  if (!key)
    throw InputError(fmt::format("{}: {}", printable(remote.key_file), key.failure().message));
  return std::move(key).value();
}

// One entry's put (with --dry-run, whether it is there), counted in *report; reconnects once
// after the connection was lost.
void push_one(std::optional<RedisConnection>* redis, const RemoteSettings& remote,
              const std::string& key, const std::string& value, bool dry_run, PushReport* report) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!*redis || !(*redis)->usable()) {
      Expected<RedisConnection> opened = connect(remote);
      if (!opened) {
        report->failed.push_back({key, opened.failure().message});
        return;
      }
      redis->emplace(std::move(opened).value());
    }
    const std::string redis_key = cache::remote::entry_key(key);
    if (dry_run) {
      Expected<bool> there = (*redis)->exists(redis_key);
      if (there) return void(++(there.value() ? report->present : report->pushed));
      if ((*redis)->usable() || attempt == 1)
        return report->failed.push_back({key, there.failure().message});
      continue;
    }
    // NX: an entry already there is never replaced (another writer's is as good, and a put must
    // not race a reader of the same key).
    Expected<bool> set = (*redis)->set(redis_key, value, /*if_absent=*/true);
    if (set) return void(++(set.value() ? report->pushed : report->present));
    if ((*redis)->usable() || attempt == 1)
      return report->failed.push_back({key, set.failure().message});
  }
}

nlohmann::ordered_json rejected_json(const std::vector<cache::RejectedEntry>& entries) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const cache::RejectedEntry& e : entries)
    list.push_back({{"key", e.key}, {"reason", e.reason}});
  return list;
}

}  // namespace

int run_remote_push(const CacheOptions& cache_options, const RemoteCommandOptions& options) {
  const RemoteSettings remote = require_remote(options);
  const cache::remote::SigningKey key = load_key(remote);
  cache::CacheAdmin admin = inspect_cache(cache_options);
  std::optional<RedisConnection> redis;
  if (Expected<RedisConnection> opened = connect(remote)) {
    redis.emplace(std::move(opened).value());
  } else {
    fmt::print(stderr, "hipacm: error: {}; nothing was pushed\n",
               printable(opened.failure().message));
    return kExitFailures;
  }

  PushReport report;
  for (const cache::EntryInfo& info : admin.list()) {
    std::optional<cache::CacheEntry> entry = admin.lookup(info.key);
    if (!entry) continue;  // evicted since the listing
    // What a reader would refuse is not worth the remote's memory.
    if (Expected<void> valid = cache::validate_entry(*entry, ""); !valid) {
      report.invalid.push_back({info.key, valid.failure().message});
      continue;
    }
    const std::string value = cache::remote::encode_remote_value(*entry, key);
    if (value.size() > cache::remote::kMaxRemoteValueBytes) {
      report.invalid.push_back(
          {info.key, fmt::format("{} bytes signed, over the remote's limit of {}", value.size(),
                                 cache::remote::kMaxRemoteValueBytes)});
      continue;
    }
    push_one(&redis, remote, info.key, value, options.dry_run, &report);
  }

  if (options.json) {
    write_json({{"schema", "hipacm-cache-remote-push-1"},
                {"path", admin.path()},
                {"remote", remote.address.display()},
                {"key_fingerprint", key.fingerprint()},
                {"dry_run", options.dry_run},
                {"pushed", report.pushed},
                {"present", report.present},
                {"failed", rejected_json(report.failed)},
                {"skipped_invalid", rejected_json(report.invalid)}},
               "-");
  } else {
    for (const cache::RejectedEntry& e : report.invalid)
      fmt::print("skipped  {}  {}\n", printable(e.key), printable(e.reason));
    for (const cache::RejectedEntry& e : report.failed)
      fmt::print("failed   {}  {}\n", printable(e.key), printable(e.reason));
    fmt::print("{} {} entries to {} ({} already there, {} failed, {} skipped as invalid){}\n",
               options.dry_run ? "would push" : "pushed", report.pushed,
               printable(remote.address.display()), report.present, report.failed.size(),
               report.invalid.size(), options.dry_run ? "; nothing was written" : "");
  }
  return report.failed.empty() ? kExitOk : kExitFailures;
}

}  // namespace hipacm::cli
