// SPDX-License-Identifier: MIT
// device_arch_internal.h - backend-private: the HIP runtime query behind current_device_arch.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// Asks the dlopen'd HIP runtime for the current device's gcnArchName, without
/// the /dev/kfd pre-check that current_device_arch does first. Silent and
/// crash-free on a machine without a GPU (measured with ROCm 5.2.3:
/// hipGetDeviceCount returns hipErrorNoDevice at once and prints nothing).
/// A failure (BACKEND_UNAVAILABLE) saying why on any failure; never an empty arch.
Expected<std::string> query_hip_runtime_arch();

}  // namespace hipacm::backend
