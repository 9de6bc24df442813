// SPDX-License-Identifier: MIT
// mode_settings.cpp - a mode's resolved configuration: what the host asked for, completed from the
// environment and validated.
#include "plugin/mode/mode_settings.h"

#include <boost/thread/thread.hpp>

#include <cstdlib>
#include <memory>
#include <optional>

#include "hip_backend/device/device_arch.h"
#include "hip_backend/dispatch/arch_validation.h"
#include "hip_backend/pool/prestart_setting.h"
#include "hip_backend/target_arch.h"
#include "plugin/cache/library_fact_memo.h"
#include "support/settings.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

constexpr unsigned kMaxWorkersLimit = 1024;

unsigned hardware_workers() {
  const unsigned n = boost::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

unsigned resolve_prestart_workers(unsigned max_workers) {
  std::string error;
  const std::optional<unsigned> count =
      backend::prestart_workers_from_environment(max_workers, &error);
  if (!count) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, error);
  return *count;
}

std::string resolve_arch(const std::optional<std::string>& requested,
                         backend::LibraryFactMemo* memo, bool nvidia_arch_judged_by_program) {
  std::string arch;
  if (requested) {
    arch = *requested;
    if (arch.empty())
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                        std::string("arch is empty (pass NULL to use ") +
                            settings::name(settings::Id::kArch) + ")");
  } else {
    Expected<std::string> found = backend::default_arch();
    if (!found) throw StatusError(HIPACM_ERROR_BACKEND_UNAVAILABLE, found.failure().message);
    arch = std::move(found).value();
  }
  if (nvidia_arch_judged_by_program && backend::is_nvidia_arch(arch)) return arch;
  if (const Expected<void> valid = backend::validate_arch(arch, memo); !valid)
    throw StatusError(valid.failure().status, valid.failure().message);
  return arch;
}

std::int32_t resolve_isolation(std::int32_t requested) {
  if (requested != HIPACM_ISOLATION_AUTO && requested != HIPACM_ISOLATION_IN_PROCESS &&
      requested != HIPACM_ISOLATION_PROCESS)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "isolation is " + std::to_string(requested) +
                          "; expected HIPACM_ISOLATION_AUTO (0), _IN_PROCESS (1) or _PROCESS (2)");
  if (requested != HIPACM_ISOLATION_AUTO) return requested;
  const Expected<settings::Isolation> isolation = settings::isolation();
  if (!isolation) throw StatusError(isolation.failure().status, isolation.failure().message);
  switch (isolation.value()) {
    case settings::Isolation::kInProcess:
      return HIPACM_ISOLATION_IN_PROCESS;
    case settings::Isolation::kProcess:
      return HIPACM_ISOLATION_PROCESS;
    case settings::Isolation::kAuto:
      break;
  }
  return HIPACM_ISOLATION_AUTO;
}

ModeSettings resolve_mode_settings(const ModeConfig& config) {
  ModeSettings s;
  s.max_workers = config.max_workers == 0 ? hardware_workers() : config.max_workers;
  if (s.max_workers > kMaxWorkersLimit)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "max_workers is " + std::to_string(config.max_workers) + "; the limit is " +
                          std::to_string(kMaxWorkersLimit));
  s.ignore_errors = config.ignore_errors;
  s.fail_fast = config.fail_fast;
  s.isolation = resolve_isolation(config.isolation);
  s.compile_timeout_ms = config.compile_timeout_ms;
  s.prestart_workers = resolve_prestart_workers(s.max_workers);
  if (config.cache_policy < HIPACM_CACHE_DEFAULT || config.cache_policy > HIPACM_CACHE_READWRITE)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "cache_policy is " + std::to_string(config.cache_policy) +
                          "; expected HIPACM_CACHE_DEFAULT (0), _OFF (1), _READ (2) or "
                          "_READWRITE (3)");
  s.load_device = config.load_device;
  if (s.load_device < HIPACM_LOAD_NONE)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "load_device is " + std::to_string(s.load_device) +
                          "; expected HIPACM_LOAD_NONE (-1) or a device index");
  s.cache = cache::resolve_cache_settings(config.cache_policy, config.cache_dir);
  s.cache.cache_failures = config.cache_failures;
  s.cache.compile_timeout_ms = config.compile_timeout_ms;
  // The remote tier sits below the local cache: with the cache off there is
  // nothing to read through, so it is not resolved (nor its URL checked).
  if (s.cache.policy != cache::Policy::kOff)
    s.remote_cache = cache::remote::resolve_remote_settings(config.remote_cache);
  // Which archs exist and which hipRTC is installed are facts about this
  // machine's libraries; the cache remembers them, so that entering a mode
  // whose kernels are all cached loads neither comgr nor hipRTC. Without a
  // cache the runtime directory does, so that a host whose workers compile
  // does not load the compiler only to check its arch.
  const std::shared_ptr<backend::LibraryFactMemo> memo = cache::fact_memo_for(s.cache);
  s.arch = resolve_arch(config.arch, memo.get(), config.nvidia_arch_judged_by_program);
  return s;
}

}  // namespace hipacm
