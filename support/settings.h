// SPDX-License-Identifier: MIT
// settings.h - every HIPACM_* environment variable: the one list of them, and each read as a typed
// value, through environment_value(), where the code needs it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "support/failure.h"
#include "support/log.h"

namespace hipacm::settings {

/// One variable of the list. The order is the documentation's (docs/SETTINGS.md).
enum class Id : std::uint8_t {
  kArch,
  kIsolation,
  kWorker,
  kIdleMs,
  kServiceFork,
  kPrestartWorkers,
  kMachineJobs,
  kRuntimeDir,
  kHiprtcPch,
  kHiprtcLibrary,
  kComgrLibrary,
  kHipRuntimeLibrary,
  kNvrtcLibrary,
  kCudaDriverLibrary,
  kCache,
  kCacheDir,
  kSystemCache,
  kCacheMaxBytes,
  kRemoteCache,
  kRemoteCacheMode,
  kRemoteCacheKeyFile,
  kRemoteCachePasswordFile,
  kRemoteCacheTimeoutMs,
  kLog,
  kRecord,
  kMpiRoundBytes,
  // Deprecated names, each merged into the setting its entry's replaced_by names.
  kCompileService,
  kWorkerIdleMs,
  kServiceIdleMs,
  // Set by hipacm's own tools for the processes they start.
  kRunStats,
  // Test hooks, all behind kTestHooks.
  kTestHooks,
  kWorkerFault,
  kMpiTestDieRank,
  kCount
};

/// Who may set a variable: users; hipacm's own tools, for the processes they start (`hipacm run`
/// tells its intercept library where to write); or only the test suite (fault hooks that real
/// runs never take).
enum class Audience : std::uint8_t { kUsers, kTools, kTests };

/// The word `hipacm doctor --json` gives an audience: "users", "tools" or "tests".
const char* audience_word(Audience audience);

/// What the documentation says of one variable; docs/SETTINGS.md's tables, the man page's
/// ENVIRONMENT section and `hipacm doctor --json` are made from, or checked against, these.
struct Info {
  Id id;
  const char* name;           ///< HIPACM_CACHE, for example
  const char* takes;          ///< the values it accepts: "off, read or readwrite"
  const char* default_value;  ///< what applies while it is unset
  const char* config_field;   ///< the hipacm_mode_config field it stands in for, or ""
  Audience audience;
  const char* meaning;      ///< one sentence
  const char* replaced_by;  ///< for a deprecated name, the setting to use instead; else ""
};

/// Every variable hipacm reads, in Id order.
std::span<const Info> list();
const Info& info(Id id);
inline const char* name(Id id) { return info(id).name; }

/// The variable's value through environment_value() (secure_getenv; empty reads as unset, and
/// everything does in a privileged process). Read again on every call: hosts and tests change
/// variables while a process runs.
std::optional<std::string> text(Id id);

/// Sets the variable in this process's environment, which workers and later reads take on; an
/// existing value stays unless `overwrite`.
void put(Id id, const std::string& value, bool overwrite);

/// A value that a malformed setting does not stop: `problem` says what was wrong and what was
/// used instead (empty when nothing was).
template <class T>
struct Parsed {
  T value{};
  std::string problem;
};

// ---- Typed reads, each where the code needs the value (none is cached here) ----

/// $HIPACM_ARCH: the default arch.
std::optional<std::string> arch();

// $HIPACM_ISOLATION holds two settings, each optional: the isolation word ("process") and where
// workers come from ("service=off"), comma-separated ("process,service=off").

enum class Isolation : std::uint8_t { kAuto, kInProcess, kProcess };
/// The isolation word of $HIPACM_ISOLATION, unset reading as kAuto; an unknown word (or two) is an
/// INVALID_ARGUMENT failure.
Expected<Isolation> isolation();

/// $HIPACM_ISOLATION without its service= part, unchecked (for doctor's report).
std::optional<std::string> isolation_word();

enum class CompileService : std::uint8_t { kAuto, kOn, kOff };
/// Where workers come from: the deprecated $HIPACM_COMPILE_SERVICE where it is set, else
/// $HIPACM_ISOLATION's service= part, else kAuto. An unknown word reads as kOff, with the problem.
Parsed<CompileService> compile_service();

/// Makes $HIPACM_ISOLATION's service= part `value` for this process and the processes it starts,
/// keeping its isolation word, and unsets the deprecated $HIPACM_COMPILE_SERVICE.
void put_compile_service(CompileService value);

/// $HIPACM_WORKER: the hipacm-worker binary to run.
std::optional<std::string> worker_path();

/// How long an idle worker waits before it retires (ms): the deprecated $HIPACM_WORKER_IDLE_MS
/// where it is set, else $HIPACM_IDLE_MS's first number. A malformed or negative value reads as
/// the default, and a year caps it.
std::int64_t worker_idle_ms();

/// How long an idle compile service waits before it exits (ms): the deprecated
/// $HIPACM_SERVICE_IDLE_MS where it is set, else $HIPACM_IDLE_MS's second number (or its only
/// one). A malformed value reads as the default, and a day caps it. Read in the service, whose
/// stderr is no one's: the hosts warn about the deprecated name instead.
unsigned long service_idle_ms();

/// $HIPACM_SERVICE_FORK: false only for "off".
bool service_fork();

/// $HIPACM_PRESTART_WORKERS for a mode of `max_workers`: 0 (unset or off), `max_workers` (on) or
/// a count, at most `max_workers`; anything else is an INVALID_ARGUMENT failure.
Expected<unsigned> prestart_workers(unsigned max_workers);

/// $HIPACM_MACHINE_JOBS: nullopt while unset (the machine's `online_cpus`), 0 for off, else the
/// count; a malformed value reads as nullopt, with the problem.
Parsed<std::optional<unsigned>> machine_jobs(unsigned online_cpus);

/// $HIPACM_RUNTIME_DIR.
std::optional<std::string> runtime_dir();

enum class HiprtcPch : std::uint8_t { kOn, kOff, kCheck };
/// $HIPACM_HIPRTC_PCH; an unknown word reads as kOn, with the problem.
Parsed<HiprtcPch> hiprtc_pch();

/// $HIPACM_COMGR_LIBRARY.
std::optional<std::string> comgr_library();

/// $HIPACM_CACHE ... the cache policy when the mode's is DEFAULT; unset reads as kReadWrite.
enum class CachePolicy : std::uint8_t { kReadWrite, kRead, kOff };
/// An unknown word is an INVALID_ARGUMENT failure.
Expected<CachePolicy> cache_policy();

/// $HIPACM_CACHE_DIR.
std::optional<std::string> cache_dir();

/// $HIPACM_SYSTEM_CACHE.
std::optional<std::string> system_cache();

/// $HIPACM_CACHE_MAX_BYTES; a malformed value logs one warning per process and reads as the
/// default (2 GiB).
std::int64_t cache_max_bytes();

/// $HIPACM_REMOTE_CACHE: the remote tier's redis:// URL, unparsed (plugin/cache/remote parses it).
std::optional<std::string> remote_cache();

/// $HIPACM_REMOTE_CACHE_MODE: whether this process may write the remote tier.
enum class RemoteCacheMode : std::uint8_t { kRead, kReadWrite };
/// Unset reads as kRead; an unknown word is an INVALID_ARGUMENT failure.
Expected<RemoteCacheMode> remote_cache_mode();

/// $HIPACM_REMOTE_CACHE_KEY_FILE: the HMAC key that signs and verifies remote entries.
std::optional<std::string> remote_cache_key_file();

/// $HIPACM_REMOTE_CACHE_PASSWORD_FILE: the Redis password, when the URL carries none.
std::optional<std::string> remote_cache_password_file();

/// $HIPACM_REMOTE_CACHE_TIMEOUT_MS: the connect and per-command limit; a malformed value, or one
/// outside 1..60000, logs one warning and reads as the default (250 ms).
std::int64_t remote_cache_timeout_ms();

/// $HIPACM_LOG: the stderr level; an unknown word reads as kWarning, with the problem.
Parsed<backend::LogLevel> log_level();

/// $HIPACM_RECORD: the file that compiled requests are appended to.
std::optional<std::string> record_path();

/// $HIPACM_MPI_ROUND_BYTES, unparsed: `warmup --mpi` checks it against its message bounds.
std::optional<std::string> mpi_round_bytes();

/// Logs one warning per process for each deprecated name that is set, saying what replaced it.
/// The reads of the settings that replaced them (isolation(), compile_service(),
/// worker_idle_ms()) call it, so every host that could be affected says so.
void report_deprecated();

// ---- Test hooks: the test suite injects faults into the release build that is shipped, so the
// hooks cannot be compiled out; they act only while the one switch $HIPACM_TEST_HOOKS is 1, read
// here and nowhere else. ----

/// $HIPACM_WORKER_FAULT, when $HIPACM_TEST_HOOKS=1.
std::optional<std::string> worker_fault();

/// $HIPACM_MPI_TEST_DIE_RANK, when $HIPACM_TEST_HOOKS=1.
std::optional<std::string> mpi_test_die_rank();

}  // namespace hipacm::settings
