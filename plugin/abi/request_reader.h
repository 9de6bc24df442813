// SPDX-License-Identifier: MIT
// request_reader.h - validates a caller's hipacm_request and copies it into owned C++ form.
#pragma once

#include <hipacm/hipacm.h>

#include <cstddef>
#include <string>

#include "plugin/mode/submission.h"

namespace hipacm {

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
