// SPDX-License-Identifier: MIT
// mode_config_reader.cpp - reads a caller's hipacm_mode_config into the mode's plain ModeConfig.
#include "plugin/abi/mode_config_reader.h"

#include <cstdint>

#include "plugin/abi/struct_fields.h"
#include "plugin/abi/struct_versions.h"

namespace hipacm {

ModeConfig read_mode_config(const hipacm_mode_config* cfg) {
  ModeConfig config;
  if (cfg == nullptr) return config;
  require_struct_size(cfg, kModeConfigV1Size, "hipacm_mode_config");
  config.max_workers = cfg->max_workers;
  config.ignore_errors = cfg->ignore_errors != 0;
  config.fail_fast = cfg->fail_fast != 0;
  if (cfg->arch != nullptr) config.arch = cfg->arch;
  config.isolation =
      field_or(cfg, &hipacm_mode_config::isolation, std::int32_t{HIPACM_ISOLATION_AUTO});
  config.compile_timeout_ms =
      field_or(cfg, &hipacm_mode_config::compile_timeout_ms, std::uint32_t{0});
  if (const char* dir =
          field_or(cfg, &hipacm_mode_config::cache_dir, static_cast<const char*>(nullptr)))
    config.cache_dir = dir;
  config.cache_policy =
      field_or(cfg, &hipacm_mode_config::cache_policy, std::int32_t{HIPACM_CACHE_DEFAULT});
  config.load_device =
      field_or(cfg, &hipacm_mode_config::load_device, std::int32_t{HIPACM_LOAD_NONE});
  config.cache_failures = field_or(cfg, &hipacm_mode_config::cache_failures, std::int32_t{0}) != 0;
  if (const char* url =
          field_or(cfg, &hipacm_mode_config::remote_cache, static_cast<const char*>(nullptr)))
    config.remote_cache = url;
  return config;
}

ModeConfig compile_config(const char* arch) {
  ModeConfig config;
  if (arch != nullptr) config.arch = arch;
  return config;
}

}  // namespace hipacm
