// SPDX-License-Identifier: MIT
// redis_connection.h - one connection to a Redis server (hiredis), every call bounded by the
// timeouts it was opened with; only the commands the remote cache uses.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/cache/remote/remote_address.h"
#include "support/failure.h"

struct redisContext;

namespace hipacm::cache::remote {

/// A connection. Not thread-safe: one thread uses it at a time (the tier keeps a pool).
/// A failed call returns a Failure whose message names the server by its display() form;
/// after an I/O failure (refused, reset, timed out) usable() is false and the connection is
/// dropped, while a reply error (OOM when full, NOPERM, WRONGTYPE) leaves it usable.
class RedisConnection {
 public:
  /// Connects within `timeout`, sets it as the limit of every later command, then
  /// authenticates (AUTH [user] password, when the address has a password) and selects its db.
  /// Failures: HIPACM_ERROR_BACKEND_UNAVAILABLE (unreachable, timed out, refused the password).
  static Expected<RedisConnection> open(const RemoteAddress& address,
                                        std::chrono::milliseconds timeout);

  RedisConnection(RedisConnection&&) noexcept;
  RedisConnection& operator=(RedisConnection&&) noexcept;
  ~RedisConnection();

  bool usable() const noexcept;

  /// GET bounded at `max_bytes`: nullopt when the key is absent; a value longer than
  /// `max_bytes` is a failure that never transfers more than max_bytes + 1 bytes (GETRANGE).
  Expected<std::optional<std::string>> get(std::string_view key, std::size_t max_bytes);
  /// SET key value [NX] [PX ttl]: true when it was set, false when `if_absent` and the key
  /// existed. A ttl of 0 sets no expiry.
  Expected<bool> set(std::string_view key, std::string_view value, bool if_absent,
                     std::chrono::milliseconds ttl = std::chrono::milliseconds(0));
  /// Deletes `key` only while it holds `value` (a compare-and-delete script): true when deleted.
  Expected<bool> delete_if_equal(std::string_view key, std::string_view value);
  /// PEXPIRE key ttl: true when the key exists.
  Expected<bool> expire(std::string_view key, std::chrono::milliseconds ttl);
  Expected<bool> exists(std::string_view key);
  Expected<std::int64_t> increment(std::string_view key);
  /// One SCAN step over keys matching `pattern`: the next cursor (0 when done) and its keys.
  struct ScanPage {
    std::uint64_t cursor = 0;
    std::vector<std::string> keys;
  };
  Expected<ScanPage> scan(std::uint64_t cursor, std::string_view pattern, std::size_t count);
  /// INFO `section`, as text (bounded at 1 MiB).
  Expected<std::string> info(std::string_view section);
  /// CONFIG GET `name` (empty when the server does not allow it).
  Expected<std::string> config_get(std::string_view name);
  Expected<void> ping();

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const noexcept;
  };
  RedisConnection(std::unique_ptr<redisContext, ContextDeleter> context, std::string server);
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::string server_;  ///< display() of the address, for messages
};

}  // namespace hipacm::cache::remote
