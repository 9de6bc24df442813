// SPDX-License-Identifier: MIT
// remote_tier.cpp - the remote cache tier below a mode's local cache: verified reads on a local
// miss, background signed writes after a compile, and claims that let other machines wait for a
// compile already under way instead of repeating it.
#include "plugin/cache/remote/remote_tier.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "plugin/cache/remote/remote_value.h"
#include "support/bytes/sha256.h"
#include "support/fork_epoch.h"
#include "support/log.h"
#include "support/settings.h"
#include "support/stats.h"

namespace hipacm::cache::remote {
namespace {

using backend::LogLevel;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kEntryPrefix = "hipacm:v1:entry:";
constexpr const char* kClaimPrefix = "hipacm:v1:claim:";

// Three failures in a row (a connect or command that timed out or was refused) and the remote is
// left alone for half a minute: a compile then pays nothing for a server that is down.
constexpr unsigned kBreakerThreshold = 3;
constexpr milliseconds kBreakerCoolDown{30000};
// A claim lives this long unless its holder refreshes it, so a writer that dies holds up other
// machines for at most this long; a live one refreshes it well before.
constexpr milliseconds kClaimTtl{15000};
constexpr milliseconds kClaimRefresh{5000};
constexpr std::size_t kMaxClaimTokenBytes = 128;
// The write-back queue's bounds: a compile never waits for the remote, and a remote that cannot
// keep up costs memory only up to these.
constexpr std::size_t kMaxQueuedJobs = 1024;
constexpr std::size_t kMaxQueuedBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxIdleConnections = 8;
constexpr std::size_t kMaxRefusedKeys = 65536;
// How long a mode's end waits for queued writes: a few commands' worth.
constexpr int kDrainTimeouts = 8;

void count(std::atomic<std::uint64_t>& counter) { backend::count(counter); }

// What names this machine: its machine id, else its host name.
std::string machine_name() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty() && id.size() <= 64) return id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) return host;
  return "unknown";
}

std::string random_hex(std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device source;
  std::string out;
  out.reserve(bytes * 2);
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned byte = source() & 0xFF;
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

}  // namespace

std::string entry_key(const std::string& cache_key) { return kEntryPrefix + cache_key; }
std::string claim_key(const std::string& cache_key) { return kClaimPrefix + cache_key; }

RemoteTier::RemoteTier(RemoteSettings settings, const std::string& identity)
    : settings_(std::move(settings)),
      token_prefix_([&] {
        Sha256 sha;
        sha.add_field("hipacm-remote-claim-identity");
        sha.add_field(machine_name());
        sha.add_field(identity);
        return sha.hex().substr(0, 16);
      }()),
      breaker_(kBreakerThreshold, kBreakerCoolDown),
      epoch_(fork_epoch()) {
  const std::string where = "remote cache " + settings_.address.display();
  if (settings_.key_file.empty()) {
    backend::log_once(LogLevel::kWarning, "remote-cache-no-key",
                      where + ": no key (" + settings::name(settings::Id::kRemoteCacheKeyFile) +
                          " is unset), so nothing from it is trusted: it serves nothing and " +
                          "nothing is written to it");
    return;
  }
  Expected<SigningKey> key = SigningKey::load(settings_.key_file);
  if (!key) {
    backend::log_once(LogLevel::kWarning, "remote-cache-bad-key",
                      where + ": " + key.failure().message +
                          "; without a usable key nothing from it is served or written");
    return;
  }
  key_.emplace(std::move(key.value()));
  backend::log(LogLevel::kDebug,
               where + ": " + (writes() ? "read-write" : "read") + ", key " + key_->fingerprint());
}

RemoteTier::~RemoteTier() {
  if (epoch_ != fork_epoch()) {
    // A fork()ed child's copy: the writer thread and any lock it held are the parent's. The
    // handle is left unjoined and unreleased on purpose (joining a thread that does not exist
    // here would hang, destroying a joinable one aborts).
    if (writer_.joinable())
      static_cast<void>(std::make_unique<std::thread>(std::move(writer_)).release());
    return;
  }
  drain(settings_.timeout * kDrainTimeouts);
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    stopping_ = true;
    for (const Job& job : queue_)
      if (job.entry) count(backend::stats().remote_store_failures);
    queue_.clear();
    queued_bytes_ = 0;
  }
  queue_changed_.notify_all();
  if (writer_.joinable()) writer_.join();
  // What the writer did not release (it never ran, or stopped first) is released here.
  std::map<std::string, std::string> held;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    held.swap(held_claims_);
  }
  if (held.empty()) return;
  if (std::optional<RedisConnection> redis = connection()) {
    for (const auto& [cache_key, token] : held) {
      if (!redis->usable()) break;
      static_cast<void>(redis->delete_if_equal(claim_key(cache_key), token));
    }
  }
}

std::optional<RedisConnection> RemoteTier::connection() noexcept {
  try {
    if (!breaker_.allow()) return std::nullopt;
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!idle_.empty()) {
        RedisConnection redis = std::move(idle_.back());
        idle_.pop_back();
        return redis;
      }
    }
    Expected<RedisConnection> opened = RedisConnection::open(settings_.address, settings_.timeout);
    if (!opened) {
      call_failed(opened.failure());
      return std::nullopt;
    }
    return std::move(opened.value());
  } catch (...) {
    return std::nullopt;
  }
}

void RemoteTier::give_back(RedisConnection redis) noexcept {
  try {
    if (!redis.usable()) return;
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (idle_.size() < kMaxIdleConnections) idle_.push_back(std::move(redis));
  } catch (...) {
    // A connection not kept is closed; the next call opens another.
  }
}

void RemoteTier::call_failed(const Failure& failure) noexcept {
  count(backend::stats().remote_errors);
  if (breaker_.failed())
    backend::log(LogLevel::kWarning,
                 failure.message + "; working from the local cache, and not asking the remote " +
                     "cache again for " + std::to_string(kBreakerCoolDown.count() / 1000) + " s");
  else
    backend::log(LogLevel::kDebug, failure.message);
}

void RemoteTier::call_succeeded() noexcept { breaker_.succeeded(); }

std::optional<CacheEntry> RemoteTier::fetch_with(RedisConnection& redis,
                                                 const std::string& cache_key, bool* absent) {
  *absent = false;
  {
    // Refused once: neither fetched nor reported again.
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (refused_.count(cache_key) != 0) return std::nullopt;
  }
  Expected<std::optional<std::string>> got = redis.get(entry_key(cache_key), kMaxRemoteValueBytes);
  if (!got) {
    if (!redis.usable()) {
      call_failed(got.failure());
      return std::nullopt;
    }
    // The server answered, with something refused unread (a value over the bound).
    refuse(cache_key);
    count(backend::stats().remote_refused);
    backend::log(LogLevel::kWarning, "refused the remote cache's value for key " + cache_key +
                                         ": " + got.failure().message + "; compiling instead");
    return std::nullopt;
  }
  call_succeeded();
  if (!got.value()) {
    *absent = true;
    return std::nullopt;
  }
  Expected<CacheEntry> entry = decode_remote_value(*got.value(), cache_key, *key_);
  if (!entry) {
    refuse(cache_key);
    count(backend::stats().remote_refused);
    backend::log(LogLevel::kWarning, "refused the value under key " + cache_key +
                                         " in remote cache " + settings_.address.display() + ": " +
                                         entry.failure().message + "; compiling instead");
    return std::nullopt;
  }
  return std::move(entry.value());
}

void RemoteTier::refuse(const std::string& cache_key) noexcept {
  try {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (refused_.size() < kMaxRefusedKeys) refused_.insert(cache_key);
  } catch (...) {
    // Not remembered: a later fetch refuses it again.
  }
}

std::optional<CacheEntry> RemoteTier::fetch(const std::string& cache_key) noexcept {
  if (!serves()) return std::nullopt;
  try {
    std::optional<RedisConnection> redis = connection();
    if (!redis) return std::nullopt;
    bool absent = false;
    std::optional<CacheEntry> entry = fetch_with(*redis, cache_key, &absent);
    if (absent) count(backend::stats().remote_misses);
    give_back(std::move(*redis));
    return entry;
  } catch (...) {
    return std::nullopt;
  }
}

bool RemoteTier::claim(const std::string& cache_key) noexcept {
  if (!writes()) return false;
  try {
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      if (held_claims_.count(cache_key) != 0) return true;
    }
    std::optional<RedisConnection> redis = connection();
    if (!redis) return false;
    const std::string token = token_prefix_ + ":" + random_hex(12);
    Expected<bool> set = redis->set(claim_key(cache_key), token, true, kClaimTtl);
    if (!set) {
      if (!redis->usable()) call_failed(set.failure());
      return false;
    }
    call_succeeded();
    give_back(std::move(*redis));
    if (!set.value()) return false;
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      held_claims_.emplace(cache_key, token);
    }
    // The writer thread keeps the claim alive.
    ensure_writer();
    return true;
  } catch (...) {
    return false;
  }
}

std::optional<CacheEntry> RemoteTier::await_other_compile(const std::string& cache_key,
                                                          milliseconds limit) noexcept {
  if (!serves() || claims_ignored_.load(std::memory_order_relaxed)) return std::nullopt;
  try {
    const Clock::time_point deadline = Clock::now() + limit;
    std::optional<RedisConnection> redis = connection();
    if (!redis) return std::nullopt;
    std::optional<CacheEntry> entry;
    for (milliseconds pause{5};; pause = std::min(pause * 2, milliseconds(100))) {
      Expected<std::optional<std::string>> holder =
          redis->get(claim_key(cache_key), kMaxClaimTokenBytes);
      if (!holder) {
        if (!redis->usable()) call_failed(holder.failure());
        break;
      }
      // No claim (or one too long to be a token), or one this cache's own processes hold: their
      // compile is waited for through the local cache's claim.
      const bool claimed = holder.value() && holder.value()->rfind(token_prefix_ + ":", 0) != 0;
      // Read after the claim: a writer puts its entry before it lets its claim go, so a claim
      // seen gone means the entry, if any, is there now.
      bool absent = false;
      entry = fetch_with(*redis, cache_key, &absent);
      if (entry || !absent || !redis->usable() || !claimed) break;
      if (Clock::now() + pause >= deadline) {
        // A claim that outlived a whole wait is a writer far slower than a compile, a dead one
        // whose token lingers, or a forged one: later misses do not wait for claims at all, so
        // no claim can hold up a mode for longer than one wait.
        if (!claims_ignored_.exchange(true, std::memory_order_relaxed))
          backend::log(LogLevel::kWarning,
                       "another machine's claim on key " + cache_key + " in remote cache " +
                           settings_.address.display() + " stood for " +
                           std::to_string(limit.count()) + " ms without its entry; compiling it, " +
                           "and not waiting for other machines' claims again in this mode");
        break;
      }
      std::this_thread::sleep_for(pause);
    }
    if (redis->usable()) give_back(std::move(*redis));
    return entry;
  } catch (...) {
    return std::nullopt;
  }
}

void RemoteTier::publish(const CacheEntry& entry) noexcept {
  if (!writes()) return;
  try {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    const std::size_t bytes =
        payload_size(entry) > 0 ? static_cast<std::size_t>(payload_size(entry)) : 0;
    if (queue_.size() >= kMaxQueuedJobs || queued_bytes_ + bytes > kMaxQueuedBytes) {
      count(backend::stats().remote_store_failures);
      backend::log(LogLevel::kDebug,
                   "the remote cache's write queue is full; not putting " + entry.info.key);
      queue_.push_back(Job{std::nullopt, entry.info.key});
    } else {
      queue_.push_back(Job{entry, entry.info.key});
      queued_bytes_ += bytes;
    }
  } catch (...) {
    count(backend::stats().remote_store_failures);
    return;
  }
  queue_changed_.notify_all();
  ensure_writer();
}

void RemoteTier::release(const std::string& cache_key) noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      if (held_claims_.count(cache_key) == 0) return;
      queue_.push_back(Job{std::nullopt, cache_key});
    }
    queue_changed_.notify_all();
    ensure_writer();
  } catch (...) {
    // The claim expires on its own.
  }
}

void RemoteTier::drain(milliseconds limit) noexcept {
  try {
    std::unique_lock<std::mutex> lock(queue_mutex_);
    if (!writer_.joinable()) return;
    queue_changed_.wait_for(lock, limit, [&] { return queue_.empty() && in_flight_ == 0; });
  } catch (...) {
    // Whatever is left is dropped by the caller.
  }
}

void RemoteTier::ensure_writer() noexcept {
  try {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (writer_.joinable() || stopping_) return;
    writer_ = std::thread([this] { writer_loop(); });
  } catch (...) {
    // No thread: queued writes are dropped at the end and claims expire on their own.
  }
}

void RemoteTier::put_one(RedisConnection& redis, const CacheEntry& entry) {
  const std::string value = encode_remote_value(entry, *key_);
  if (value.size() > kMaxRemoteValueBytes) {
    count(backend::stats().remote_store_failures);
    return;
  }
  Expected<bool> set = redis.set(entry_key(entry.info.key), value, true);
  if (!set) {
    count(backend::stats().remote_store_failures);
    if (!redis.usable()) {
      call_failed(set.failure());
      return;
    }
    // Full (noeviction), read-only replica, no permission: the entry stays local.
    backend::log_once(LogLevel::kWarning, "remote-cache-write-refused",
                      "remote cache " + settings_.address.display() + " refused a write (" +
                          set.failure().message + "); compiled kernels stay in the local cache");
    return;
  }
  call_succeeded();
  count(set.value() ? backend::stats().remote_stores : backend::stats().remote_duplicates);
}

void RemoteTier::refresh_claims(RedisConnection& redis,
                                const std::vector<std::string>& cache_keys) {
  for (const std::string& cache_key : cache_keys) {
    if (!redis.usable()) return;
    static_cast<void>(redis.expire(claim_key(cache_key), kClaimTtl));
  }
}

void RemoteTier::writer_loop() noexcept {
  try {
    std::unique_lock<std::mutex> lock(queue_mutex_);
    Clock::time_point next_refresh = Clock::now() + kClaimRefresh;
    for (;;) {
      queue_changed_.wait_until(lock, next_refresh, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      std::vector<std::string> refresh;
      if (Clock::now() >= next_refresh) {
        for (const auto& held : held_claims_) refresh.push_back(held.first);
        next_refresh = Clock::now() + kClaimRefresh;
      }
      std::optional<Job> job;
      if (!queue_.empty()) {
        job.emplace(std::move(queue_.front()));
        queue_.pop_front();
        if (job->entry)
          queued_bytes_ -=
              std::min(queued_bytes_, static_cast<std::size_t>(payload_size(*job->entry)));
        ++in_flight_;
      }
      std::string token;
      if (job) {
        const auto held = held_claims_.find(job->cache_key);
        if (held != held_claims_.end()) {
          token = held->second;
          held_claims_.erase(held);
        }
      }
      lock.unlock();
      if (std::optional<RedisConnection> redis = connection()) {
        if (!refresh.empty()) refresh_claims(*redis, refresh);
        if (job && job->entry && redis->usable()) put_one(*redis, *job->entry);
        if (!token.empty() && redis->usable())
          static_cast<void>(redis->delete_if_equal(claim_key(job->cache_key), token));
        give_back(std::move(*redis));
      } else if (job && job->entry) {
        count(backend::stats().remote_store_failures);
      }
      lock.lock();
      if (job) --in_flight_;
      queue_changed_.notify_all();
    }
  } catch (...) {
    // Out of memory in the writer: what is queued is dropped at the end; claims expire.
  }
}

}  // namespace hipacm::cache::remote
