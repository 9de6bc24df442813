// SPDX-License-Identifier: MIT
// kernel_request.h - a KernelSource as the hipacm::Request that submits it.
#pragma once

#include <hipacm/hipacm.hpp>

#include "bench/common/example_kernels.h"

namespace hipacm::bench {

/// Source, source name, options, headers and name expressions; no key (the content digest).
hipacm::Request to_request(const KernelSource& kernel);

}  // namespace hipacm::bench
