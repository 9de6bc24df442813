// log.cpp - hipacm's only path to the host's stderr: leveled, prefixed, and quiet on request.
#include "support/log.h"
#include "support/environment.h"
#include "support/no_destructor.h"

#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <cstdlib>
#include <set>
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

}  // namespace

void log(LogLevel level, std::string_view message) noexcept {
  try {
    if (level == LogLevel::kOff || static_cast<int>(level) > static_cast<int>(configured_level()))
      return;
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
