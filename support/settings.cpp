// SPDX-License-Identifier: MIT
// settings.cpp - reads each HIPACM_* variable as a typed value, with the messages its malformed
// values have always had.
#include "support/settings.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "support/bytes/byte_size.h"
#include "support/enum_words.h"
#include "support/environment.h"

namespace hipacm::settings {
namespace {

constexpr std::int64_t kDefaultWorkerIdleMs = 60000;
// A year already means "keep workers for the process's life"; more would overflow the clock
// arithmetic (since + timeout) and retire them at once.
constexpr std::int64_t kMaxWorkerIdleMs = 365LL * 24 * 3600 * 1000;
constexpr unsigned long kDefaultServiceIdleMs = 5UL * 60 * 1000;
constexpr unsigned long kMaxServiceIdleMs = 24UL * 3600 * 1000;
constexpr std::int64_t kDefaultCacheMaxBytes = std::int64_t{2} << 30;
constexpr std::size_t kMaxQuotedValue = 64;

std::string named(Id id) { return name(id); }

// A value a message quotes: bounded, control bytes replaced.
std::string quoted(const std::string& value) {
  std::string out = value.substr(0, kMaxQuotedValue);
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  if (value.size() > kMaxQuotedValue) out += "...";
  return out;
}

// The whole of `text` as a number of type T, or nullopt.
template <class T>
std::optional<T> whole_number(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// $HIPACM_ISOLATION's two settings: its isolation words (one, when it is well formed) and the
// value of its service= item.
struct IsolationParts {
  std::vector<std::string> words;
  std::optional<std::string> service;
};

IsolationParts isolation_parts(const std::string& value) {
  constexpr std::string_view kService = "service=";
  IsolationParts parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = value.find(',', start);
    std::string item = value.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.starts_with(kService)) {
      parts.service = item.substr(kService.size());
    } else {
      parts.words.push_back(std::move(item));
    }
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ",") + word;
  return out;
}

// The words of each setting that takes one, read both ways where the setting is also written.
constexpr EnumWord<Isolation> kIsolationWords[] = {{Isolation::kAuto, "auto"},
                                                   {Isolation::kInProcess, "in-process"},
                                                   {Isolation::kProcess, "process"}};
constexpr EnumWord<CompileService> kServiceWords[] = {
    {CompileService::kAuto, "auto"}, {CompileService::kOn, "on"}, {CompileService::kOff, "off"}};
constexpr EnumWord<HiprtcPch> kPchWords[] = {
    {HiprtcPch::kOn, "on"}, {HiprtcPch::kOff, "off"}, {HiprtcPch::kCheck, "check"}};
constexpr EnumWord<CachePolicy> kCacheWords[] = {{CachePolicy::kReadWrite, "readwrite"},
                                                 {CachePolicy::kOff, "off"},
                                                 {CachePolicy::kRead, "read"}};
constexpr EnumWord<backend::LogLevel> kLevelWords[] = {
    {backend::LogLevel::kOff, "off"},         {backend::LogLevel::kOff, "none"},
    {backend::LogLevel::kOff, "quiet"},       {backend::LogLevel::kError, "error"},
    {backend::LogLevel::kWarning, "warning"}, {backend::LogLevel::kInfo, "info"},
    {backend::LogLevel::kDebug, "debug"}};

// One part of $HIPACM_IDLE_MS: the first number (workers) or the second (the compile service);
// a value without a comma gives both.
std::string idle_part(const std::string& value, bool second) {
  const std::size_t comma = value.find(',');
  if (comma == std::string::npos) return value;
  return second ? value.substr(comma + 1) : value.substr(0, comma);
}

// What replaces a deprecated name, said in its warning.
std::string replacement(Id id, const std::string& value) {
  switch (id) {
    case Id::kCompileService:
      return "put service=" + quoted(value) + " in " + named(Id::kIsolation);
    case Id::kWorkerIdleMs:
      return "give the workers' idle time as the first number of " + named(Id::kIdleMs);
    case Id::kServiceIdleMs:
      return "give the service's idle time as the second number of " + named(Id::kIdleMs);
    default:
      break;
  }
  return std::string("use ") + info(id).replaced_by;
}

// What a test hook reads: its own variable, while the one switch is "1".
std::optional<std::string> test_hook(Id hook) {
  if (text(Id::kTestHooks) != "1") return std::nullopt;
  return text(hook);
}

}  // namespace

std::optional<std::string> text(Id id) { return backend::environment_value(name(id)); }

void put(Id id, const std::string& value, bool overwrite) {
  ::setenv(name(id), value.c_str(), overwrite ? 1 : 0);
}

std::optional<std::string> arch() { return text(Id::kArch); }

Expected<Isolation> isolation() {
  report_deprecated();
  const std::optional<std::string> value = text(Id::kIsolation);
  if (!value) return Isolation::kAuto;
  const IsolationParts parts = isolation_parts(*value);
  if (parts.words.empty()) return Isolation::kAuto;
  if (parts.words.size() == 1) {
    if (const std::optional<Isolation> word = value_of_word(kIsolationWords, parts.words.front()))
      return *word;
  }
  // A value of one word keeps the message it always had.
  const bool one_word = parts.words.size() == 1 && !parts.service;
  return Failure{
      HIPACM_ERROR_INVALID_ARGUMENT,
      named(Id::kIsolation) + " is '" + *value + "'; expected auto, in-process or process" +
          (one_word ? "" : ", and at most one service=auto, on or off, separated by commas")};
}

std::optional<std::string> isolation_word() {
  const std::optional<std::string> value = text(Id::kIsolation);
  if (!value) return std::nullopt;
  std::string words = joined(isolation_parts(*value).words);
  if (words.empty()) return std::nullopt;
  return words;
}

Parsed<CompileService> compile_service() {
  report_deprecated();
  std::optional<std::string> value = text(Id::kCompileService);
  // Where the value came from, as its problem says it.
  std::string where = named(Id::kCompileService) + "='";
  std::string is_not = "' is not";
  if (!value) {
    if (const std::optional<std::string> isolation = text(Id::kIsolation))
      value = isolation_parts(*isolation).service;
    where = named(Id::kIsolation) + " has service='";
    is_not = "', which is not";
  }
  if (!value) return {CompileService::kAuto, ""};
  if (const std::optional<CompileService> word = value_of_word(kServiceWords, *value))
    return {*word, ""};
  return {CompileService::kOff, where + *value + is_not + " auto, on or off; read as off"};
}

void put_compile_service(CompileService value) {
  std::vector<std::string> words;
  if (const std::optional<std::string> isolation = text(Id::kIsolation))
    words = isolation_parts(*isolation).words;
  words.push_back(std::string("service=") + word_of_value(kServiceWords, value, "auto"));
  ::setenv(name(Id::kIsolation), joined(words).c_str(), 1);
  ::unsetenv(name(Id::kCompileService));
}

std::optional<std::string> worker_path() { return text(Id::kWorker); }

std::int64_t worker_idle_ms() {
  report_deprecated();
  std::optional<std::string> value = text(Id::kWorkerIdleMs);
  if (!value) {
    if (const std::optional<std::string> idle = text(Id::kIdleMs)) value = idle_part(*idle, false);
  }
  if (!value) return kDefaultWorkerIdleMs;
  const std::optional<std::int64_t> ms = whole_number<std::int64_t>(*value);
  if (!ms || *ms < 0) return kDefaultWorkerIdleMs;
  return std::min(*ms, kMaxWorkerIdleMs);
}

unsigned long service_idle_ms() {
  std::optional<std::string> value = text(Id::kServiceIdleMs);
  if (!value) {
    if (const std::optional<std::string> idle = text(Id::kIdleMs)) value = idle_part(*idle, true);
  }
  if (!value) return kDefaultServiceIdleMs;
  const std::optional<unsigned long> ms = whole_number<unsigned long>(*value);
  return ms ? std::min(*ms, kMaxServiceIdleMs) : kDefaultServiceIdleMs;
}

bool service_fork() { return text(Id::kServiceFork) != "off"; }

Expected<unsigned> prestart_workers(unsigned max_workers) {
  const std::optional<std::string> value = text(Id::kPrestartWorkers);
  if (!value || *value == "off") return 0u;
  if (*value == "on") return max_workers;
  const std::optional<unsigned> count = whole_number<unsigned>(*value);
  if (!count)
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, named(Id::kPrestartWorkers) + " is '" + *value +
                                                      "'; expected off, on or a number of workers"};
  return std::min(*count, max_workers);
}

Parsed<std::optional<unsigned>> machine_jobs(unsigned online_cpus) {
  const std::optional<std::string> value = text(Id::kMachineJobs);
  if (!value) return {};
  if (*value == "off" || *value == "0") return {0u, ""};
  if (const std::optional<unsigned> count = whole_number<unsigned>(*value); count && *count > 0)
    return {*count, ""};
  return {std::nullopt, named(Id::kMachineJobs) + "='" + *value +
                            "' is not a positive count or 'off'; using the machine's " +
                            std::to_string(online_cpus) + " online CPUs"};
}

std::optional<std::string> runtime_dir() { return text(Id::kRuntimeDir); }

Parsed<HiprtcPch> hiprtc_pch() {
  const std::optional<std::string> value = text(Id::kHiprtcPch);
  if (!value) return {HiprtcPch::kOn, ""};
  if (const std::optional<HiprtcPch> word = value_of_word(kPchWords, *value)) return {*word, ""};
  return {HiprtcPch::kOn, named(Id::kHiprtcPch) + "='" + *value + "' is not on, off or check"};
}

std::optional<std::string> comgr_library() { return text(Id::kComgrLibrary); }

Expected<CachePolicy> cache_policy() {
  const std::optional<std::string> value = text(Id::kCache);
  if (!value) return CachePolicy::kReadWrite;
  if (const std::optional<CachePolicy> word = value_of_word(kCacheWords, *value)) return *word;
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                 named(Id::kCache) + " is '" + *value + "'; expected off, read or readwrite"};
}

std::optional<std::string> cache_dir() { return text(Id::kCacheDir); }

std::optional<std::string> system_cache() { return text(Id::kSystemCache); }

std::int64_t cache_max_bytes() {
  const std::optional<std::string> value = text(Id::kCacheMaxBytes);
  if (!value) return kDefaultCacheMaxBytes;
  // The same spellings as `hipacm cache prune --max-bytes`: 2147483648, 512M, 1.5G, 100KiB.
  if (const std::optional<std::int64_t> parsed = parse_byte_size(*value)) return *parsed;
  backend::log_once(backend::LogLevel::kWarning, "cache-max-bytes",
                    named(Id::kCacheMaxBytes) + ": " + byte_size_problem(*value) +
                        "; using the default of 2 GiB");
  return kDefaultCacheMaxBytes;
}

std::optional<std::string> remote_cache() { return text(Id::kRemoteCache); }

Expected<RemoteCacheMode> remote_cache_mode() {
  const std::optional<std::string> value = text(Id::kRemoteCacheMode);
  if (!value || *value == "read") return RemoteCacheMode::kRead;
  if (*value == "read-write") return RemoteCacheMode::kReadWrite;
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                 named(Id::kRemoteCacheMode) + " is '" + *value + "'; expected read or read-write"};
}

std::optional<std::string> remote_cache_key_file() { return text(Id::kRemoteCacheKeyFile); }

std::optional<std::string> remote_cache_password_file() {
  return text(Id::kRemoteCachePasswordFile);
}

std::int64_t remote_cache_timeout_ms() {
  constexpr std::int64_t kDefault = 250;
  const std::optional<std::string> value = text(Id::kRemoteCacheTimeoutMs);
  if (!value) return kDefault;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (errno == 0 && end != value->c_str() && *end == '\0' && parsed >= 1 && parsed <= 60000)
    return parsed;
  backend::log_once(backend::LogLevel::kWarning, "remote-cache-timeout",
                    named(Id::kRemoteCacheTimeoutMs) + " is '" + *value +
                        "'; expected milliseconds from 1 to 60000; using 250");
  return kDefault;
}

Parsed<backend::LogLevel> log_level() {
  using backend::LogLevel;
  const std::optional<std::string> value = text(Id::kLog);
  if (!value) return {LogLevel::kWarning, ""};
  if (const std::optional<LogLevel> word = value_of_word(kLevelWords, *value)) return {*word, ""};
  return {LogLevel::kWarning,
          named(Id::kLog) + "=" + quoted(*value) +
              " is not a level: off, error, warning, info, debug; using warning"};
}

std::optional<std::string> record_path() { return text(Id::kRecord); }

std::optional<std::string> mpi_round_bytes() { return text(Id::kMpiRoundBytes); }

void report_deprecated() {
  for (const Info& setting : list()) {
    if (*setting.replaced_by == '\0') continue;
    const std::optional<std::string> value = text(setting.id);
    if (!value) continue;
    backend::log_once(backend::LogLevel::kWarning, setting.name,
                      std::string(setting.name) +
                          " is deprecated: " + replacement(setting.id, *value) +
                          " instead (docs/SETTINGS.md); until then its value applies");
  }
}

std::optional<std::string> worker_fault() { return test_hook(Id::kWorkerFault); }

std::optional<std::string> mpi_test_die_rank() { return test_hook(Id::kMpiTestDieRank); }

}  // namespace hipacm::settings
