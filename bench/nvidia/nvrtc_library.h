// nvrtc_library.h - plain NVRTC, loaded with dlopen: the serial baseline every variant is
// compared against.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernel_set_dir.h"

namespace hipacm::bench::nvidia {

class NvrtcLibrary {
 public:
  /// Loads $HIPACM_NVRTC_LIBRARY, else libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.
  /// Throws std::runtime_error naming every path tried when none loads.
  NvrtcLibrary();
  ~NvrtcLibrary();
  NvrtcLibrary(const NvrtcLibrary&) = delete;
  NvrtcLibrary& operator=(const NvrtcLibrary&) = delete;

  const std::string& path() const { return path_; }
  std::string version() const;

  /// Compiles one kernel to a CUBIN for `arch` (e.g. "sm_90") and returns its size. Throws
  /// std::runtime_error with NVRTC's status and log on failure.
  std::size_t compile_to_cubin(const SetKernel& kernel, const std::string& arch) const;

 private:
  struct Api;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string path_;
};

}  // namespace hipacm::bench::nvidia
