// SPDX-License-Identifier: MIT
// definite_kernels.h - extern "C" kernels every compile of a request must produce.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// The `extern "C" __global__` kernels the request's source defines outside
/// every #if/#ifdef/#ifndef block, under names that no #define in the source
/// or the request's headers and no -D option can replace. A lexical scan
/// that errs only one way: it may leave kernels out (so less is required),
/// but a valid compile of the request holds every name it returns, unless a
/// header read from disk defines a macro of that name. So it is never a
/// reason to reject what a compiler produced; it tells a cache whether a
/// stored object can answer a request, for requests that read no header
/// from disk. Linear in the source size on any input.
std::vector<std::string> definite_extern_c_kernels(const CompileRequest& request);

}  // namespace hipacm::backend
