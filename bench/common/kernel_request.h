// SPDX-License-Identifier: MIT
// kernel_request.h - a KernelSource as the hipacm::Request that submits it, or as the request the
// in-process compilers take.
#pragma once

#include <hipacm/hipacm.hpp>

#include <string>

#include "bench/common/example_kernels.h"
#include "hip_backend/compiler.h"

namespace hipacm::bench {

/// Source, source name, options, headers and name expressions; no key (the content digest).
hipacm::Request to_request(const KernelSource& kernel);

/// The same kernel for `arch` as hipacm's compilers get it: for the serial in-process baselines.
backend::CompileRequest to_backend_request(const KernelSource& kernel, const std::string& arch);

}  // namespace hipacm::bench
