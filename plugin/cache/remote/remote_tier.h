// SPDX-License-Identifier: MIT
// remote_tier.h - the remote cache tier below a mode's local cache: verified reads on a local
// miss, background signed writes after a compile, and claims that let other machines wait for a
// compile already under way instead of repeating it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "plugin/cache/remote/circuit_breaker.h"
#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_settings.h"
#include "plugin/cache/remote/signing_key.h"
#include "plugin/cache/store/entry.h"

namespace hipacm::cache::remote {

/// The Redis key of an entry's value and of the claim on its compile.
std::string entry_key(const std::string& cache_key);
std::string claim_key(const std::string& cache_key);

/// One mode's use of the remote cache. Every call is bounded (the settings' timeout per command,
/// a circuit breaker after repeated failures) and none throws or fails a compile: a remote that
/// is down, slow, full or serving bad values reads as a miss, with one warning.
class RemoteTier {
 public:
  /// Loads the key file (a missing or unsafe one is reported once; the tier then serves nothing
  /// and writes nothing). `identity` tells this cache apart from other machines' (their claims
  /// are waited for, this one's own are not): the local cache's database path.
  RemoteTier(RemoteSettings settings, const std::string& identity);
  /// Writes what is queued (for at most a few timeouts), releases the claims still held, and
  /// joins the writer thread.
  ~RemoteTier();
  RemoteTier(const RemoteTier&) = delete;
  RemoteTier& operator=(const RemoteTier&) = delete;

  /// Whether entries may be served: a key is loaded.
  bool serves() const noexcept { return key_.has_value(); }
  /// Whether compiles are published: read-write with a key.
  bool writes() const noexcept { return serves() && settings_.mode == Mode::kReadWrite; }
  const RemoteSettings& settings() const noexcept { return settings_; }

  /// The entry stored under `cache_key` when it verifies (signature, key, bounds), else nullopt:
  /// absent, refused (logged, counted) or the remote unreachable. The caller still checks it
  /// against its request.
  std::optional<CacheEntry> fetch(const std::string& cache_key) noexcept;
  /// Remembers that the value under `cache_key` was refused (here or by the caller's checks), so
  /// that it is neither fetched nor reported again while this tier lives.
  void refuse(const std::string& cache_key) noexcept;

  /// A writer announces that it will compile `cache_key` (a claim that expires unless this
  /// process lives on): true when it holds the claim now. A reader never claims.
  bool claim(const std::string& cache_key) noexcept;

  /// While another machine's claim on `cache_key` stands, polls for its entry, up to `limit`:
  /// the verified entry when it came, else nullopt (no claim, the claim ended, or the limit).
  /// After one wait that reached its limit, later calls wait for no claim (one warning).
  std::optional<CacheEntry> await_other_compile(const std::string& cache_key,
                                                std::chrono::milliseconds limit) noexcept;

  /// Queues `entry` to be signed and put (if absent) by the writer thread, which then releases
  /// this process's claim on it. Returns at once; a full queue drops it (counted).
  void publish(const CacheEntry& entry) noexcept;

  /// Lets go of this process's claim on `cache_key` (its compile stored nothing).
  void release(const std::string& cache_key) noexcept;

  /// Waits up to `limit` until everything queued has been put (or dropped).
  void drain(std::chrono::milliseconds limit) noexcept;

 private:
  /// One write-back job: put `entry` (when set), then release this process's claim on
  /// `cache_key` (when it holds one).
  struct Job {
    std::optional<CacheEntry> entry;
    std::string cache_key;
  };
  /// A connection from the pool, or a new one; nullopt (counted) when the breaker is open or
  /// the connect fails.
  std::optional<RedisConnection> connection() noexcept;
  void give_back(RedisConnection connection) noexcept;
  /// Records the outcome of a call for the breaker; warns once when it opens.
  void call_failed(const Failure& failure) noexcept;
  void call_succeeded() noexcept;
  /// One GET and its checks; *absent tells a miss from a refusal or a fault.
  std::optional<CacheEntry> fetch_with(RedisConnection& redis, const std::string& cache_key,
                                       bool* absent);
  void writer_loop() noexcept;
  void put_one(RedisConnection& redis, const CacheEntry& entry);
  void refresh_claims(RedisConnection& redis, const std::vector<std::string>& cache_keys);
  void ensure_writer() noexcept;

  const RemoteSettings settings_;
  const std::string token_prefix_;  ///< this cache's identity in the claims it takes
  std::optional<SigningKey> key_;
  CircuitBreaker breaker_;
  std::atomic<bool> claims_ignored_{false};  ///< a claim outlived a whole wait: wait no more
  const std::uint64_t epoch_;  ///< fork_epoch() at construction: a child's copy owns no thread

  std::mutex pool_mutex_;
  std::vector<RedisConnection> idle_;
  /// Keys whose value this tier refused: not fetched (or reported) again while it lives.
  std::set<std::string> refused_;

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<Job> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  std::map<std::string, std::string> held_claims_;  ///< cache key -> this process's token
  std::thread writer_;
};

}  // namespace hipacm::cache::remote
