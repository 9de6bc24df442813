// request_reader.h - validates a caller's hipacm_request and copies it into owned C++ form.
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

/// Largest accepted source or header: far beyond any real kernel, small
/// enough that a garbage length cannot exhaust memory.
inline constexpr std::size_t kMaxSourceBytes = 256u << 20;

/// Validates `req` (NULL, struct_size, empty source, NULL array entries,
/// oversize input, source and header names that backend::source_name_allowed
/// refuses) and copies it. `arch` is already validated. Throws
/// hipacm::StatusError with INVALID_ARGUMENT or ABI_MISMATCH and a message naming
/// the offending field.
Submission read_request(const hipacm_request* req, const std::string& arch);

}  // namespace hipacm
