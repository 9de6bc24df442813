// SPDX-License-Identifier: MIT
// working_directory_inputs.h - the files hipRTC's compiler driver reads from the working directory
// of its own accord, and the check that keeps an in-process compile that may have read one out of
// the cache.
#pragma once

#include <sys/types.h>

#include <string>

namespace hipacm::backend {

/// What hipRTC's compiler driver looks at in the working directory in every compile, found by
/// tracing ROCm 5.2.3's hipRTC in an empty directory: the runtime header it includes
/// (`hiprtc_runtime.h`) and the precompiled forms clang's driver loads in its place
/// (`hiprtc_runtime.h.pch`, `hiprtc_runtime.h.gch`, a file or a directory), the resource and
/// device-library directories relative to a driver whose own path is empty (`lib/clang`,
/// `lib/bitcode`, `amdgcn/bitcode`, `../lib/amdgcn-amd-amdhsa`, `../lib/x86_64-unknown-linux-gnu`)
/// and the linkers it searches for (`ld.lld`, `amdgcn-amd-amdhsa-ld.lld`).
inline constexpr const char* kDriverWorkingDirectoryNames[] = {
    "hiprtc_runtime.h.pch",
    "hiprtc_runtime.h.gch",
    "hiprtc_runtime.h",
    "lib/clang",
    "lib/bitcode",
    "amdgcn/bitcode",
    "../lib/amdgcn-amd-amdhsa",
    "../lib/x86_64-unknown-linux-gnu",
    "ld.lld",
    "amdgcn-amd-amdhsa-ld.lld",
};

/// Looks at this process's working directory before an in-process compile and again after it.
/// A worker compiles in an empty directory of its own; a host cannot change its working directory
/// (other threads use it), so what the driver may have read there is found instead, and a result
/// it may have shaped is not cached. Nothing is opened (a FIFO there cannot block), and links are
/// not followed.
class WorkingDirectoryWatch {
 public:
  /// The first look, before the compile.
  WorkingDirectoryWatch();
  /// The second look, after the compile: empty when the working directory was the same directory
  /// both times and held none of kDriverWorkingDirectoryNames either time, else one line saying
  /// why the result must not be cached.
  std::string verdict() const;

 private:
  std::string found_;   ///< what the first look found, if anything
  bool known_ = false;  ///< whether the directory itself could be identified
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

/// The first of kDriverWorkingDirectoryNames that exists in the working directory, as
/// "<name>", or empty when none does.
std::string driver_input_in_working_directory();

}  // namespace hipacm::backend
