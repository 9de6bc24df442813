// SPDX-License-Identifier: MIT
// log_test.cpp - the log sink: level filter, stderr fallback, $HIPACM_LOG, replacement under
// concurrent logging, re-entry and fork().
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/files/unique_fd.h"
#include "support/log.h"
#include "tests/child_report.h"
#include "tests/scoped_env.h"

namespace hipacm::test {
namespace {

using backend::log;
using backend::LogLevel;
using backend::set_log_sink;

/// What one sink received, in order.
struct Received {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> events;
};

void record(void* user, std::int32_t level, const char* message) {
  auto* received = static_cast<Received*>(user);
  std::lock_guard<std::mutex> lock(received->mutex);
  received->events.emplace_back(level, message);
}

/// Removes any sink at the end of a test.
struct SinkReset {
  ~SinkReset() { set_log_sink(nullptr, nullptr, LogLevel::kOff); }
};

/// Points fd 2 at a temporary file for a scope; text() reads what was written there.
class CapturedStderr {
 public:
  CapturedStderr() {
    char name[] = "/tmp/hipacm-log-test-XXXXXX";
    file_.reset(mkstemp(name));
    EXPECT_TRUE(file_) << "mkstemp";
    unlink(name);
    saved_.reset(dup(STDERR_FILENO));
    dup2(file_.get(), STDERR_FILENO);
  }
  ~CapturedStderr() { restore(); }
  std::string text() {
    restore();
    std::string out;
    char buf[4096];
    lseek(file_.get(), 0, SEEK_SET);
    for (ssize_t n; (n = read(file_.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

 private:
  void restore() {
    if (saved_) {
      dup2(saved_.get(), STDERR_FILENO);
      saved_.reset();
    }
  }
  backend::UniqueFd file_;
  backend::UniqueFd saved_;
};

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(LogSink, ReceivesEventsAtOrBelowItsLevelWithoutPrefix) {
  SinkReset reset;
  Received received;
  set_log_sink(&record, &received, LogLevel::kInfo);
  log(LogLevel::kDebug, "a debug line");
  log(LogLevel::kInfo, "an info line");
  log(LogLevel::kWarning, "a warning line");
  log(LogLevel::kError, "an error line");
  log(LogLevel::kOff, "never an event");
  const std::vector<std::pair<int, std::string>> expected = {
      {3, "an info line"}, {2, "a warning line"}, {1, "an error line"}};
  EXPECT_EQ(received.events, expected);

  received.events.clear();
  set_log_sink(&record, &received, LogLevel::kOff);
  log(LogLevel::kError, "dropped");
  EXPECT_TRUE(received.events.empty()) << "a sink at kOff receives nothing";
}

TEST(LogSink, ReplacesStderrAndNullRestoresIt) {
  SinkReset reset;
  ScopedEnv env("HIPACM_LOG", "info");
  Received received;
  {
    CapturedStderr captured;
    set_log_sink(&record, &received, LogLevel::kError);
    log(LogLevel::kWarning, "filtered by the sink, not printed either");
    log(LogLevel::kError, "to the sink");
    set_log_sink(nullptr, nullptr, LogLevel::kError);
    log(LogLevel::kInfo, "back on stderr");
    log(LogLevel::kDebug, "below $HIPACM_LOG");
    EXPECT_EQ(captured.text(), "hipacm: info: back on stderr\n");
  }
  ASSERT_EQ(received.events.size(), 1u);
  EXPECT_EQ(received.events[0].second, "to the sink");
}

TEST(LogLevelEnv, UnknownValueWarnsOnceAndMeansWarning) {
  CapturedStderr captured;
  {
    ScopedEnv env("HIPACM_LOG", "verbos");
    log(LogLevel::kInfo, "info is hidden at warning");
    log(LogLevel::kWarning, "first warning");
    log(LogLevel::kWarning, "second warning");
  }
  {
    ScopedEnv env("HIPACM_LOG", "loud");
    log(LogLevel::kWarning, "third warning");
  }
  {
    // Read on every line: a change while the process runs takes effect.
    ScopedEnv env("HIPACM_LOG", "debug");
    log(LogLevel::kDebug, "debug shows now");
  }
  {
    ScopedEnv env("HIPACM_LOG", "off");
    log(LogLevel::kError, "nothing at off");
  }
  const std::string text = captured.text();
  EXPECT_EQ(occurrences(text,
                        "hipacm: warning: HIPACM_LOG=verbos is not a level: off, error, warning, "
                        "info, debug; using warning\n"),
            1u)
      << text;
  EXPECT_EQ(occurrences(text, "is not a level"), 1u) << "once per process:\n" << text;
  EXPECT_EQ(occurrences(text, "info is hidden"), 0u) << text;
  EXPECT_EQ(occurrences(text, "hipacm: warning: first warning\n"), 1u) << text;
  EXPECT_EQ(occurrences(text, "hipacm: warning: second warning\n"), 1u) << text;
  EXPECT_EQ(occurrences(text, "hipacm: warning: third warning\n"), 1u) << text;
  EXPECT_EQ(occurrences(text, "hipacm: debug: debug shows now\n"), 1u) << text;
  EXPECT_EQ(occurrences(text, "nothing at off"), 0u) << text;
}

TEST(LogOnce, OnlyTheFirstCallOfATopicLogsEvenFromManyThreads) {
  SinkReset reset;
  Received received;
  set_log_sink(&record, &received, LogLevel::kDebug);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        backend::log_once(LogLevel::kWarning, "log-test-topic-" + std::to_string(i % 5),
                          "topic " + std::to_string(i % 5) + " from " + std::to_string(t));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(received.events.size(), 5u);
  std::vector<int> per_topic(5, 0);
  for (const auto& [level, message] : received.events) {
    EXPECT_EQ(level, 2);
    ++per_topic[message[6] - '0'];
  }
  EXPECT_EQ(per_topic, std::vector<int>(5, 1));
}

/// A sink's state: a call after its replacement returned is a violation.
struct Generation {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<bool> replaced{false};
  std::atomic<std::uint64_t> calls_after_replacement{0};
};

void count_generation(void* user, std::int32_t, const char*) {
  auto* generation = static_cast<Generation*>(user);
  if (generation->replaced.load(std::memory_order_acquire)) {
    generation->calls_after_replacement.fetch_add(1, std::memory_order_relaxed);
  }
  generation->calls.fetch_add(1, std::memory_order_relaxed);
}

TEST(LogSinkConcurrency, AReplacedSinkIsNeverCalledAfterTheSwapReturns) {
  SinkReset reset;
  constexpr int kLoggers = 4;
  constexpr int kSwaps = 100;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> logged{0};
  std::vector<std::thread> loggers;
  for (int t = 0; t < kLoggers; ++t) {
    loggers.emplace_back([&, t] {
      const LogLevel level = t % 2 == 0 ? LogLevel::kInfo : LogLevel::kDebug;
      while (!stop.load(std::memory_order_relaxed)) {
        log(level, "line from logger " + std::to_string(t));
        logged.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  // Each generation is kept (and checked) after its replacement; its counter must not move.
  std::deque<Generation> generations;
  std::vector<std::uint64_t> calls_when_replaced;
  for (int swap = 0; swap < kSwaps; ++swap) {
    generations.emplace_back();
    const bool to_null = swap % 7 == 6;
    set_log_sink(to_null ? nullptr : &count_generation, to_null ? nullptr : &generations.back(),
                 swap % 3 == 0 ? LogLevel::kInfo : LogLevel::kDebug);
    if (generations.size() >= 2) {
      Generation& old = generations[generations.size() - 2];
      old.replaced.store(true, std::memory_order_release);
      calls_when_replaced.push_back(old.calls.load(std::memory_order_relaxed));
    }
    // Each installed sink is called before it is replaced, however the threads are scheduled,
    // so that every swap races with calls in flight.
    if (!to_null)
      while (generations.back().calls.load(std::memory_order_relaxed) == 0)
        std::this_thread::yield();
  }
  set_log_sink(nullptr, nullptr, LogLevel::kOff);
  generations.back().replaced.store(true, std::memory_order_release);
  calls_when_replaced.push_back(generations.back().calls.load(std::memory_order_relaxed));
  // The loggers run on for a while, so that a late call of any replaced sink would show.
  const std::uint64_t logged_at_end = logged.load();
  while (logged.load() < logged_at_end + 2000) std::this_thread::yield();
  stop.store(true);
  for (auto& thread : loggers) thread.join();

  std::uint64_t total = 0;
  for (std::size_t i = 0; i < generations.size(); ++i) {
    EXPECT_EQ(generations[i].calls_after_replacement.load(), 0u) << "generation " << i;
    EXPECT_EQ(generations[i].calls.load(), calls_when_replaced[i]) << "generation " << i;
    total += generations[i].calls.load();
  }
  EXPECT_GT(total, 0u) << "the sinks received nothing: the test proved nothing";
}

// A sink that logs through hipacm, and one that (against the contract) replaces itself: neither
// may deadlock, since no lock of hipacm's is held while a sink runs.
void log_again(void* user, std::int32_t, const char* message) {
  record(user, 3, message);
  if (std::string(message) == "outer") log(LogLevel::kInfo, "inner");
}

void replace_self(void* user, std::int32_t, const char* message) {
  record(user, 2, message);
  set_log_sink(nullptr, nullptr, LogLevel::kOff);
}

TEST(LogSink, ASinkMayLogAndEvenReplaceItselfWithoutDeadlock) {
  SinkReset reset;
  Received nested;
  set_log_sink(&log_again, &nested, LogLevel::kInfo);
  log(LogLevel::kInfo, "outer");
  ASSERT_EQ(nested.events.size(), 2u);
  EXPECT_EQ(nested.events[0].second, "outer");
  EXPECT_EQ(nested.events[1].second, "inner");

  Received once;
  set_log_sink(&replace_self, &once, LogLevel::kInfo);
  log(LogLevel::kWarning, "first");
  log(LogLevel::kWarning, "second goes to stderr");
  ASSERT_EQ(once.events.size(), 1u);
  EXPECT_EQ(once.events[0].second, "first");
}

// fork() while another thread is inside the sink: the child's logging and its own sink changes
// must not wait for a call whose thread does not exist there.
struct Blocking {
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  int report_fd = -1;  ///< the child's events go here
};

void block_or_report(void* user, std::int32_t, const char* message) {
  auto* blocking = static_cast<Blocking*>(user);
  if (std::string(message) == "block") {
    blocking->entered.store(true);
    while (!blocking->release.load()) std::this_thread::yield();
    return;
  }
  const std::string line = std::string(message) + "\n";
  (void)!write(blocking->report_fd, line.data(), line.size());
}

TEST(LogSinkFork, AChildLogsAndReplacesTheSinkWhileAParentThreadWasInsideIt) {
  SinkReset reset;
  ChildReport report;
  ASSERT_TRUE(report.ok());
  Blocking blocking;
  blocking.report_fd = report.write_fd();
  set_log_sink(&block_or_report, &blocking, LogLevel::kDebug);
  std::thread inside([] { log(LogLevel::kInfo, "block"); });
  while (!blocking.entered.load()) std::this_thread::yield();

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a deadlock ends the child with SIGALRM, which the parent reports
    log(LogLevel::kInfo, "child logged through the sink");
    backend::log_once(LogLevel::kInfo, "log-test-child-topic", "child log_once");
    set_log_sink(nullptr, nullptr, LogLevel::kOff);  // must not wait for the parent's thread
    set_log_sink(&block_or_report, &blocking, LogLevel::kDebug);
    log(LogLevel::kInfo, "child set a sink again");
    _exit(0);
  }
  const std::string reported = report.read_to_end();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  blocking.release.store(true);
  inside.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child status " << status << (WIFSIGNALED(status) ? " (signal)" : "");
  EXPECT_EQ(reported, "child logged through the sink\nchild log_once\nchild set a sink again\n");
}

}  // namespace
}  // namespace hipacm::test
