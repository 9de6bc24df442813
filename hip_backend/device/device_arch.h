// SPDX-License-Identifier: MIT
// device_arch.h - finds the arch of the current GPU, and the default arch.
#pragma once

#include <string>

namespace hipacm::backend {

/// gcnArchName of the current HIP device (e.g. "gfx90a:sramecc+:xnack-"),
/// read through a dlopen'd libamdhip64 with no GPU needed to load it.
/// Returns "" with *why set when there is no runtime or no device.
std::string current_device_arch(std::string* why);

/// $HIPACM_ARCH when set and non-empty, else the current device's arch, else ""
/// with *why saying to set an arch.
std::string default_arch(std::string* why);

}  // namespace hipacm::backend
