// SPDX-License-Identifier: MIT
// log.h - hipacm's only path to the host's stderr: leveled, prefixed, and quiet on request.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace hipacm::backend {

/// Levels, from $HIPACM_LOG: "off", "error", "warning" (the default), "info", "debug".
enum class LogLevel { kOff = 0, kError = 1, kWarning = 2, kInfo = 3, kDebug = 4 };

/// Sends `message` to the host's sink (set_log_sink) when one is installed, else writes
/// "hipacm: <level>: <message>" to stderr when $HIPACM_LOG allows it; an unknown $HIPACM_LOG
/// value means "warning" and says so once per process. Never throws, takes no lock (safe under
/// any other lock and in a fork()ed child), one write(2) per line so lines from threads do not
/// interleave.
void log(LogLevel level, std::string_view message) noexcept;

/// Where log lines go instead of stderr: called with the level's number and
/// the message alone (no "hipacm: " prefix, no newline).
using LogSink = void (*)(void* user_data, std::int32_t level, const char* message);

/// Routes every line at or below `max_level` to `sink`; a null sink restores
/// stderr and $HIPACM_LOG. When it returns, no call of the sink it replaced is
/// running or will start, so that sink's user_data may be freed: it waits for
/// those calls, so call it with no lock held that a sink may take. Calls to the
/// sink hold no lock of hipacm's, and a sink may log through hipacm itself.
void set_log_sink(LogSink sink, void* user_data, LogLevel max_level) noexcept;

/// The info line that names the compiler library a process compiles with:
/// "compiling with hipRTC 6.4 from /opt/rocm/lib/libhiprtc.so.6". Each compiler
/// says it once per process, when its library is first used for a compile.
void log_compiler_chosen(std::string_view compiler, std::string_view version,
                         std::string_view path) noexcept;

/// log_compiler_chosen() for the library that `load()` gives (an Expected of a table with
/// `version` and `library_path`), the first time it loads while `announced` is still false. Called
/// at a compile, not inside the loader's once-only lock, where a log callback that calls back into
/// hipacm would wait on that lock.
template <class Load>
void log_compiler_chosen_once(std::atomic<bool>& announced, std::string_view compiler, Load load) {
  if (announced.load(std::memory_order_relaxed)) return;
  const auto api = load();
  if (api && !announced.exchange(true, std::memory_order_relaxed))
    log_compiler_chosen(compiler, api.value()->version, api.value()->library_path);
}

/// Like log(), but only the first call with a given `topic` in this process
/// prints: "one logged warning" for conditions that every mode would hit.
void log_once(LogLevel level, std::string_view topic, std::string_view message) noexcept;

}  // namespace hipacm::backend
