// SPDX-License-Identifier: MIT
// inprocess_internal.h - backend-private: the in-process compile with an explicit hipRTC table.
#pragma once

#include <string>

#include "hip_backend/compiler.h"
#include "hip_backend/hiprtc/hiprtc_api.h"

namespace hipacm::backend {

/// compile_with_hiprtc against `api` instead of the process's cached hipRTC;
/// a null `api` means hipRTC could not be loaded, for the reason `load_error`.
/// Takes the same process-wide lock and never throws. Tests pass fake tables
/// to reach failure paths that a real hipRTC does not produce on demand.
CompileResult compile_with_hiprtc_api(const HiprtcApi* api, const std::string& load_error,
                                      const CompileRequest& request);

}  // namespace hipacm::backend
