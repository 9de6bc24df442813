// SPDX-License-Identifier: MIT
// prestart_setting.cpp - $HIPACM_PRESTART_WORKERS: how many workers a mode starts at its enter.
#include "hip_backend/pool/prestart_setting.h"

#include "support/settings.h"

namespace hipacm::backend {

std::optional<unsigned> prestart_workers_from_environment(unsigned max_workers,
                                                          std::string* error) {
  Expected<unsigned> count = settings::prestart_workers(max_workers);
  if (count) return count.value();
  *error = count.failure().message;
  return std::nullopt;
}

}  // namespace hipacm::backend
