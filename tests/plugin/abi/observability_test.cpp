// SPDX-License-Identifier: MIT
// observability_test.cpp - hipacm_set_log_callback and hipacm_get_stats through libhipacm.so.1,
// with real compiles, worker processes and injected worker faults.
//
// ctest runs each test in a process of its own, so a test's counts and events are its own and
// the first in-process compile of a process is the test's. Workers are the built hipacm-worker,
// with fault injection on for sources that carry a marker.
#include <hipacm/hipacm.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tests/plugin/plugin_test_support.h"

namespace hipacm::test {
namespace {

constexpr std::size_t kStatsV1Size = offsetof(hipacm_stats, cached_failures) + sizeof(uint64_t);
constexpr std::size_t kStatsV2Size = offsetof(hipacm_stats, remote_waits) + sizeof(uint64_t);
static_assert(kStatsV2Size == sizeof(hipacm_stats), "version 2 is this header's");

/// Every event a callback received.
struct Events {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> list;

  /// How many events at `level` contain `text`.
  std::size_t count(int level, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex);
    std::size_t n = 0;
    for (const auto& [l, message] : list)
      n += l == level && message.find(text) != std::string::npos;
    return n;
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex);
    return list.size();
  }
  std::string dump() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    for (const auto& [l, message] : list) out += std::to_string(l) + ": " + message + "\n";
    return out;
  }
};

void on_event(void* user, int32_t level, const char* message) {
  auto* events = static_cast<Events*>(user);
  std::lock_guard<std::mutex> lock(events->mutex);
  events->list.emplace_back(level, message);
}

/// Installs on_event for a scope, then restores stderr.
class CallbackScope {
 public:
  CallbackScope(Events* events, int32_t max_level) {
    EXPECT_EQ(hipacm_set_log_callback(&on_event, events, max_level), HIPACM_SUCCESS);
  }
  ~CallbackScope() { hipacm_set_log_callback(nullptr, nullptr, HIPACM_LOG_OFF); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
};

hipacm_stats read_stats() {
  hipacm_stats stats;
  std::memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  EXPECT_EQ(hipacm_get_stats(&stats), HIPACM_SUCCESS) << hipacm_last_error_message();
  return stats;
}

bool backend_available() {
  hipacm_backend_info info{};
  info.struct_size = sizeof(info);
  return hipacm_get_backend_info(&info) == HIPACM_SUCCESS && info.available != 0;
}

/// A mode with `workers` workers (or the in-process path), the cache off, and `timeout_ms`.
hipacm_mode* enter(int32_t isolation, uint32_t timeout_ms = 0, uint32_t workers = 1) {
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.max_workers = workers;
  cfg.arch = kArch;
  cfg.isolation = isolation;
  cfg.compile_timeout_ms = timeout_ms;
  cfg.cache_policy = HIPACM_CACHE_OFF;
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  return mode;
}

/// Compiles `source` in `mode` and returns the outcome; *message gets the error message.
hipacm_status compile_in(hipacm_mode* mode, const std::string& source,
                         std::string* message = nullptr) {
  Request request(source);
  hipacm_future* future = nullptr;
  const hipacm_status submitted = hipacm_submit(mode, request.get(), &future);
  if (submitted != HIPACM_SUCCESS) return submitted;
  const hipacm_status status = hipacm_future_result(future, nullptr);
  if (message != nullptr) *message = hipacm_future_error_message(future);
  hipacm_future_release(future);
  return status;
}

/// Before any test calls into hipacm: the built worker, its faults (for marked sources only) and
/// no cache, so that every request runs a compiler.
class Observability : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("HIPACM_WORKER", HIPACM_TEST_WORKER, 1);
    setenv("HIPACM_TEST_HOOKS", "1", 1);
    setenv("HIPACM_WORKER_FAULT", "crash-segv:when=@SEGV@,hang:when=@HANG@", 1);
    setenv("HIPACM_CACHE", "off", 1);
    setenv("HIPACM_ISOLATION", "service=off", 1);  // AUTO isolation, workers of its own
  }
};

const char* const kSyntaxError = "extern \"C\" __global__ void broken(int* p) { p[0] = ; }\n";
// Markers for the worker's fault injection ($HIPACM_WORKER_FAULT in CMakeLists.txt).
const char* const kCrashes =
    "// @SEGV@\nextern \"C\" __global__ void crashes(int* p) { *p = 1; }\n";
const char* const kHangs = "// @HANG@\nextern \"C\" __global__ void hangs(int* p) { *p = 2; }\n";

// Enters a mode with `isolation`, compiles each of `good` and then kSyntaxError in it and exits:
// the counters before and after go to *before and *after (call it through
// ASSERT_NO_FATAL_FAILURE).
void compile_good_then_broken(int32_t isolation, const std::vector<std::string>& good,
                              hipacm_stats* before, hipacm_stats* after) {
  *before = read_stats();
  hipacm_mode* mode = enter(isolation);
  ASSERT_NE(mode, nullptr);
  for (const std::string& source : good) EXPECT_EQ(compile_in(mode, source), HIPACM_SUCCESS);
  EXPECT_EQ(compile_in(mode, kSyntaxError), HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_ERROR_COMPILATION);
  *after = read_stats();
}

TEST_F(Observability, InProcessCompilesAreCountedOnceAndNameTheCompiler) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  Events events;
  CallbackScope scope(&events, HIPACM_LOG_INFO);
  hipacm_stats before{}, after{};
  ASSERT_NO_FATAL_FAILURE(compile_good_then_broken(
      HIPACM_ISOLATION_IN_PROCESS, {vadd_source("observed_a"), vadd_source("observed_b")}, &before,
      &after));
  EXPECT_EQ(after.compiles - before.compiles, 3u);
  EXPECT_EQ(after.compile_failures - before.compile_failures, 1u);
  EXPECT_EQ(after.worker_spawns, before.worker_spawns) << "in-process compiles start no worker";
  EXPECT_EQ(events.count(HIPACM_LOG_INFO, "compiling with hipRTC"), 1u) << events.dump();
}

TEST_F(Observability, WorkerCompilesAreCountedInTheHostAndTheWorkerStartIsLogged) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  Events events;
  CallbackScope scope(&events, HIPACM_LOG_DEBUG);
  std::vector<std::string> good;
  for (int i = 0; i < 3; ++i) good.push_back(vadd_source("in_worker_" + std::to_string(i)));
  hipacm_stats before{}, after{};
  ASSERT_NO_FATAL_FAILURE(
      compile_good_then_broken(HIPACM_ISOLATION_PROCESS, good, &before, &after));
  // Exactly: a compile counted in the worker as well as the host would show twice.
  EXPECT_EQ(after.compiles - before.compiles, 4u);
  EXPECT_EQ(after.compile_failures - before.compile_failures, 1u);
  EXPECT_GE(after.worker_spawns, 1u);
  EXPECT_EQ(after.worker_crashes, before.worker_crashes);
  EXPECT_EQ(after.timeouts, before.timeouts);
  EXPECT_EQ(events.count(HIPACM_LOG_INFO, "started hipacm-worker (pid "),
            after.worker_spawns - before.worker_spawns)
      << events.dump();
  EXPECT_GE(events.count(HIPACM_LOG_INFO, "started hipacm-worker (pid "), 1u) << events.dump();
}

// HIPACM_PRESTART_WORKERS starts a mode's workers at enter, before any submit. The compiles that
// follow run on them and start none, and the warm-up compiles are not counted as compiles.
TEST_F(Observability, PrestartedWorkersStartAtEnterAndServeTheCompiles) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  setenv("HIPACM_PRESTART_WORKERS", "on", 1);
  const hipacm_stats before = read_stats();
  hipacm_mode* mode = enter(HIPACM_ISOLATION_PROCESS, 0, 2);
  unsetenv("HIPACM_PRESTART_WORKERS");
  ASSERT_NE(mode, nullptr);
  bool started = false;
  for (int waited_ms = 0; waited_ms < 60000 && !started; waited_ms += 10) {
    started = read_stats().worker_spawns - before.worker_spawns == 2;
    if (!started) usleep(10000);
  }
  EXPECT_TRUE(started) << "two workers start before the first submit";
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(compile_in(mode, vadd_source("prestarted_" + std::to_string(i))), HIPACM_SUCCESS);
  }
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.worker_spawns - before.worker_spawns, 2u);
  EXPECT_EQ(after.compiles - before.compiles, 4u);
  EXPECT_EQ(after.worker_crashes, before.worker_crashes);
}

TEST_F(Observability, ABadPrestartSettingFailsTheEnterAndNamesIt) {
  setenv("HIPACM_PRESTART_WORKERS", "lots", 1);
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = kArch;
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT);
  unsetenv("HIPACM_PRESTART_WORKERS");
  EXPECT_EQ(mode, nullptr);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("HIPACM_PRESTART_WORKERS is 'lots'"),
            std::string::npos)
      << hipacm_last_error_message();
}

TEST_F(Observability, AWorkerCrashIsOneWarningWithItsSignalAndOneCount) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  Events events;
  CallbackScope scope(&events, HIPACM_LOG_DEBUG);
  // A bad level changes nothing: the events still reach `events`.
  EXPECT_EQ(hipacm_set_log_callback(nullptr, nullptr, 5), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_set_log_callback(&on_event, nullptr, -1), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("max_level"), std::string::npos);
  const hipacm_stats before = read_stats();
  hipacm_mode* mode = enter(HIPACM_ISOLATION_PROCESS);
  ASSERT_NE(mode, nullptr);
  std::string message;
  EXPECT_EQ(compile_in(mode, kCrashes, &message), HIPACM_ERROR_COMPILER_CRASHED) << message;
  // The next compile needs a new worker, whose start is logged.
  EXPECT_EQ(compile_in(mode, vadd_source("after_crash")), HIPACM_SUCCESS);
  hipacm_mode_exit(mode, nullptr);
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.worker_crashes - before.worker_crashes, 1u);
  EXPECT_EQ(after.compiles - before.compiles, 2u);
  EXPECT_EQ(after.compile_failures, before.compile_failures) << "a crash is not a compile error";
  EXPECT_EQ(events.count(HIPACM_LOG_WARNING, "was killed by signal 11"), 1u) << events.dump();
  EXPECT_GE(events.count(HIPACM_LOG_INFO, "started hipacm-worker (pid "), 1u) << events.dump();
}

TEST_F(Observability, ATimeoutIsCountedAndWarnedAndNullRestoresStderr) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  Events events;
  ASSERT_EQ(hipacm_set_log_callback(&on_event, &events, HIPACM_LOG_DEBUG), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_set_log_callback(nullptr, nullptr, HIPACM_LOG_DEBUG), HIPACM_SUCCESS);
  ASSERT_EQ(setenv("HIPACM_LOG", "warning", 1), 0);
  const hipacm_stats before = read_stats();
  hipacm_mode* mode = enter(HIPACM_ISOLATION_PROCESS, 300);
  ASSERT_NE(mode, nullptr);
  std::string message;
  testing::internal::CaptureStderr();
  const hipacm_status status = compile_in(mode, kHangs, &message);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, HIPACM_ERROR_TIMEOUT) << message;
  hipacm_mode_exit(mode, nullptr);
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.timeouts - before.timeouts, 1u);
  EXPECT_EQ(after.worker_crashes, before.worker_crashes) << "a timeout is not a crash";
  EXPECT_NE(err.find("hipacm: warning: compile of "), std::string::npos) << err;
  EXPECT_NE(err.find("timed out after 300 ms"), std::string::npos) << err;
  EXPECT_EQ(events.size(), 0u) << "the replaced callback was called:\n" << events.dump();
  unsetenv("HIPACM_LOG");
}

TEST_F(Observability, LevelFilterAppliesToRealEvents) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  Events events;
  CallbackScope scope(&events, HIPACM_LOG_WARNING);
  hipacm_mode* mode = enter(HIPACM_ISOLATION_PROCESS);
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(compile_in(mode, kCrashes), HIPACM_ERROR_COMPILER_CRASHED);
  EXPECT_EQ(compile_in(mode, vadd_source("filtered")), HIPACM_SUCCESS);
  hipacm_mode_exit(mode, nullptr);
  EXPECT_EQ(events.count(HIPACM_LOG_WARNING, "was killed by signal 11"), 1u) << events.dump();
  EXPECT_EQ(events.count(HIPACM_LOG_INFO, ""), 0u) << events.dump();
  EXPECT_EQ(events.count(HIPACM_LOG_DEBUG, ""), 0u) << events.dump();
}

TEST_F(Observability, GetStatsChecksItsArgumentAndNeverWritesPastSizeof) {
  EXPECT_EQ(hipacm_get_stats(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  hipacm_stats small;
  std::memset(&small, 0, sizeof small);
  for (std::size_t size : {std::size_t{0}, sizeof(size_t), kStatsV1Size - 1}) {
    small.struct_size = size;
    EXPECT_EQ(hipacm_get_stats(&small), HIPACM_ERROR_ABI_MISMATCH) << "size " << size;
    EXPECT_EQ(small.compiles, 0u) << "nothing is written on a mismatch";
  }

  // A host built against a newer header: the tail the plugin does not know stays untouched.
  struct {
    hipacm_stats stats;
    unsigned char tail[64];
  } larger;
  std::memset(&larger, 0xA5, sizeof larger);
  larger.stats.struct_size = sizeof larger;
  ASSERT_EQ(hipacm_get_stats(&larger.stats), HIPACM_SUCCESS);
  EXPECT_EQ(larger.stats.struct_size, sizeof larger) << "struct_size is the caller's";
  for (unsigned char byte : larger.tail) ASSERT_EQ(byte, 0xA5) << "written past sizeof";
  EXPECT_NE(larger.stats.compiles, 0xA5A5A5A5A5A5A5A5u) << "version 1 was not filled";
  EXPECT_NE(larger.stats.cached_failures, 0xA5A5A5A5A5A5A5A5u) << "version 1 was not filled";
  EXPECT_NE(larger.stats.remote_waits, 0xA5A5A5A5A5A5A5A5u) << "version 2 was not filled";

  // A host of ABI 1.4 (version 1): filled, and nothing past it written.
  hipacm_stats exact;
  std::memset(&exact, 0xA5, sizeof exact);
  exact.struct_size = kStatsV1Size;
  ASSERT_EQ(hipacm_get_stats(&exact), HIPACM_SUCCESS);
  EXPECT_EQ(exact.struct_size, kStatsV1Size);
  EXPECT_NE(exact.timeouts, 0xA5A5A5A5A5A5A5A5u);
  EXPECT_NE(exact.cached_failures, 0xA5A5A5A5A5A5A5A5u);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&exact);
  for (std::size_t i = kStatsV1Size; i < sizeof exact; ++i)
    ASSERT_EQ(bytes[i], 0xA5) << "byte " << i << " past version 1 was written";

  // A host of ABI 1.5 (version 2): every counter, the remote ones included (0: no remote here).
  std::memset(&exact, 0xA5, sizeof exact);
  exact.struct_size = kStatsV2Size;
  ASSERT_EQ(hipacm_get_stats(&exact), HIPACM_SUCCESS);
  EXPECT_EQ(exact.struct_size, kStatsV2Size);
  const uint64_t remote[] = {exact.remote_hits,       exact.remote_misses,
                             exact.remote_refused,    exact.remote_stores,
                             exact.remote_duplicates, exact.remote_store_failures,
                             exact.remote_errors,     exact.remote_waits};
  for (uint64_t counter : remote) EXPECT_EQ(counter, 0u);
}

TEST_F(Observability, TheProviderTableForAbi14CarriesTheNewEntryPoints) {
  const hipacm_provider* p = hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(1, 4));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->abi_version, static_cast<uint32_t>(HIPACM_ABI_VERSION_ENCODE(1, 4)));
  EXPECT_GE(p->struct_size, offsetof(hipacm_provider, get_stats) + sizeof(p->get_stats));
  ASSERT_NE(p->set_log_callback, nullptr);
  ASSERT_NE(p->get_stats, nullptr);
  hipacm_stats stats;
  std::memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  EXPECT_EQ(p->get_stats(&stats), HIPACM_SUCCESS);
  EXPECT_EQ(p->get_stats(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p->set_log_callback(nullptr, nullptr, 99), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p->set_log_callback(nullptr, nullptr, HIPACM_LOG_OFF), HIPACM_SUCCESS);

  // Its mode_config_init fills version 4, the whole 1.4 struct; 1.3's stops at version 3.
  hipacm_mode_config cfg;
  std::memset(&cfg, 0xA5, sizeof cfg);
  p->mode_config_init(&cfg);
  const std::size_t v4 = offsetof(hipacm_mode_config, reserved_1_4) + sizeof(int32_t);
  EXPECT_EQ(cfg.struct_size, v4);
  EXPECT_EQ(cfg.cache_failures, 0);
  EXPECT_EQ(cfg.reserved_1_4, 0);
  const hipacm_provider* p13 = hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(1, 3));
  ASSERT_NE(p13, nullptr);
  std::memset(&cfg, 0xA5, sizeof cfg);
  p13->mode_config_init(&cfg);
  const std::size_t v3 = offsetof(hipacm_mode_config, load_device) + sizeof(int32_t);
  EXPECT_EQ(cfg.struct_size, v3);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&cfg);
  for (std::size_t i = v3; i < sizeof cfg; ++i) EXPECT_EQ(bytes[i], 0xA5) << "byte " << i;
}

}  // namespace
}  // namespace hipacm::test
