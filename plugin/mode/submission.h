// SPDX-License-Identifier: MIT
// submission.h - one compile as the mode receives it: owned request, dedup key and host callbacks.
#pragma once

#include <hipacm/hipacm.h>

#include <string>

#include "hip_backend/compiler.h"

namespace hipacm {

/// The host's callbacks for one future; user_data stays owned by the host.
struct Callbacks {
  hipacm_finalize_fn finalize = nullptr;
  hipacm_cleanup_fn cleanup = nullptr;
  void* user_data = nullptr;
};

/// A request ready to schedule: owned copies, the dedup key, the callbacks.
struct Submission {
  backend::CompileRequest request;
  std::string key;
  Callbacks callbacks;
};

}  // namespace hipacm
