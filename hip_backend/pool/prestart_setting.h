// SPDX-License-Identifier: MIT
// prestart_setting.h - $HIPACM_PRESTART_WORKERS: how many workers a mode starts at its enter.
#pragma once

#include <optional>
#include <string>

namespace hipacm::backend {

/// $HIPACM_PRESTART_WORKERS for a mode of `max_workers`: unset, "off" or "0" is 0, "on" is
/// max_workers, a number N is min(N, max_workers). nullopt, with *error naming the value, for
/// anything else.
std::optional<unsigned> prestart_workers_from_environment(unsigned max_workers, std::string* error);

}  // namespace hipacm::backend
