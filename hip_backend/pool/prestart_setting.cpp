// SPDX-License-Identifier: MIT
// prestart_setting.cpp - $HIPACM_PRESTART_WORKERS: how many workers a mode starts at its enter.
#include "hip_backend/pool/prestart_setting.h"

#include <algorithm>
#include <charconv>

#include "support/environment.h"

namespace hipacm::backend {

std::optional<unsigned> prestart_workers_from_environment(unsigned max_workers,
                                                          std::string* error) {
  const auto value = environment_value("HIPACM_PRESTART_WORKERS");
  if (!value || *value == "off") return 0u;
  if (*value == "on") return max_workers;
  unsigned count = 0;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, count);
  if (value->empty() || ec != std::errc() || ptr != end) {
    *error = "HIPACM_PRESTART_WORKERS is '" + *value + "'; expected off, on or a number of workers";
    return std::nullopt;
  }
  return std::min(count, max_workers);
}

}  // namespace hipacm::backend
