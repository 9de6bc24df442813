// SPDX-License-Identifier: MIT
// nvrtc_facts.h - NVRTC's version and arch list, remembered across processes so that a warm-up
// whose kernels are all cached never loads NVRTC.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hip_backend/library_facts.h"
#include "support/failure.h"

namespace hipacm::backend {

/// What the host needs of NVRTC without compiling: its identity for cache keys and the archs it
/// supports.
struct NvrtcFacts {
  std::string identity;    ///< "nvrtc 13.0 (/path/libnvrtc.so.13)", as nvrtc_version_string()
  std::vector<int> archs;  ///< nvrtcGetSupportedArchs
  bool from_memo = false;  ///< recalled, not read from a loaded NVRTC
};

/// The facts from `memo` when it provably describes the NVRTC that dlopen would load
/// (recall_library_fact), else from NVRTC itself (loading it), then remembered. A failure
/// (BACKEND_UNAVAILABLE) when NVRTC cannot be loaded.
Expected<NvrtcFacts> nvrtc_facts(LibraryFactMemo* memo);

/// The payload a memo keeps, and its parser (nullopt for anything malformed: it is read from a
/// file, so it is never trusted).
std::string encode_nvrtc_facts(const NvrtcFacts& facts);
std::optional<NvrtcFacts> decode_nvrtc_facts(const std::string& payload);

}  // namespace hipacm::backend
