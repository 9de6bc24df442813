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

backend::CompileRequest to_backend_request(const KernelSource& kernel, const std::string& arch) {
  backend::CompileRequest request;
  request.source = kernel.source;
  request.source_name = kernel.file;
  request.options = kernel.options;
  request.headers = kernel.headers;
  request.name_expressions = kernel.name_expressions;
  request.arch = arch;
  return request;
}

}  // namespace hipacm::bench
