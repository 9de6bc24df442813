// SPDX-License-Identifier: MIT
// log.h - hipacm's only path to the host's stderr: leveled, prefixed, and quiet on request.
#pragma once

#include <cstdint>
#include <string_view>

namespace hipacm::backend {

/// Levels, from $HIPACM_LOG: "off", "error", "warning" (the default), "info", "debug".
enum class LogLevel { kOff = 0, kError = 1, kWarning = 2, kInfo = 3, kDebug = 4 };

/// Writes "hipacm: <level>: <message>" to stderr when $HIPACM_LOG allows it.
/// Never throws; one write(2) per line so lines from threads do not interleave.
void log(LogLevel level, std::string_view message) noexcept;

/// Where log lines go instead of stderr: called with the level's number and
/// the message alone (no "hipacm: " prefix, no newline).
using LogSink = void (*)(void* user_data, std::int32_t level, const char* message);

/// Routes every line at or below `max_level` to `sink`; a null sink restores
/// stderr and $HIPACM_LOG. When it returns, no call of the sink it replaced is
/// running or will start, so that sink's user_data may be freed.
void set_log_sink(LogSink sink, void* user_data, LogLevel max_level) noexcept;

/// Like log(), but only the first call with a given `topic` in this process
/// prints: "one logged warning" for conditions that every mode would hit.
void log_once(LogLevel level, std::string_view topic, std::string_view message) noexcept;

}  // namespace hipacm::backend
