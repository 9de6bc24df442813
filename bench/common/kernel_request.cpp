// kernel_request.cpp - builds hipacm requests from KernelSources; enters modes with ABI 1.2 fields.
#include "bench/common/kernel_request.h"

#include <cstddef>
#include <vector>

namespace hipacm::bench {

hipacm::Request to_request(const KernelSource& kernel) {
  hipacm::Request request(kernel.source);
  request.name(kernel.file).options(kernel.options);
  for (const auto& [name, contents] : kernel.headers) request.header(name, contents);
  for (const auto& expression : kernel.name_expressions) request.name_expression(expression);
  return request;
}

bool served_from_cache(const hipacm_kernel& kernel) {
  return kernel.struct_size >= offsetof(hipacm_kernel, from_cache) + sizeof kernel.from_cache &&
         kernel.from_cache != 0;
}

FullConfigMode::FullConfigMode(const hipacm::Config& config, const ModeExtras& extras) {
  hipacm_mode_config cfg = config.to_c();
  cfg.cache_dir = extras.cache_dir.empty() ? nullptr : extras.cache_dir.c_str();
  cfg.cache_policy = extras.cache_policy;
  cfg.load_device = extras.load_device;
  const hipacm_status status = hipacm_mode_enter(&cfg, &mode_);
  if (status != HIPACM_SUCCESS)
    throw hipacm::Error(static_cast<hipacm::Status>(status), hipacm_last_error_message());
}

FullConfigMode::~FullConfigMode() { exit(); }

hipacm::Future FullConfigMode::submit(const KernelSource& kernel) {
  if (mode_ == nullptr) throw hipacm::Error(hipacm::Status::ModeClosed, "the mode has exited");
  std::vector<const char*> options, header_names, header_sources, expressions;
  for (const auto& option : kernel.options) options.push_back(option.c_str());
  for (const auto& [name, contents] : kernel.headers) {
    header_names.push_back(name.c_str());
    header_sources.push_back(contents.c_str());
  }
  for (const auto& expression : kernel.name_expressions) expressions.push_back(expression.c_str());
  hipacm_request request{};
  request.struct_size = sizeof request;
  request.source = kernel.source.c_str();
  request.source_name = kernel.file.c_str();
  request.options = options.data();
  request.num_options = options.size();
  request.header_names = header_names.data();
  request.header_sources = header_sources.data();
  request.num_headers = header_names.size();
  request.name_expressions = expressions.data();
  request.num_name_expressions = expressions.size();
  hipacm_future* future = nullptr;
  const hipacm_status status = hipacm_submit(mode_, &request, &future);
  if (status != HIPACM_SUCCESS || future == nullptr)
    throw hipacm::Error(static_cast<hipacm::Status>(status), hipacm_last_error_message());
  return hipacm::Future(future);
}

hipacm::Status FullConfigMode::exit(std::string* message) {
  if (mode_ == nullptr) return hipacm::Status::Success;
  hipacm_future* first_failure = nullptr;
  const hipacm_status status = hipacm_mode_exit(mode_, &first_failure);
  mode_ = nullptr;
  if (message != nullptr)
    *message = status == HIPACM_SUCCESS ? std::string() : hipacm_last_error_message();
  const hipacm::Future released(first_failure);  // the caller reads failures from its own futures
  return static_cast<hipacm::Status>(status);
}

}  // namespace hipacm::bench
