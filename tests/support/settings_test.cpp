// SPDX-License-Identifier: MIT
// settings_test.cpp - the list of HIPACM_* variables (support/settings.h): complete, documented
// row for row in docs/SETTINGS.md, and each variable read with the values and messages it had.
#include "support/settings.h"

#include <gtest/gtest.h>

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

TEST(Settings, EveryEntryIsComplete) {
  std::set<std::string> names;
  const std::set<std::string> fields = {"", "arch", "isolation", "cache_policy", "cache_dir"};
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
  ScopedEnv bad(Id::kCompileService, "yes");
  const Parsed<CompileService> service = compile_service();
  EXPECT_EQ(service.value, CompileService::kOff);
  EXPECT_EQ(service.problem, "HIPACM_COMPILE_SERVICE='yes' is not auto, on or off; read as off");
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
  ScopedEnv worker(Id::kWorkerIdleMs, "-1");
  ScopedEnv service(Id::kServiceIdleMs, "soon");
  EXPECT_EQ(worker_idle_ms(), 60000);
  EXPECT_EQ(service_idle_ms(), 300000u);
  ScopedEnv worker_long(Id::kWorkerIdleMs, "9000000000000000000");
  ScopedEnv service_long(Id::kServiceIdleMs, "900000000000");
  EXPECT_EQ(worker_idle_ms(), 365LL * 24 * 3600 * 1000);
  EXPECT_EQ(service_idle_ms(), 24UL * 3600 * 1000);
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

TEST(Settings, FaultHooksNeedTheirEnablingVariable) {
  ScopedEnv fault(Id::kWorkerFault, "crash-segv");
  ScopedEnv die(Id::kMpiTestDieRank, "1");
  {
    ScopedEnv off(Id::kWorkerEnableFaults, std::nullopt);
    ScopedEnv mpi_off(Id::kMpiTestEnableFaults, "yes");
    EXPECT_EQ(worker_fault(), std::nullopt);
    EXPECT_EQ(mpi_test_die_rank(), std::nullopt);
  }
  ScopedEnv on(Id::kWorkerEnableFaults, "1");
  ScopedEnv mpi_on(Id::kMpiTestEnableFaults, "1");
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
