// SPDX-License-Identifier: MIT
// log.cpp - hipacm's only path to the host's stderr: leveled, prefixed, and quiet on request.
#include "support/log.h"
#include "support/enum_words.h"
#include "support/fork_epoch.h"
#include "support/settings.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace hipacm::backend {
namespace {

// Log lines are written from any thread, also under other components' locks and in a fork()ed
// child whose other threads are gone, so the paths that write them take no lock: the host's
// sink is reached through atomics alone, log_once() remembers topics in a lock-free list, and
// stderr gets one write(2). Only set_log_sink() locks, and it is called with no other lock held.

// The word of a line's level after "hipacm: "; a line at kOff (no level) says "log".
constexpr EnumWord<LogLevel> kLevelNames[] = {{LogLevel::kError, "error"},
                                              {LogLevel::kWarning, "warning"},
                                              {LogLevel::kInfo, "info"},
                                              {LogLevel::kDebug, "debug"}};

const char* level_name(LogLevel level) { return word_of_value(kLevelNames, level, "log"); }

bool allows(LogLevel max_level, LogLevel level) {
  return static_cast<int>(level) <= static_cast<int>(max_level);
}

void write_to_stderr(LogLevel level, std::string_view message) {
  std::string line = std::string("hipacm: ") + level_name(level) + ": ";
  line.append(message);
  line.push_back('\n');
  // A single write keeps concurrent lines whole; a short write to a
  // closed or full stderr is not worth failing a compile over.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

// $HIPACM_LOG, read on every line: hosts and tests change it while the process runs, and a
// read costs far less than the compile around it. An unknown value warns once per process.
LogLevel stderr_level() {
  const settings::Parsed<LogLevel> level = settings::log_level();
  if (level.problem.empty()) return level.value;
  static constinit std::atomic<bool> warned{false};
  if (!warned.exchange(true, std::memory_order_relaxed))
    write_to_stderr(LogLevel::kWarning, level.problem);
  return level.value;
}

// ---- The host's sink ----
//
// Two slots, one of them current (or none). A caller counts itself into the slot it found
// current, then checks that the slot is still current, and only then reads the slot's sink:
// calls that counted themselves in after a swap see the swap and back out without calling.
// set_log_sink() fills the slot that is not current, publishes it, and waits for the count of
// the slot it replaced to fall to zero. The count and the current pointer are sequentially
// consistent, so of a caller and a swap at least one sees the other. The fields are written only
// while a slot is not current, after the swap that retired it waited out its calls.

struct SinkSlot {
  LogSink sink = nullptr;
  void* user_data = nullptr;
  LogLevel max_level = LogLevel::kOff;
  std::atomic<std::uint32_t> calls{0};  ///< callers counted in, including ones backing out
};

struct SinkSlots {
  SinkSlot slot[2];
  std::atomic<SinkSlot*> current{nullptr};
};

// Constant-initialised: no global constructor, usable during exit.
constinit SinkSlots g_sinks;

// The calls of each slot that this thread is inside: a sink that, against the contract, sets a
// new sink waits for the other threads' calls only, not its own (which cannot end first).
thread_local std::uint32_t t_calls_inside[2] = {0, 0};

std::size_t index_of(const SinkSlot* slot) { return slot == &g_sinks.slot[0] ? 0 : 1; }

// One counted call: undoes the count on every path, a sink that throws included.
class CountedCall {
 public:
  explicit CountedCall(SinkSlot* slot) : slot_(slot) {
    slot_->calls.fetch_add(1, std::memory_order_seq_cst);
  }
  ~CountedCall() {
    if (inside_) --t_calls_inside[index_of(slot_)];
    // Release: what the sink did happens before set_log_sink() sees the count drop.
    slot_->calls.fetch_sub(1, std::memory_order_release);
  }
  void enter() {
    inside_ = true;
    ++t_calls_inside[index_of(slot_)];
  }
  CountedCall(const CountedCall&) = delete;
  CountedCall& operator=(const CountedCall&) = delete;

 private:
  SinkSlot* slot_;
  bool inside_ = false;
};

// Delivers to the host's sink; false when none is installed.
bool deliver_to_sink(LogLevel level, std::string_view message) {
  for (;;) {
    SinkSlot* slot = g_sinks.current.load(std::memory_order_seq_cst);
    if (slot == nullptr) return false;
    CountedCall call(slot);
    // Replaced between the load and the count: try the new one.
    if (g_sinks.current.load(std::memory_order_seq_cst) != slot) continue;
    if (!allows(slot->max_level, level)) return true;
    const LogSink sink = slot->sink;
    void* const user_data = slot->user_data;
    const std::string text(message);
    call.enter();
    sink(user_data, static_cast<std::int32_t>(level), text.c_str());
    return true;
  }
}

// Serialises set_log_sink(). fork() holds it, so a child never inherits it locked.
struct SinkSetter {
  std::mutex mutex;
};

// In a fork()ed child, with the setter lock held: the calls of the parent's other threads will
// never end here; only the forking thread's own (a sink that forked) still count.
void forget_parent_calls(SinkSetter&) noexcept {
  for (std::size_t i = 0; i < 2; ++i) {
    g_sinks.slot[i].calls.store(t_calls_inside[i], std::memory_order_relaxed);
  }
}

void wait_for_calls(const SinkSlot& slot, std::uint32_t own_calls) {
  using namespace std::chrono_literals;
  // Sinks must not block for long: yield first, then sleep a little between looks.
  for (unsigned looks = 0; slot.calls.load(std::memory_order_seq_cst) != own_calls; ++looks) {
    if (looks < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(50us);
    }
  }
}

// ---- log_once() ----
//
// The topics seen so far, newest first. Nodes are never freed: topics are few (a condition per
// distinct cause), and a lock-free list cannot know when no reader is left.
struct Topic {
  std::string name;
  Topic* older = nullptr;
};

constinit std::atomic<Topic*> g_topics{nullptr};

bool listed(const Topic* from, std::string_view topic) {
  for (const Topic* t = from; t != nullptr; t = t->older) {
    if (t->name == topic) return true;
  }
  return false;
}

// True for the first caller with `topic` in this process. Racing first callers each add a node;
// the one whose node is oldest wins, because every other finds it among the older nodes.
bool first_time(std::string_view topic) {
  if (listed(g_topics.load(std::memory_order_acquire), topic)) return false;
  auto node = std::make_unique<Topic>();
  node->name.assign(topic);
  Topic* const added = node.get();
  added->older = g_topics.load(std::memory_order_relaxed);
  while (!g_topics.compare_exchange_weak(added->older, added, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
  }
  node.release();  // owned by the list from here on, for the life of the process
  return !listed(added->older, topic);
}

}  // namespace

void set_log_sink(LogSink sink, void* user_data, LogLevel max_level) noexcept {
  try {
    SinkSetter& setter =
        ForkGuarded<SinkSetter, ForkRank::kLogSink, &forget_parent_calls>::instance();
    std::lock_guard<std::mutex> lock(setter.mutex);
    SinkSlot* const old = g_sinks.current.load(std::memory_order_relaxed);  // only set here
    SinkSlot* next = nullptr;
    if (sink != nullptr) {
      next = old == &g_sinks.slot[0] ? &g_sinks.slot[1] : &g_sinks.slot[0];
      next->sink = sink;
      next->user_data = user_data;
      next->max_level = max_level;
    }
    g_sinks.current.store(next, std::memory_order_seq_cst);
    if (old != nullptr) wait_for_calls(*old, t_calls_inside[index_of(old)]);
  } catch (...) {
    // std::mutex::lock throws only on a broken system; the sink is then left as it was.
  }
}

void log(LogLevel level, std::string_view message) noexcept {
  try {
    if (level == LogLevel::kOff) return;
    if (deliver_to_sink(level, message)) return;
    if (!allows(stderr_level(), level)) return;
    write_to_stderr(level, message);
  } catch (...) {
  }
}

void log_compiler_chosen(std::string_view compiler, std::string_view version,
                         std::string_view path) noexcept {
  try {
    std::string line = "compiling with ";
    line.append(compiler);
    line.append(" ").append(version.empty() ? std::string_view("(version unknown)") : version);
    line.append(" from ").append(path);
    log(LogLevel::kInfo, line);
  } catch (...) {
  }
}

void log_once(LogLevel level, std::string_view topic, std::string_view message) noexcept {
  try {
    if (first_time(topic)) log(level, message);
  } catch (...) {
  }
}

}  // namespace hipacm::backend
