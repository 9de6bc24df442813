// SPDX-License-Identifier: MIT
// hipacm_link.h - what the shim needs beyond hipRTC and NVRTC: libhipacm.so.1's private entry,
// loaded on the first compile it could serve, the run's stats file and the shim's few log lines.
#pragma once

#include <string>
#include <string_view>

#include "plugin/abi/intercept_abi.h"

namespace hipacm::intercept {

/// libhipacm's private entry points (plugin/abi/intercept_abi.h).
struct HipacmEntry {
  hipacm_intercept_result* (*compile)(const hipacm_intercept_request*);
  void (*release)(hipacm_intercept_result*);
};

/// The entry of the libhipacm.so.1 that lies beside this library, loaded on the first call;
/// null, with *why set, when it cannot be loaded (then on every later call too).
const HipacmEntry* hipacm_entry(std::string* why) noexcept;

enum class LogLevel { kError = 1, kWarning = 2, kInfo = 3, kDebug = 4 };

/// "hipacm: <level>: <message>" on stderr, in one write, when $HIPACM_LOG allows the level (as
/// libhipacm's log does: off, error, warning (the default), info, debug).
void log_line(LogLevel level, std::string_view message) noexcept;

/// The one warning of a process that compiles with the libraries itself because hipacm cannot help.
void warn_unavailable_once(std::string_view why) noexcept;

/// One line for `hipacm run --stats`: appended, in one write, to the file $HIPACM_RUN_STATS
/// names, when it names one: {"pid":N,"event":"...","reason":"..."}.
void record_stats(std::string_view event, std::string_view reason) noexcept;

}  // namespace hipacm::intercept
