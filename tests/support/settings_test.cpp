// SPDX-License-Identifier: MIT
// settings_test.cpp - the list of HIPACM_* variables (support/settings.h): complete, documented
// row for row in docs/SETTINGS.md, and each variable read with the values and messages it had.
#include "support/settings.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/scoped_env.h"

namespace hipacm::settings {
namespace {

/// Sets (or unsets, with nullopt) the variable of a setting for a scope.
class ScopedEnv : public test::ScopedEnv {
 public:
  ScopedEnv(Id id, std::optional<std::string> value)
      : test::ScopedEnv(name(id), std::move(value)) {}
};

// The row docs/SETTINGS.md holds for `setting`.
std::string table_row(const Info& setting) {
  const std::string field = *setting.config_field == '\0'
                                ? std::string("-")
                                : std::string("`") + setting.config_field + "`";
  return std::string("| `") + setting.name + "` | " + setting.takes + " | " +
         setting.default_value + " | " + field + " | " + setting.meaning + " |";
}

std::vector<std::string> documented_rows() {
  std::ifstream in(std::string(HIPACM_SOURCE_DIR) + "/docs/SETTINGS.md");
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `HIPACM_", 0) == 0) rows.push_back(line);
  return rows;
}

// The log lines a test saw (support/log.h's sink), from every thread.
struct LogLines {
  LogLines() { backend::set_log_sink(&LogLines::take, this, backend::LogLevel::kDebug); }
  ~LogLines() { backend::set_log_sink(nullptr, nullptr, backend::LogLevel::kOff); }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;
  static void take(void* self, std::int32_t, const char* message) {
    static_cast<LogLines*>(self)->lines.emplace_back(message);
  }
  std::size_t count(const std::string& text) const {
    std::size_t n = 0;
    for (const std::string& line : lines) n += line.find(text) != std::string::npos ? 1 : 0;
    return n;
  }
  std::vector<std::string> lines;
};

// First in the file: a deprecated name warns once per process, and a run of the whole binary in
// one process must not have used that warning up already.
TEST(Settings, ADeprecatedNameStillAppliesAndWarnsOnce) {
  LogLines log;
  ScopedEnv idle(Id::kIdleMs, "5000,7000");
  ScopedEnv old(Id::kWorkerIdleMs, "1234");
  EXPECT_EQ(worker_idle_ms(), 1234);
  EXPECT_EQ(worker_idle_ms(), 1234);
  EXPECT_EQ(service_idle_ms(), 7000u);
  EXPECT_EQ(log.count("HIPACM_WORKER_IDLE_MS is deprecated: give the workers' idle time as the "
                      "first number of HIPACM_IDLE_MS instead (docs/SETTINGS.md); until then its "
                      "value applies"),
            1u);
  ScopedEnv service(Id::kCompileService, "on");
  ScopedEnv new_name(Id::kIsolation, "process,service=off");
  EXPECT_EQ(compile_service().value, CompileService::kOn);
  EXPECT_EQ(isolation().value(), Isolation::kProcess);
  EXPECT_EQ(log.count("HIPACM_COMPILE_SERVICE is deprecated: put service=on in HIPACM_ISOLATION"),
            1u);
}

TEST(Settings, EveryEntryIsComplete) {
  std::set<std::string> names;
  const std::set<std::string> fields = {"",          "arch",        "isolation", "cache_policy",
                                        "cache_dir", "remote_cache"};
  for (const Info& setting : list()) {
    SCOPED_TRACE(setting.name);
    EXPECT_EQ(std::string(setting.name).rfind("HIPACM_", 0), 0u);
    EXPECT_TRUE(names.insert(setting.name).second) << "listed twice";
    EXPECT_NE(*setting.takes, '\0');
    EXPECT_NE(*setting.default_value, '\0');
    EXPECT_NE(*setting.meaning, '\0');
    EXPECT_EQ(fields.count(setting.config_field), 1u) << "not a hipacm_mode_config field";
    EXPECT_EQ(&info(setting.id), &setting);
    // A Markdown table cell cannot hold a '|'.
    for (const char* cell : {setting.takes, setting.default_value, setting.meaning})
      EXPECT_EQ(std::string(cell).find('|'), std::string::npos) << cell;
  }
  EXPECT_EQ(list().size(), static_cast<std::size_t>(Id::kCount));
}

// docs/SETTINGS.md is the table users read, and the man page's ENVIRONMENT section is made from
// it: it must say what the list says, in the list's order.
TEST(Settings, DocsTableIsTheList) {
  std::vector<std::string> expected;
  for (const Info& setting : list()) expected.push_back(table_row(setting));
  const std::vector<std::string> documented = documented_rows();
  std::string all;
  for (const std::string& row : expected) all += row + "\n";
  EXPECT_EQ(documented, expected) << "docs/SETTINGS.md's rows should be, in this order:\n" << all;
}

TEST(Settings, EmptyReadsAsUnset) {
  ScopedEnv empty(Id::kArch, "");
  EXPECT_EQ(arch(), std::nullopt);
  ScopedEnv set(Id::kArch, "gfx90a");
  EXPECT_EQ(arch(), "gfx90a");
}

TEST(Settings, CachePolicyAndItsMessage) {
  {
    ScopedEnv unset(Id::kCache, std::nullopt);
    EXPECT_EQ(cache_policy().value(), CachePolicy::kReadWrite);
  }
  ScopedEnv bad(Id::kCache, "sometimes");
  const Expected<CachePolicy> policy = cache_policy();
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.failure().status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(policy.failure().message,
            "HIPACM_CACHE is 'sometimes'; expected off, read or readwrite");
}

TEST(Settings, IsolationAndItsMessage) {
  {
    ScopedEnv in_process(Id::kIsolation, "in-process");
    EXPECT_EQ(isolation().value(), Isolation::kInProcess);
  }
  ScopedEnv bad(Id::kIsolation, "sometimes");
  ASSERT_FALSE(isolation().has_value());
  EXPECT_EQ(isolation().failure().message,
            "HIPACM_ISOLATION is 'sometimes'; expected auto, in-process or process");
}

TEST(Settings, CompileServiceReadsAnUnknownWordAsOff) {
  ScopedEnv new_name(Id::kIsolation, "process,service=yes");
  {
    ScopedEnv bad(Id::kCompileService, "yes");
    const Parsed<CompileService> service = compile_service();
    EXPECT_EQ(service.value, CompileService::kOff);
    EXPECT_EQ(service.problem, "HIPACM_COMPILE_SERVICE='yes' is not auto, on or off; read as off");
  }
  ScopedEnv unset(Id::kCompileService, std::nullopt);
  const Parsed<CompileService> service = compile_service();
  EXPECT_EQ(service.value, CompileService::kOff);
  EXPECT_EQ(service.problem,
            "HIPACM_ISOLATION has service='yes', which is not auto, on or off; read as off");
  EXPECT_EQ(isolation().value(), Isolation::kProcess);  // the isolation word stands
}

TEST(Settings, IsolationHoldsWhereWorkersComeFrom) {
  ScopedEnv unset(Id::kCompileService, std::nullopt);
  struct Case {
    const char* value;
    Isolation isolation;
    CompileService service;
  };
  for (const Case& c :
       {Case{"process,service=off", Isolation::kProcess, CompileService::kOff},
        Case{"service=on", Isolation::kAuto, CompileService::kOn},
        Case{"service=auto,in-process", Isolation::kInProcess, CompileService::kAuto},
        Case{"auto", Isolation::kAuto, CompileService::kAuto}}) {
    SCOPED_TRACE(c.value);
    ScopedEnv isolation_env(Id::kIsolation, c.value);
    EXPECT_EQ(isolation().value(), c.isolation);
    EXPECT_EQ(compile_service().value, c.service);
    EXPECT_EQ(compile_service().problem, "");
  }
  ScopedEnv two(Id::kIsolation, "process,in-process");
  EXPECT_EQ(isolation().failure().message,
            "HIPACM_ISOLATION is 'process,in-process'; expected auto, in-process or process, and "
            "at most one service=auto, on or off, separated by commas");
  EXPECT_EQ(isolation_word(), "process,in-process");
}

TEST(Settings, PutCompileServiceKeepsTheIsolationWord) {
  ScopedEnv isolation_env(Id::kIsolation, "process,service=on");
  ScopedEnv old(Id::kCompileService, "auto");
  put_compile_service(CompileService::kOff);
  EXPECT_EQ(text(Id::kIsolation), "process,service=off");
  EXPECT_EQ(text(Id::kCompileService), std::nullopt);
  EXPECT_EQ(compile_service().value, CompileService::kOff);
  ScopedEnv none(Id::kIsolation, std::nullopt);
  put_compile_service(CompileService::kOn);
  EXPECT_EQ(text(Id::kIsolation), "service=on");
  EXPECT_EQ(isolation_word(), std::nullopt);
}

TEST(Settings, PrestartWorkers) {
  ScopedEnv on(Id::kPrestartWorkers, "on");
  EXPECT_EQ(prestart_workers(6).value(), 6u);
  ScopedEnv count(Id::kPrestartWorkers, "9");
  EXPECT_EQ(prestart_workers(6).value(), 6u);
  ScopedEnv bad(Id::kPrestartWorkers, "2x");
  EXPECT_EQ(prestart_workers(6).failure().message,
            "HIPACM_PRESTART_WORKERS is '2x'; expected off, on or a number of workers");
}

TEST(Settings, MachineJobs) {
  ScopedEnv off(Id::kMachineJobs, "0");
  EXPECT_EQ(machine_jobs(8).value, 0u);
  ScopedEnv bad(Id::kMachineJobs, "-3");
  const Parsed<std::optional<unsigned>> jobs = machine_jobs(8);
  EXPECT_EQ(jobs.value, std::nullopt);
  EXPECT_EQ(jobs.problem,
            "HIPACM_MACHINE_JOBS='-3' is not a positive count or 'off'; using the machine's 8 "
            "online CPUs");
}

TEST(Settings, IdleTimesFallBackAndAreCapped) {
  ScopedEnv idle(Id::kIdleMs, "-1,soon");
  ScopedEnv worker(Id::kWorkerIdleMs, std::nullopt);
  ScopedEnv service(Id::kServiceIdleMs, std::nullopt);
  EXPECT_EQ(worker_idle_ms(), 60000);
  EXPECT_EQ(service_idle_ms(), 300000u);
  ScopedEnv long_idle(Id::kIdleMs, "900000000000000");
  EXPECT_EQ(worker_idle_ms(), 365LL * 24 * 3600 * 1000);
  EXPECT_EQ(service_idle_ms(), 24UL * 3600 * 1000);
  ScopedEnv one(Id::kIdleMs, "2500");
  EXPECT_EQ(worker_idle_ms(), 2500);
  EXPECT_EQ(service_idle_ms(), 2500u);
  ScopedEnv service_only(Id::kIdleMs, ",600000");
  EXPECT_EQ(worker_idle_ms(), 60000);
  EXPECT_EQ(service_idle_ms(), 600000u);
  // The old names read as they did.
  ScopedEnv worker_old(Id::kWorkerIdleMs, "9000000000000000000");
  ScopedEnv service_old(Id::kServiceIdleMs, "x");
  EXPECT_EQ(worker_idle_ms(), 365LL * 24 * 3600 * 1000);
  EXPECT_EQ(service_idle_ms(), 300000u);
}

TEST(Settings, HiprtcPchReadsAnUnknownWordAsOn) {
  ScopedEnv bad(Id::kHiprtcPch, "maybe");
  EXPECT_EQ(hiprtc_pch().value, HiprtcPch::kOn);
  EXPECT_EQ(hiprtc_pch().problem, "HIPACM_HIPRTC_PCH='maybe' is not on, off or check");
}

TEST(Settings, LogLevelQuotesAnUnknownValueBounded) {
  ScopedEnv bad(Id::kLog, "lou\x1b" + std::string(80, 'd'));
  const Parsed<backend::LogLevel> level = log_level();
  EXPECT_EQ(level.value, backend::LogLevel::kWarning);
  EXPECT_EQ(level.problem, "HIPACM_LOG=lou?" + std::string(60, 'd') +
                               "... is not a level: off, error, warning, info, debug; using "
                               "warning");
}

TEST(Settings, TestHooksActOnlyBehindTheirOneSwitch) {
  ScopedEnv fault(Id::kWorkerFault, "crash-segv");
  ScopedEnv die(Id::kMpiTestDieRank, "1");
  for (const std::optional<std::string>& off : {std::optional<std::string>(), {"yes"}, {"0"}}) {
    ScopedEnv hooks(Id::kTestHooks, off);
    EXPECT_EQ(worker_fault(), std::nullopt);
    EXPECT_EQ(mpi_test_die_rank(), std::nullopt);
  }
  ScopedEnv on(Id::kTestHooks, "1");
  EXPECT_EQ(worker_fault(), "crash-segv");
  EXPECT_EQ(mpi_test_die_rank(), "1");
}

TEST(Settings, PutKeepsOrReplaces) {
  ScopedEnv log(Id::kLog, "error");
  put(Id::kLog, "info", /*overwrite=*/false);
  EXPECT_EQ(text(Id::kLog), "error");
  put(Id::kLog, "info", /*overwrite=*/true);
  EXPECT_EQ(text(Id::kLog), "info");
}

}  // namespace
}  // namespace hipacm::settings
