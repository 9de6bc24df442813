// SPDX-License-Identifier: MIT
// kernel_request.cpp - builds hipacm requests from KernelSources.
#include "bench/common/kernel_request.h"

namespace hipacm::bench {

hipacm::Request to_request(const KernelSource& kernel) {
  hipacm::Request request(kernel.source);
  request.name(kernel.file)
      .options(kernel.options)
      .headers(kernel.headers)
      .name_expressions(kernel.name_expressions);
  return request;
}

}  // namespace hipacm::bench
