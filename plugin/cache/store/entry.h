// SPDX-License-Identifier: MIT
// entry.h - one cached compile: the code object, what the compile reported, and bookkeeping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/cache/store/entry_labels.h"

namespace hipacm::cache {

/// The bookkeeping of an entry, without its payload (for listings): its labels, then these.
struct EntryInfo : EntryLabels {
  std::int64_t size = 0;          ///< payload bytes (code object + log + lowered names), measured
  std::int64_t created_us = 0;    ///< microseconds since the Unix epoch
  std::int64_t last_used_us = 0;  ///< ditto; LRU eviction order
  std::int64_t hits = 0;
};

/// A whole entry. `checksum` is entry_checksum() of the rest (plugin/cache/integrity.h).
struct CacheEntry {
  EntryInfo info;
  std::vector<std::string> lowered_names;  ///< the request's name-expression order
  /// Written empty and never used: what an entry must contain is derived
  /// from the request. Kept because older entries' checksums cover it.
  std::vector<std::string> expected_kernels;
  std::string log;
  std::vector<std::uint8_t> code;
  std::string checksum;
};

/// Payload bytes counted against the size bound.
std::int64_t payload_size(const CacheEntry& entry);

/// SHA-256 over everything an entry serves (key, arch, lowered names, the legacy expected-kernel
/// list, log, code object), length-prefixed. The payload size is derived from these bytes, so the
/// checksum covers it too. Here, beside the entry, so that the remote tier can check it without
/// depending on the cache above it.
std::string entry_checksum(const CacheEntry& entry);

/// Microseconds since the Unix epoch.
std::int64_t now_us();

}  // namespace hipacm::cache
