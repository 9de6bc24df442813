// SPDX-License-Identifier: MIT
// stored_failure.h - one remembered compile failure of the negative cache, and its bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/cache/store/entry_labels.h"

namespace hipacm::cache {

/// The most bytes of a compile log a stored failure keeps: its head, where
/// the first errors are. Real syntax-error logs are a few KiB.
inline constexpr std::size_t kMaxFailureLogBytes = 64 * 1024;
/// The most bytes of the error message a stored failure keeps.
inline constexpr std::size_t kMaxFailureMessageBytes = 4096;
/// Stored failures a database keeps; past it the least recently used go.
/// Together with the bounds above this caps the table near 70 MB.
inline constexpr std::int64_t kMaxStoredFailures = 1024;

/// A compile that ended HIPACM_ERROR_COMPILATION, under the key a success of
/// the same request would have. `checksum` is failure_checksum() of the rest
/// (plugin/cache/integrity.h).
struct StoredFailure : EntryLabels {
  std::string error_message;
  std::string log;
  std::int64_t created_us = 0;    ///< microseconds since the Unix epoch
  std::int64_t last_used_us = 0;  ///< ditto; which failures go first past the cap
  std::string checksum;
};

}  // namespace hipacm::cache
