// SPDX-License-Identifier: MIT
// service_choice.h - where a bench's workers come from: HIPACM_ISOLATION's service= part, set
// without losing the isolation word the caller chose.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

namespace hipacm::bench {

/// $HIPACM_ISOLATION with its service= part replaced by `service` ("service=off"), keeping the
/// isolation word it held, so a bench run under HIPACM_ISOLATION=process stays in processes.
inline std::string isolation_with(const std::string& service) {
  std::string word;
  if (const char* value = std::getenv("HIPACM_ISOLATION")) {
    std::istringstream items(value);
    for (std::string item; std::getline(items, item, ',');)
      if (!item.empty() && item.rfind("service=", 0) != 0) word = item;
  }
  return word.empty() ? service : word + "," + service;
}

/// Pools spawn their own workers, as in the recorded figures, unless the caller chose where they
/// come from (HIPACM_ISOLATION=service=auto measures the default, workers from the compile
/// service; the deprecated HIPACM_COMPILE_SERVICE, where set, still decides).
inline void default_to_own_workers() {
  const char* isolation = std::getenv("HIPACM_ISOLATION");
  if (std::getenv("HIPACM_COMPILE_SERVICE") != nullptr ||
      (isolation != nullptr && std::string(isolation).find("service=") != std::string::npos))
    return;
  ::setenv("HIPACM_ISOLATION", isolation_with("service=off").c_str(), 1);
}

}  // namespace hipacm::bench
