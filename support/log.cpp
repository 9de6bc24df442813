// SPDX-License-Identifier: MIT
// log.cpp - hipacm's only path to the host's stderr: leveled, prefixed, and quiet on request.
#include "support/log.h"
#include "support/environment.h"
#include "support/no_destructor.h"

#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>

namespace hipacm::backend {
namespace {

LogLevel configured_level() {
  const auto env = environment_value("HIPACM_LOG");
  if (!env) return LogLevel::kWarning;
  const std::string& v = *env;
  if (v == "off" || v == "none" || v == "quiet") return LogLevel::kOff;
  if (v == "error") return LogLevel::kError;
  if (v == "info") return LogLevel::kInfo;
  if (v == "debug") return LogLevel::kDebug;
  return LogLevel::kWarning;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kOff:
      break;
  }
  return "log";
}

// The host's sink. Calls hold the lock shared, so set_log_sink (exclusive)
// returns only after every running call of the old sink has finished.
struct SinkState {
  std::shared_mutex mutex;
  LogSink sink = nullptr;
  void* user_data = nullptr;
  LogLevel max_level = LogLevel::kOff;
};

SinkState& sink_state() {
  static NoDestructor<SinkState> state;
  return *state;
}

// Whether a sink is installed, readable without the lock: most lines are
// filtered out before anything is locked or formatted.
constinit std::atomic<bool> sink_installed{false};

// Delivers to the host's sink; false when none is installed.
bool deliver_to_sink(LogLevel level, std::string_view message) {
  if (!sink_installed.load(std::memory_order_acquire)) return false;
  SinkState& state = sink_state();
  std::shared_lock lock(state.mutex);
  if (state.sink == nullptr) return false;
  if (static_cast<int>(level) <= static_cast<int>(state.max_level)) {
    const std::string text(message);
    state.sink(state.user_data, static_cast<std::int32_t>(level), text.c_str());
  }
  return true;
}

}  // namespace

void set_log_sink(LogSink sink, void* user_data, LogLevel max_level) noexcept {
  SinkState& state = sink_state();
  std::unique_lock lock(state.mutex);
  state.sink = sink;
  state.user_data = user_data;
  state.max_level = max_level;
  sink_installed.store(sink != nullptr, std::memory_order_release);
}

void log(LogLevel level, std::string_view message) noexcept {
  try {
    if (level == LogLevel::kOff) return;
    if (deliver_to_sink(level, message)) return;
    if (static_cast<int>(level) > static_cast<int>(configured_level())) return;
    std::string line = std::string("hipacm: ") + level_name(level) + ": ";
    line.append(message);
    line.push_back('\n');
    // A single write keeps concurrent lines whole; a short write to a
    // closed or full stderr is not worth failing a compile over.
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  } catch (...) {
  }
}

void log_once(LogLevel level, std::string_view topic, std::string_view message) noexcept {
  try {
    static NoDestructor<boost::mutex> mutex;
    static NoDestructor<std::set<std::string, std::less<>>> seen;
    {
      boost::lock_guard<boost::mutex> lock(*mutex);
      if (!seen->emplace(topic).second) return;
    }
    log(level, message);
  } catch (...) {
  }
}

}  // namespace hipacm::backend
