// SPDX-License-Identifier: MIT
// service_warmup.cpp - the compile service's one warm-up compile per compiler family.
#include "worker/service/service_warmup.h"

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/process/warmup_kernel.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend::service_internal {

std::string compiler_family(const std::string& arch) {
  return is_nvidia_arch(arch) ? "nvrtc" : "hiprtc";
}

void WarmCompilers::warm(const std::string& arch) {
  const std::string family = compiler_family(arch);
  if (arch.empty() || warm_.count(family) != 0) return;
  warm_.insert(family);  // once, whatever the outcome: a compiler that fails to warm fails later
  try {
    (void)compile_for_target(warmup_request(arch));
  } catch (...) {
  }
  remove_directory_contents(temp_dir_);
}

}  // namespace hipacm::backend::service_internal
