// SPDX-License-Identifier: MIT
// warmup_run.cpp - submits every kernel to one mode per arch, tracks progress, collects outcomes.
#include "tools/warmup/warmup_run.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "hip_backend/source_name_policy.h"
#include "plugin/cache/store/location.h"
#include "support/settings.h"
#include "tools/common/code_object_summary.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

constexpr std::chrono::milliseconds kPoll{100};

// Every outcome is read from its future (ignore_errors), so leaving the mode only fails when
// the exit call itself does; hipacm::Mode leaves it on every path, also while an InputError
// unwinds.
hipacm::Mode enter_mode(const WarmupSettings& settings, const std::string& arch) {
  const hipacm::Config config = hipacm::Config()
                                    .arch(arch)
                                    .max_workers(settings.jobs)
                                    .ignore_errors()
                                    .isolation(hipacm::Isolation::Auto)
                                    .compile_timeout(std::chrono::milliseconds(settings.timeout_ms))
                                    .cache_dir(settings.cache_dir)
                                    .cache_failures(settings.cache_failures)
                                    .cache_policy(settings.no_cache ? hipacm::CachePolicy::Off
                                                                    : hipacm::CachePolicy::Default);
  try {
    return hipacm::Mode(config);
  } catch (const hipacm::Error& e) {
    if (e.status() == hipacm::Status::InvalidArgument)
      throw InputError(fmt::format("arch '{}': {}", arch, e.message()));
    if (e.status() == hipacm::Status::BackendUnavailable) throw BackendUnavailable(e.message());
    throw std::runtime_error(fmt::format("cannot enter a mode for {}: {}: {}", arch,
                                         hipacm::status_string(e.status()), e.message()));
  }
}

void read_outcome(const hipacm::Future& future, KernelOutcome* outcome) {
  outcome->key = future.key();
  outcome->log = future.log();
  const hipacm_kernel* kernel = nullptr;
  try {
    kernel = &future.result();
  } catch (const hipacm::Error& e) {
    outcome->status = static_cast<hipacm_status>(e.status());
    outcome->error = e.message().empty() ? hipacm::status_string(e.status()) : e.message();
    return;
  }
  outcome->status = HIPACM_SUCCESS;
  outcome->code_size = kernel->code_size;
  outcome->compile_seconds = kernel->compile_seconds;
  outcome->from_cache = hipacm::from_cache(*kernel);
  const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
  outcome->code.assign(bytes, bytes + kernel->code_size);
  if (Expected<CodeObjectSummary> summary = summarize_code_object(outcome->code))
    outcome->kernels = std::move(summary).value().kernels;
}

// The process's counters, from which a run's are the difference; nullopt when the plugin cannot
// say.
std::optional<hipacm_stats> stats_so_far() {
  hipacm_stats stats{};
  stats.struct_size = sizeof stats;
  if (hipacm_get_stats(&stats) != HIPACM_SUCCESS) return std::nullopt;
  return stats;
}

}  // namespace

void check_named_cache(const WarmupSettings& settings) {
  if (settings.no_cache) return;
  const bool given = !settings.cache_dir.empty();
  if (!given && !settings::cache_dir()) return;
  // Only a run that writes the cache needs it usable; a bad $HIPACM_CACHE is the mode's error.
  try {
    if (cache::resolve_policy(HIPACM_CACHE_DEFAULT) != cache::Policy::kReadWrite) return;
  } catch (const std::exception&) {
    return;
  }
  const std::string dir = cache::user_cache_dir(settings.cache_dir);
  const std::string label =
      given ? fmt::format("--cache-dir {}", printable(dir))
            : fmt::format("{}={}", settings::name(settings::Id::kCacheDir), printable(dir));
  if (Expected<void> prepared = cache::prepare_writable_dir(dir); !prepared)
    throw InputError(fmt::format("{}: the cache cannot be used: {}", label,
                                 printable(prepared.failure().message)));
  std::error_code ec;
  const std::string database = cache::database_in(dir);
  const auto type = std::filesystem::symlink_status(database, ec).type();
  if (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::regular)
    throw InputError(fmt::format("{}: the cache cannot be used: {} is not a regular file", label,
                                 printable(database)));
}

std::uint32_t parallel_compiles(std::uint32_t jobs) {
  return jobs != 0 ? jobs : std::max(1u, std::thread::hardware_concurrency());
}

void check_request_names(const std::vector<KernelInput>& inputs) {
  for (const KernelInput& input : inputs) {
    if (const auto allowed = backend::source_name_allowed(input.source_name); !allowed)
      throw InputError(fmt::format("{}: source name refused: {}", printable(input.label),
                                   printable(allowed.failure().message)));
    for (const auto& header : input.headers)
      if (const auto allowed = backend::source_name_allowed(header.first); !allowed)
        throw InputError(fmt::format("{}: header name refused: {}", printable(input.label),
                                     printable(allowed.failure().message)));
  }
}

void check_archs(const WarmupSettings& settings) {
  // Entering a mode checks the arch and that its compiler loads (from the
  // cache's remembered facts when it can); without this, every compile would
  // fail one by one with BACKEND_UNAVAILABLE.
  for (const std::string& arch : settings.archs) enter_mode(settings, arch).exit();
}

std::size_t compile_count(const std::vector<KernelInput>& inputs,
                          const std::vector<std::string>& archs) {
  std::size_t count = 0;
  for (const std::string& arch : archs)
    for (const KernelInput& input : inputs) count += input.compiles_for(arch) ? 1 : 0;
  return count;
}

WarmupResult run_warmup(const std::vector<KernelInput>& inputs, const WarmupSettings& settings,
                        Progress& progress) {
  using Clock = std::chrono::steady_clock;
  WarmupResult result;
  const auto started = Clock::now();
  const std::optional<hipacm_stats> stats_before = stats_so_far();
  std::size_t done_before = 0, failed = 0, item_index = 0;
  // Built once: every arch's mode gets the same requests.
  std::vector<hipacm::Request> requests;
  for (const KernelInput& input : inputs)
    requests.push_back(hipacm::Request(input.source)
                           .name(input.source_name)
                           .options(input.options)
                           .headers(input.headers)
                           .name_expressions(input.name_expressions));
  for (const std::string& arch : settings.archs) {
    const auto arch_started = Clock::now();
    hipacm::Mode mode = enter_mode(settings, arch);
    std::vector<hipacm::Future> futures(inputs.size());
    std::vector<KernelOutcome> outcomes(inputs.size());
    std::size_t for_this_arch = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].compiles_for(arch)) continue;  // recorded for another arch
      const std::size_t item = item_index++;
      if (!settings.only_items.empty() && !settings.only_items.at(item)) continue;
      ++for_this_arch;
      outcomes[i].input = &inputs[i];
      outcomes[i].arch = arch;
      try {
        futures[i] = mode.submit(requests[i]);
      } catch (const hipacm::Error& e) {
        if (e.status() == hipacm::Status::InvalidArgument)
          throw InputError(fmt::format("{}: refused by hipacm: {}", printable(inputs[i].label),
                                       printable(e.message())));
        outcomes[i].status = static_cast<hipacm_status>(e.status());
        outcomes[i].error = fmt::format("submit failed: {}", e.message());
        ++failed;
      }
    }
    // Poll in submission order: wait on the first unfinished future, then sweep.
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < futures.size(); ++i)
      if (futures[i]) pending.push_back(i);
    std::size_t done = for_this_arch - pending.size();
    progress.update(done_before + done, failed, arch);
    while (!pending.empty()) {
      futures[pending.front()].wait_for(kPoll);
      std::erase_if(pending, [&](std::size_t i) {
        const hipacm::Status status = futures[i].status();
        if (status == hipacm::Status::NotReady) return false;
        ++done;
        if (status != hipacm::Status::Success) ++failed;
        return true;
      });
      progress.update(done_before + done, failed, arch);
    }
    mode.exit();  // collects: every future is complete and its callbacks (none) have run
    for (std::size_t i = 0; i < futures.size(); ++i)
      if (futures[i]) read_outcome(futures[i], &outcomes[i]);
    result.arch_wall_seconds.emplace_back(
        arch, std::chrono::duration<double>(Clock::now() - arch_started).count());
    done_before += for_this_arch;
    for (KernelOutcome& outcome : outcomes)
      if (outcome.input != nullptr) result.outcomes.push_back(std::move(outcome));
  }
  progress.finish();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (const std::optional<hipacm_stats> stats_after = stats_so_far(); stats_before && stats_after) {
    result.failed_from_cache = stats_after->cached_failures - stats_before->cached_failures;
    result.remote_hits = stats_after->remote_hits - stats_before->remote_hits;
    result.remote_waits = stats_after->remote_waits - stats_before->remote_waits;
  }
  return result;
}

}  // namespace hipacm::cli
