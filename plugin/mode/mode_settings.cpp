// mode_settings.cpp - a mode's resolved configuration, read from hipacm_mode_config and the
// environment.
#include "plugin/mode/mode_settings.h"

#include <boost/thread/thread.hpp>

#include <cstdlib>
#include <optional>

#include "hip_backend/device/device_arch.h"
#include "support/environment.h"
#include "hip_backend/target_arch.h"
#include "plugin/cache/caching_compiler.h"
#include "plugin/cache/store/library_fact_memo.h"
#include "support/status_error.h"
#include "plugin/abi/struct_fields.h"
#include "plugin/abi/struct_versions.h"

namespace hipacm {
namespace {

constexpr unsigned kMaxWorkersLimit = 1024;

unsigned hardware_workers() {
  const unsigned n = boost::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

std::string resolve_arch(const char* requested, backend::LibraryFactMemo* memo) {
  std::string arch;
  if (requested != nullptr) {
    arch = requested;
    if (arch.empty())
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "arch is empty (pass NULL to use HIPACM_ARCH)");
  } else {
    std::string why;
    arch = backend::default_arch(&why);
    if (arch.empty()) throw StatusError(HIPACM_ERROR_BACKEND_UNAVAILABLE, why);
  }
  std::string error;
  const hipacm_status status = backend::validate_arch(arch, &error, memo);
  if (status != HIPACM_SUCCESS) throw StatusError(status, error);
  return arch;
}

std::int32_t resolve_isolation(std::int32_t requested) {
  if (requested != HIPACM_ISOLATION_AUTO && requested != HIPACM_ISOLATION_IN_PROCESS &&
      requested != HIPACM_ISOLATION_PROCESS)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                "isolation is " + std::to_string(requested) +
                    "; expected HIPACM_ISOLATION_AUTO (0), _IN_PROCESS (1) or _PROCESS (2)");
  if (requested != HIPACM_ISOLATION_AUTO) return requested;
  const auto env = backend::environment_value("HIPACM_ISOLATION");
  if (!env) return HIPACM_ISOLATION_AUTO;
  const std::string& value = *env;
  if (value == "auto") return HIPACM_ISOLATION_AUTO;
  if (value == "in-process") return HIPACM_ISOLATION_IN_PROCESS;
  if (value == "process") return HIPACM_ISOLATION_PROCESS;
  throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
              "HIPACM_ISOLATION is '" + value + "'; expected auto, in-process or process");
}

namespace {

ModeSettings resolve_settings(const hipacm_mode_config* cfg,
                              std::optional<const char*> arch_override) {
  hipacm_mode_config defaults;
  hipacm_mode_config_init_sized(&defaults, sizeof defaults);
  if (cfg == nullptr) cfg = &defaults;
  require_struct_size(cfg, kModeConfigV1Size, "hipacm_mode_config");

  ModeSettings s;
  s.max_workers = cfg->max_workers == 0 ? hardware_workers() : cfg->max_workers;
  if (s.max_workers > kMaxWorkersLimit)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                "max_workers is " + std::to_string(cfg->max_workers) + "; the limit is " +
                    std::to_string(kMaxWorkersLimit));
  s.ignore_errors = cfg->ignore_errors != 0;
  s.fail_fast = cfg->fail_fast != 0;
  s.isolation = resolve_isolation(
      field_or(cfg, &hipacm_mode_config::isolation, std::int32_t{HIPACM_ISOLATION_AUTO}));
  s.compile_timeout_ms = field_or(cfg, &hipacm_mode_config::compile_timeout_ms, std::uint32_t{0});
  const char* cache_dir =
      field_or(cfg, &hipacm_mode_config::cache_dir, static_cast<const char*>(nullptr));
  if (cache_dir != nullptr) s.cache_dir = cache_dir;
  s.cache_policy =
      field_or(cfg, &hipacm_mode_config::cache_policy, std::int32_t{HIPACM_CACHE_DEFAULT});
  if (s.cache_policy < HIPACM_CACHE_DEFAULT || s.cache_policy > HIPACM_CACHE_READWRITE)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                "cache_policy is " + std::to_string(s.cache_policy) +
                    "; expected HIPACM_CACHE_DEFAULT (0), _OFF (1), _READ (2) or _READWRITE (3)");
  s.load_device = field_or(cfg, &hipacm_mode_config::load_device, std::int32_t{HIPACM_LOAD_NONE});
  if (s.load_device < HIPACM_LOAD_NONE)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                "load_device is " + std::to_string(s.load_device) +
                    "; expected HIPACM_LOAD_NONE (-1) or a device index");
  // Which archs exist and which hipRTC is installed are facts about this
  // machine's libraries; the cache remembers them, so that entering a mode
  // whose kernels are all cached loads neither comgr nor hipRTC.
  const auto memo = cache::library_fact_memo(cache::resolve_cache_settings(s));
  s.arch = resolve_arch(arch_override.value_or(cfg->arch), memo.get());
  return s;
}

}  // namespace

ModeSettings resolve_mode_settings(const hipacm_mode_config* cfg) {
  return resolve_settings(cfg, std::nullopt);
}

ModeSettings resolve_compile_settings(const char* arch) { return resolve_settings(nullptr, arch); }

}  // namespace hipacm
