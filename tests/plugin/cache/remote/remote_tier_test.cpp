// SPDX-License-Identifier: MIT
// remote_tier_test.cpp - whole modes on separate cache directories ("machines") sharing a real
// redis-server: served, identical; refused without the key, with another key, forged, flipped,
// moved; faults (killed, stalled, full) never fail or hang a compile; claims across machines.
#include <gtest/gtest.h>
#include <hipacm/hipacm.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_address.h"
#include "plugin/cache/remote/remote_tier.h"
#include "plugin/cache/remote/remote_value.h"
#include "plugin/cache/remote/signing_key.h"
#include "plugin/cache/store/entry.h"
#include "support/bytes/sha256.h"
#include "tests/plugin/cache/cache_test_support.h"
#include "tests/scoped_env.h"
#include "tests/support/redis_server.h"

namespace hipacm::cache_test {
namespace {

using std::chrono::milliseconds;
using test::ScopedEnv;
namespace remote = cache::remote;

constexpr int kKernels = 4;

// Writes `bytes` to `path` with mode 0600.
void write_private(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  ::chmod(path.c_str(), 0600);
}

hipacm_stats stats_now() {
  hipacm_stats out{};
  out.struct_size = sizeof out;
  EXPECT_EQ(hipacm_get_stats(&out), HIPACM_SUCCESS);
  return out;
}

// What one "machine" did in one mode: its compiles, its kernels' code, the stats it moved.
struct MachineRun {
  int compiles = 0;
  std::vector<std::vector<std::uint8_t>> code;
  std::vector<hipacm_status> statuses;
  hipacm_stats before{}, after{};
  std::uint64_t delta(std::uint64_t hipacm_stats::*field) const {
    return after.*field - before.*field;
  }
};

class RemoteTierTest : public CacheEnvironment {
 protected:
  void SetUp() override {
    CacheEnvironment::SetUp();
    HIPACM_REQUIRE_REDIS_SERVER();
    ASSERT_TRUE(server_.running()) << server_.error();
    key_file_ = dir_.path() + "/remote.key";
    write_private(key_file_, "a signing key that is long enough to sign with\n");
    other_key_file_ = dir_.path() + "/other.key";
    write_private(other_key_file_, "some other key, held by someone who is not the writer\n");
  }
  // CacheEnvironment's TearDown calls SetUp (virtually): only the environment is cleared here.
  void TearDown() override { CacheEnvironment::SetUp(); }

  // Runs one mode on cache `machine` with the remote settings in the environment, submitting
  // `kernels` kernels (names k0..), each through `before_each` first.
  MachineRun warm(const std::string& machine, const std::string& mode, const std::string& key_file,
                  const std::string& url, int kernels = kKernels,
                  std::uint32_t compile_timeout_ms = 0,
                  const std::function<void(int)>& before_each = {}) {
    MachineRun run;
    ScopedEnv remote_url("HIPACM_REMOTE_CACHE", url);
    ScopedEnv remote_mode("HIPACM_REMOTE_CACHE_MODE", mode);
    ScopedEnv remote_key("HIPACM_REMOTE_CACHE_KEY_FILE",
                         key_file.empty() ? std::nullopt : std::optional<std::string>(key_file));
    ScopedEnv timeout("HIPACM_REMOTE_CACHE_TIMEOUT_MS", "200");
    const std::string dir = dir_.path() + "/" + machine;
    CountingFactory counter;
    run.before = stats_now();
    hipacm_mode_config cfg = cache_mode_config(dir);
    cfg.compile_timeout_ms = compile_timeout_ms;
    hipacm_mode* handle = nullptr;
    EXPECT_EQ(hipacm_mode_enter(&cfg, &handle), HIPACM_SUCCESS);
    if (handle == nullptr) return run;
    for (int i = 0; i < kernels; ++i) {
      if (before_each) before_each(i);
      std::string name = std::to_string(i);
      name.insert(name.begin(), 'k');
      test::Request request(kernel_source(name));
      hipacm_future* future = nullptr;
      hipacm_status status = hipacm_submit(handle, request.get(), &future);
      std::vector<std::uint8_t> code;
      if (status == HIPACM_SUCCESS) {
        const hipacm_kernel* kernel = nullptr;
        status = hipacm_future_result(future, &kernel);
        if (status == HIPACM_SUCCESS) {
          const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
          code.assign(bytes, bytes + kernel->code_size);
        }
        hipacm_future_release(future);
      }
      run.statuses.push_back(status);
      run.code.push_back(std::move(code));
    }
    EXPECT_EQ(hipacm_mode_exit(handle, nullptr), HIPACM_SUCCESS);
    run.after = stats_now();
    run.compiles = counter.compiles.load();
    return run;
  }

  void expect_all_succeeded(const MachineRun& run) {
    ASSERT_EQ(run.statuses.size(), static_cast<std::size_t>(kKernels));
    for (hipacm_status status : run.statuses) EXPECT_EQ(status, HIPACM_SUCCESS);
  }

  // A connection to the test's server, for planting and reading values.
  remote::RedisConnection connect() {
    Expected<remote::RemoteAddress> address = remote::parse_remote_address(server_.url());
    EXPECT_TRUE(address);
    Expected<remote::RedisConnection> redis =
        remote::RedisConnection::open(address.value(), milliseconds(2000));
    if (!redis) throw std::runtime_error(redis.failure().message);
    return std::move(redis.value());
  }

  // The Redis keys of the entries the server holds.
  std::vector<std::string> entry_keys() {
    remote::RedisConnection redis = connect();
    std::vector<std::string> keys;
    std::uint64_t cursor = 0;
    do {
      Expected<remote::RedisConnection::ScanPage> page =
          redis.scan(cursor, remote::entry_key("") + "*", 100);
      if (!page) break;
      keys.insert(keys.end(), page.value().keys.begin(), page.value().keys.end());
      cursor = page.value().cursor;
    } while (cursor != 0);
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  test::TempDir dir_{"hipacm-remote-"};
  test::RedisServer server_;
  std::string key_file_, other_key_file_;
};

TEST_F(RemoteTierTest, AFreshMachineIsServedEverythingAWriterCompiledIdentically) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  EXPECT_EQ(a.compiles, kKernels);
  EXPECT_EQ(a.delta(&hipacm_stats::remote_stores), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(entry_keys().size(), static_cast<std::size_t>(kKernels));

  const MachineRun b = warm("b", "read", key_file_, server_.url());
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, 0) << "a fresh machine compiled what the remote cache holds";
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(b.delta(&hipacm_stats::remote_refused), 0u);
  EXPECT_EQ(b.code, a.code);

  // B stored what it was served: with the remote gone, B's own cache serves it.
  server_.kill();
  const MachineRun again = warm("b", "read", key_file_, server_.url());
  expect_all_succeeded(again);
  EXPECT_EQ(again.compiles, 0);
  EXPECT_EQ(again.delta(&hipacm_stats::cache_hits), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(again.code, a.code);
}

TEST_F(RemoteTierTest, AReaderWithoutTheKeyIsServedNothingAndWritesNothing) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  const MachineRun b = warm("b", "read", "", server_.url());
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, kKernels);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), 0u);
  // A writer without a key publishes nothing either.
  const MachineRun c = warm("c", "read-write", "", server_.url(), kKernels + 1);
  EXPECT_EQ(c.delta(&hipacm_stats::remote_stores), 0u);
  EXPECT_EQ(entry_keys().size(), static_cast<std::size_t>(kKernels));
}

TEST_F(RemoteTierTest, EntriesSignedWithAnotherKeyAreRefusedAndCompiled) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  const MachineRun b = warm("b", "read", other_key_file_, server_.url());
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, kKernels);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), 0u);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_refused), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(b.code, a.code) << "what was compiled instead is the real kernel";
}

TEST_F(RemoteTierTest, ForgedFlippedAndMovedValuesAreRefusedAndCompiled) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  const std::vector<std::string> keys = entry_keys();
  ASSERT_EQ(keys.size(), static_cast<std::size_t>(kKernels));
  remote::RedisConnection redis = connect();
  Expected<remote::SigningKey> attacker =
      remote::SigningKey::from_bytes("an attacker's key, not the fleet's");
  ASSERT_TRUE(attacker);
  std::vector<std::string> values;
  for (const std::string& key : keys) {
    Expected<std::optional<std::string>> value = redis.get(key, remote::kMaxRemoteValueBytes);
    ASSERT_TRUE(value && value.value());
    values.push_back(*value.value());
  }
  // 0: one bit flipped in the code; 1: a valid entry re-signed by another key (a forgery);
  // 2: another kernel's value moved under this key; 3: garbage.
  std::string flipped = values[0];
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  ASSERT_TRUE(redis.set(keys[0], flipped, false));
  Expected<remote::SigningKey> writer = remote::SigningKey::load(key_file_);
  ASSERT_TRUE(writer);
  const std::string cache_key_1 = keys[1].substr(remote::entry_key("").size());
  Expected<cache::CacheEntry> entry =
      remote::decode_remote_value(values[1], cache_key_1, writer.value());
  ASSERT_TRUE(entry) << entry.failure().message;
  ASSERT_TRUE(
      redis.set(keys[1], remote::encode_remote_value(entry.value(), attacker.value()), false));
  ASSERT_TRUE(redis.set(keys[2], values[3], false));
  ASSERT_TRUE(redis.set(keys[3], std::string(1000, 'x'), false));

  const MachineRun b = warm("b", "read", key_file_, server_.url());
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, kKernels);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), 0u);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_refused), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(b.code, a.code);
}

TEST_F(RemoteTierTest, AKilledServerFailsNoCompileAndAModeStillEnds) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  // Killed mid-run: the first two kernels come from Redis, the rest are compiled.
  const MachineRun b = warm("b", "read", key_file_, server_.url(), kKernels, 0, [&](int i) {
    if (i == 2) server_.kill();
  });
  expect_all_succeeded(b);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), 2u);
  EXPECT_EQ(b.compiles, kKernels - 2);
  EXPECT_EQ(b.code, a.code);
  // A writer whose server is gone: its compiles stand, and its queued puts are dropped.
  const MachineRun c = warm("c", "read-write", key_file_, server_.url());
  expect_all_succeeded(c);
  EXPECT_EQ(c.compiles, kKernels);
  EXPECT_EQ(c.delta(&hipacm_stats::remote_stores), 0u);
  EXPECT_GE(c.delta(&hipacm_stats::remote_errors), 1u);
}

TEST_F(RemoteTierTest, AStalledServerCostsEachCompileAtMostItsTimeoutAndIsThenLeftAlone) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  test::DelayProxy stalled(server_.port());
  stalled.stall();
  std::string url = server_.url();
  url.replace(url.rfind(':') + 1, std::string::npos, std::to_string(stalled.port()));
  const auto start = std::chrono::steady_clock::now();
  const MachineRun b = warm("b", "read", key_file_, url);
  const auto took = std::chrono::steady_clock::now() - start;
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, kKernels);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_hits), 0u);
  // The breaker opens after three failures; later lookups do not connect at all.
  EXPECT_EQ(b.delta(&hipacm_stats::remote_errors), 3u);
  EXPECT_LE(stalled.accepted(), 3u);
  // Not a timing measurement: a hang would take the proxy's whole life (the test's timeout).
  EXPECT_LT(took, std::chrono::seconds(60));
}

TEST_F(RemoteTierTest, AFullServerRefusesWritesQuietlyAndCompilesStand) {
  test::RedisServer full(test::RedisServerOptions{"1"});
  ASSERT_TRUE(full.running()) << full.error();
  const MachineRun a = warm("a", "read-write", key_file_, full.url());
  expect_all_succeeded(a);
  EXPECT_EQ(a.compiles, kKernels);
  EXPECT_EQ(a.delta(&hipacm_stats::remote_stores), 0u);
  EXPECT_GE(a.delta(&hipacm_stats::remote_store_failures), 1u);
}

TEST_F(RemoteTierTest, AReaderWaitsForAnotherMachinesClaimedCompileInsteadOfRepeatingIt) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url(), 1);
  ASSERT_EQ(a.code.size(), 1u);
  const std::vector<std::string> keys = entry_keys();
  ASSERT_EQ(keys.size(), 1u);
  remote::RedisConnection redis = connect();
  Expected<std::optional<std::string>> value = redis.get(keys[0], remote::kMaxRemoteValueBytes);
  ASSERT_TRUE(value && value.value());
  const std::string cache_key = keys[0].substr(remote::entry_key("").size());
  // Another machine claims the kernel and has not stored it yet; it stores it a moment later.
  ASSERT_TRUE(redis.delete_if_equal(keys[0], *value.value()));
  ASSERT_TRUE(redis.set(remote::claim_key(cache_key), "0123456789abcdef:other", false));
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(500));
    remote::RedisConnection late = connect();
    EXPECT_TRUE(late.set(keys[0], *value.value(), false));
  });
  const MachineRun b = warm("b", "read", key_file_, server_.url(), 1);
  writer.join();
  ASSERT_EQ(b.statuses.size(), 1u);
  EXPECT_EQ(b.statuses[0], HIPACM_SUCCESS);
  EXPECT_EQ(b.compiles, 0) << "the reader compiled what another machine was compiling";
  EXPECT_EQ(b.delta(&hipacm_stats::remote_waits), 1u);
  EXPECT_EQ(b.code, a.code);
}

TEST_F(RemoteTierTest, AClaimThatNeverEndsDelaysAReaderOnlyUpToItsLimit) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url(), 1);
  const std::vector<std::string> keys = entry_keys();
  ASSERT_EQ(keys.size(), 1u);
  remote::RedisConnection redis = connect();
  Expected<std::optional<std::string>> value = redis.get(keys[0], remote::kMaxRemoteValueBytes);
  ASSERT_TRUE(value && value.value());
  ASSERT_TRUE(redis.delete_if_equal(keys[0], *value.value()));
  // A claim that no one will ever honour (a dead writer's, or a hostile one).
  const std::string cache_key = keys[0].substr(remote::entry_key("").size());
  ASSERT_TRUE(redis.set(remote::claim_key(cache_key), "fedcba9876543210:forever", false));
  // The reader's compile limit (1 s) bounds the wait; then it compiles.
  const MachineRun b = warm("b", "read", key_file_, server_.url(), 1, 1000);
  ASSERT_EQ(b.statuses.size(), 1u);
  EXPECT_EQ(b.statuses[0], HIPACM_SUCCESS);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_waits), 0u);
  EXPECT_EQ(b.code, a.code);
}

// Reads the server's count of `command` calls (INFO commandstats).
std::int64_t command_calls(remote::RedisConnection& redis, const std::string& command) {
  Expected<std::string> info = redis.info("commandstats");
  if (!info) return -1;
  const std::string label = "cmdstat_" + command + ":calls=";
  const std::size_t at = info.value().find(label);
  if (at == std::string::npos) return 0;
  return std::stoll(info.value().substr(at + label.size()));
}

TEST_F(RemoteTierTest, ForgedClaimsHoldUpAModeForOneWaitAtMost) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url());
  expect_all_succeeded(a);
  remote::RedisConnection redis = connect();
  // Every entry gone, and every kernel under a claim that no one will ever honour.
  for (const std::string& key : entry_keys()) {
    Expected<std::optional<std::string>> value = redis.get(key, remote::kMaxRemoteValueBytes);
    ASSERT_TRUE(value && value.value());
    ASSERT_TRUE(redis.delete_if_equal(key, *value.value()));
    const std::string cache_key = key.substr(remote::entry_key("").size());
    ASSERT_TRUE(redis.set(remote::claim_key(cache_key), "fedcba9876543210:forged", false));
  }
  const std::int64_t reads_before = command_calls(redis, "getrange");
  const MachineRun b = warm("b", "read", key_file_, server_.url(), kKernels, 1000);
  const std::int64_t reads = command_calls(redis, "getrange") - reads_before;
  expect_all_succeeded(b);
  EXPECT_EQ(b.compiles, kKernels);
  EXPECT_EQ(b.code, a.code);
  // The first kernel waits out its second polling the claim and the entry (about 14 polls of
  // two reads); the others only look (a few reads each). Waiting for each claim would take
  // four times the first's reads.
  EXPECT_GT(reads, 0);
  EXPECT_LT(reads, 70) << "the reader kept waiting for forged claims";
}

TEST_F(RemoteTierTest, AWriterThatCompiledWhatAnotherPutIsCountedAsADuplicate) {
  const MachineRun a = warm("a", "read-write", key_file_, server_.url(), 1);
  ASSERT_EQ(a.compiles, 1);
  // Another fleet's writer (another key) cannot read A's entry, compiles, and finds it there.
  const MachineRun b = warm("b", "read-write", other_key_file_, server_.url(), 1);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_duplicates), 1u);
  EXPECT_EQ(b.delta(&hipacm_stats::remote_stores), 0u);
}

// One tier shared by many threads, as a mode's pool shares it: claims, publishes, releases and
// fetches from 8 threads at once, many rounds; every entry put once, every fetch exact, every
// claim let go. Run under ThreadSanitizer too (the remote label).
TEST_F(RemoteTierTest, ManyThreadsShareOneTierAndLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 40;
  Expected<remote::RemoteAddress> address = remote::parse_remote_address(server_.url());
  ASSERT_TRUE(address);
  remote::RemoteSettings settings;
  settings.address = address.value();
  settings.mode = remote::Mode::kReadWrite;
  settings.key_file = key_file_;
  settings.timeout = milliseconds(2000);
  const auto entry_for = [](int thread, int i) {
    cache::CacheEntry entry;
    entry.info.key =
        sha256_hex(&thread, sizeof thread).substr(0, 32) + sha256_hex(&i, sizeof i).substr(0, 32);
    entry.info.arch = kArch;
    entry.info.source_name = "k.hip";
    entry.info.backend = "hiprtc";
    entry.info.compiler_version = "test";
    entry.info.plugin_version = "test";
    entry.lowered_names = {"k" + std::to_string(i)};
    entry.log = "thread " + std::to_string(thread);
    entry.code.assign(static_cast<std::size_t>(64 + i), static_cast<std::uint8_t>(thread));
    entry.checksum = cache::entry_checksum(entry);
    entry.info.size = cache::payload_size(entry);
    return entry;
  };
  const hipacm_stats before = stats_now();
  {
    remote::RemoteTier tier(settings, dir_.path() + "/one");
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const cache::CacheEntry entry = entry_for(t, i);
          EXPECT_TRUE(tier.claim(entry.info.key));
          if (i % 4 == 3) {
            tier.release(entry.info.key);
          } else {
            tier.publish(entry);
          }
          // Another thread's earlier entry, put or not yet: never a wrong one.
          const cache::CacheEntry other = entry_for((t + 1) % kThreads, i / 2);
          if (std::optional<cache::CacheEntry> got = tier.fetch(other.info.key)) {
            EXPECT_EQ(got->code, other.code);
          }
        }
      });
    for (std::thread& thread : threads) thread.join();
    tier.drain(milliseconds(20000));
  }
  const hipacm_stats after = stats_now();
  const std::uint64_t published = kThreads * (kPerThread - kPerThread / 4);
  EXPECT_EQ(after.remote_stores - before.remote_stores, published);
  EXPECT_EQ(after.remote_store_failures - before.remote_store_failures, 0u);
  EXPECT_EQ(entry_keys().size(), static_cast<std::size_t>(published));
  // Every claim was let go: after a put, after a release, or when the tier ended.
  remote::RedisConnection redis = connect();
  Expected<remote::RedisConnection::ScanPage> claims =
      redis.scan(0, remote::claim_key("") + "*", 1000);
  ASSERT_TRUE(claims);
  EXPECT_TRUE(claims.value().keys.empty() && claims.value().cursor == 0)
      << claims.value().keys.size() << " claims left";
  // What a reader is served is exactly what was put.
  remote::RemoteSettings reader = settings;
  reader.mode = remote::Mode::kRead;
  remote::RemoteTier tier(reader, dir_.path() + "/two");
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPerThread; ++i) {
      const cache::CacheEntry entry = entry_for(t, i);
      std::optional<cache::CacheEntry> got = tier.fetch(entry.info.key);
      ASSERT_EQ(got.has_value(), i % 4 != 3) << t << " " << i;
      if (got) {
        EXPECT_EQ(got->code, entry.code);
        EXPECT_EQ(got->log, entry.log);
        EXPECT_EQ(got->lowered_names, entry.lowered_names);
      }
    }
}

}  // namespace
}  // namespace hipacm::cache_test
