// SPDX-License-Identifier: MIT
// entry.cpp - an entry's payload size and the clock its times are kept in.
#include "plugin/cache/store/entry.h"

#include <chrono>

#include "plugin/cache/store/name_list.h"

namespace hipacm::cache {

std::int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t payload_size(const CacheEntry& entry) {
  return static_cast<std::int64_t>(entry.code.size() + entry.log.size() +
                                   join_names(entry.lowered_names).size());
}

}  // namespace hipacm::cache
