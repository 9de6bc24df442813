// kernel_request.h - a KernelSource submitted to hipacm: as a hipacm::Request, or to a mode that
// needs the ABI 1.2 fields hipacm::Config has no setter for.
#pragma once

#include <hipacm/hipacm.hpp>

#include <cstdint>
#include <string>

#include "bench/common/example_kernels.h"

namespace hipacm::bench {

/// Source, source name, options, headers and name expressions; no key (the content digest).
hipacm::Request to_request(const KernelSource& kernel);

/// True when the kernel says it came from the persistent cache (a field of ABI 1.2).
bool served_from_cache(const hipacm_kernel& kernel);

/// The mode fields of ABI 1.2 that hipacm::Config cannot set: the cache and the load device.
struct ModeExtras {
  std::string cache_dir;  ///< "" = the plugin's default resolution
  std::int32_t cache_policy = HIPACM_CACHE_DEFAULT;
  std::int32_t load_device = HIPACM_LOAD_NONE;
};

/// A mode entered with a hipacm::Config and ModeExtras. hipacm::Mode takes only a Config, so
/// this one enters, submits and exits through the C ABI; its futures are hipacm::Futures. Like
/// hipacm::Mode, it leaves the mode when destroyed.
class FullConfigMode {
 public:
  /// Throws hipacm::Error when the mode cannot be entered.
  FullConfigMode(const hipacm::Config& config, const ModeExtras& extras);
  ~FullConfigMode();
  FullConfigMode(const FullConfigMode&) = delete;
  FullConfigMode& operator=(const FullConfigMode&) = delete;

  /// Throws hipacm::Error when the plugin refuses the request.
  hipacm::Future submit(const KernelSource& kernel);

  /// Leaves the mode, collecting every compile: the status of hipacm_mode_exit, and its message
  /// ("" on success). Later calls return Success and do nothing.
  hipacm::Status exit(std::string* message = nullptr);

 private:
  hipacm_mode* mode_ = nullptr;
};

}  // namespace hipacm::bench
