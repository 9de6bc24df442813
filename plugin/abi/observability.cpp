// SPDX-License-Identifier: MIT
// observability.cpp - hipacm_set_log_callback and hipacm_get_stats: where log events go, and
// counts.
#include <hipacm/hipacm.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "plugin/abi/entry_guard.h"
#include "plugin/abi/struct_fields.h"
#include "plugin/abi/struct_versions.h"
#include "support/log.h"
#include "support/stats.h"

using namespace hipacm;

extern "C" HIPACM_API hipacm_status hipacm_set_log_callback(hipacm_log_fn fn, void* user_data,
                                                            int32_t max_level) {
  const char* const function = __func__;
  return guarded(function, [&] {
    if (max_level < HIPACM_LOG_OFF || max_level > HIPACM_LOG_DEBUG)
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                        "max_level " + std::to_string(max_level) +
                            " is not a HIPACM_LOG_* level (0 off ... 4 debug)");
    static_assert(std::is_same_v<hipacm_log_fn, backend::LogSink>);
    backend::set_log_sink(fn, user_data, static_cast<backend::LogLevel>(max_level));
    return HIPACM_SUCCESS;
  });
}

extern "C" HIPACM_API hipacm_status hipacm_get_stats(hipacm_stats* out) {
  const char* const function = __func__;
  return guarded(function, [&] {
    if (out == nullptr) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "out is NULL");
    require_struct_size(out, kStatsV1Size, "hipacm_stats");
    const backend::StatsCounters& counters = backend::stats();
    hipacm_stats snapshot{};
    snapshot.struct_size = sizeof(hipacm_stats);
    const auto read = [](const std::atomic<std::uint64_t>& c) {
      return c.load(std::memory_order_relaxed);
    };
#define HIPACM_STATS_COPY(name) snapshot.name = read(counters.name);
    HIPACM_STATS_COUNTERS(HIPACM_STATS_COPY)
#undef HIPACM_STATS_COPY
    // Never write past the caller's struct; its struct_size stays as it was.
    const std::size_t size = std::min(out->struct_size, sizeof(hipacm_stats));
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
                reinterpret_cast<const char*>(&snapshot) + sizeof(size_t), size - sizeof(size_t));
    return HIPACM_SUCCESS;
  });
}
