// SPDX-License-Identifier: MIT
// remote_check.cpp - `hipacm doctor`'s check of the remote cache tier: reachable, mode, key, and
// a signed round trip in read-write mode.
#include "tools/doctor/remote_check.h"

#include <fmt/core.h>

#include <chrono>
#include <exception>
#include <random>
#include <string>

#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_address.h"
#include "plugin/cache/remote/remote_settings.h"
#include "plugin/cache/remote/remote_value.h"
#include "plugin/cache/remote/signing_key.h"
#include "plugin/cache/store/entry.h"
#include "support/settings.h"

namespace hipacm::cli {
namespace {

using cache::remote::Mode;
using cache::remote::RedisConnection;
using cache::remote::RemoteSettings;
using cache::remote::SigningKey;

// A probe outlives a doctor killed mid-check by this long at most.
constexpr std::chrono::milliseconds kProbeTtl{10000};

std::string var(settings::Id id) { return std::string("$") + settings::name(id); }

// A random cache key: the 64 hex digits every value's key must be.
std::string probe_key() {
  std::random_device random;
  std::string key;
  for (int i = 0; i < 8; ++i) key += fmt::format("{:08x}", random());
  return key;
}

// Puts a signed probe, reads it back, verifies it and deletes it: "" when all of it worked.
std::string round_trip(RedisConnection& redis, const SigningKey& key) {
  const std::string cache_key = probe_key();
  // Beside the entries, not among them: stats never counts a probe.
  const std::string name = "hipacm:v1:doctor-probe:" + cache_key;
  cache::CacheEntry probe;
  probe.info.key = cache_key;
  probe.info.arch = "probe";
  probe.log = "hipacm doctor's round-trip probe";
  probe.checksum = cache::entry_checksum(probe);
  const std::string value = cache::remote::encode_remote_value(probe, key);
  Expected<bool> set = redis.set(name, value, /*if_absent=*/true, kProbeTtl);
  if (!set) return "put: " + set.failure().message;
  if (!set.value()) return "put: the probe's key was taken";
  std::string problem;
  Expected<std::optional<std::string>> got = redis.get(name, value.size());
  if (!got)
    problem = "get: " + got.failure().message;
  else if (!got.value())
    problem = "get: the probe was gone at once (evicted?)";
  else if (Expected<cache::CacheEntry> back =
               cache::remote::decode_remote_value(*got.value(), cache_key, key);
           !back)
    problem = "verify: " + back.failure().message;
  Expected<bool> deleted = redis.delete_if_equal(name, value);
  if (problem.empty() && !deleted) problem = "delete: " + deleted.failure().message;
  return problem;
}

}  // namespace

std::string displayable_remote_url(const std::string& value) {
  Expected<cache::remote::RemoteAddress> address = cache::remote::parse_remote_address(value);
  if (address) return address.value().display();
  // Not a URL that parses: it may still hold a password somewhere, so none of it is shown.
  return value == "off" || value.empty() ? value : "(not a valid redis:// URL)";
}

std::optional<Check> remote_cache_check() {
  Check check;
  check.name = "remote";
  std::optional<RemoteSettings> remote;
  try {
    remote = cache::remote::resolve_remote_settings("");
  } catch (const std::exception& e) {
    // Every mode enter would fail the same way. The message never holds the password.
    check.level = CheckLevel::kError;
    check.summary = fmt::format("remote cache setting refused: {}", e.what());
    check.hint = fmt::format(
        "fix {} or {} (redis://[user@]host[:port][/db]; mode read or "
        "read-write), or unset them",
        var(settings::Id::kRemoteCache), var(settings::Id::kRemoteCacheMode));
    return check;
  }
  if (!remote) return std::nullopt;
  const std::string where = remote->address.display();
  const char* mode = remote->mode == Mode::kReadWrite ? "read-write" : "read";
  check.details = {
      {"address", where},
      {"mode", mode},
      {"timeout_ms", remote->timeout.count()},
      {"reachable", false},
      {"key_file", remote->key_file.empty() ? nlohmann::ordered_json(nullptr)
                                            : nlohmann::ordered_json(remote->key_file)},
      {"key_fingerprint", nullptr},
      {"round_trip", nullptr}};

  std::optional<SigningKey> key;
  std::string key_problem;
  if (remote->key_file.empty()) {
    key_problem = "no key: nothing from the remote cache is served";
  } else if (Expected<SigningKey> loaded = SigningKey::load(remote->key_file); loaded) {
    key.emplace(std::move(loaded).value());
    check.details["key_fingerprint"] = key->fingerprint();
  } else {
    key_problem = fmt::format("key {} unusable: {}: nothing from the remote cache is served",
                              remote->key_file, loaded.failure().message);
  }

  Expected<RedisConnection> opened = RedisConnection::open(remote->address, remote->timeout);
  if (opened) {
    if (Expected<void> pong = opened.value().ping(); !pong)
      opened = Expected<RedisConnection>(pong.failure());
  }
  if (!opened) {
    check.level = CheckLevel::kWarning;
    check.summary =
        fmt::format("remote cache {} ({}) unreachable: {}", where, mode, opened.failure().message);
    check.hint = fmt::format(
        "compiles go on with the local cache; check the server, {} and {} (a password "
        "belongs in {}'s file)",
        var(settings::Id::kRemoteCache), var(settings::Id::kRemoteCacheTimeoutMs),
        var(settings::Id::kRemoteCachePasswordFile));
    return check;
  }
  check.details["reachable"] = true;
  check.summary = fmt::format("remote cache {} ({}) reachable", where, mode);
  if (!key) {
    check.level = CheckLevel::kWarning;
    check.summary += "; " + key_problem;
    check.hint = fmt::format("set {} to the fleet's key file (mode 0600)",
                             var(settings::Id::kRemoteCacheKeyFile));
    return check;
  }
  check.summary += fmt::format(", key {}", key->fingerprint());
  if (remote->mode != Mode::kReadWrite) return check;
  const std::string problem = round_trip(opened.value(), *key);
  check.details["round_trip"] =
      problem.empty() ? nlohmann::ordered_json("ok") : nlohmann::ordered_json(problem);
  if (problem.empty()) {
    check.summary += ", signed round trip ok";
  } else {
    check.level = CheckLevel::kWarning;
    check.summary += "; signed round trip failed: " + problem;
    check.hint =
        "writes to the remote cache will fail (quietly, counted): check the server's "
        "memory (maxmemory) and the user's permissions";
  }
  return check;
}

}  // namespace hipacm::cli
