// SPDX-License-Identifier: MIT
// entry.cpp - an entry's payload size and checksum, and the clock its times are kept in.
#include "plugin/cache/store/entry.h"

#include <chrono>

#include "plugin/cache/store/name_list.h"
#include "support/bytes/sha256.h"

namespace hipacm::cache {

std::int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t payload_size(const CacheEntry& entry) {
  return static_cast<std::int64_t>(entry.code.size() + entry.log.size() +
                                   join_names(entry.lowered_names).size());
}

std::string entry_checksum(const CacheEntry& entry) {
  Sha256 sha;
  sha.add_field("hipacm-cache-entry-v1");
  sha.add_field(entry.info.key);
  sha.add_field(entry.info.arch);
  sha.add_count(entry.lowered_names.size());
  for (const auto& name : entry.lowered_names) sha.add_field(name);
  sha.add_count(entry.expected_kernels.size());
  for (const auto& name : entry.expected_kernels) sha.add_field(name);
  sha.add_field(entry.log);
  sha.add_count(entry.code.size());
  sha.add_bytes(entry.code.data(), entry.code.size());
  return sha.hex();
}

}  // namespace hipacm::cache
