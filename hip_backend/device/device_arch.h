// SPDX-License-Identifier: MIT
// device_arch.h - finds the arch of the current GPU, and the default arch.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// gcnArchName of the current HIP device (e.g. "gfx90a:sramecc+:xnack-"),
/// read through a dlopen'd libamdhip64 with no GPU needed to load it.
/// A failure (BACKEND_UNAVAILABLE) saying why when there is no runtime or no device.
Expected<std::string> current_device_arch();

/// $HIPACM_ARCH when set and non-empty, else the current device's arch, else a
/// failure (BACKEND_UNAVAILABLE) saying to set an arch.
Expected<std::string> default_arch();

}  // namespace hipacm::backend
