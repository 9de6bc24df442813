// warm_set.cpp - submits every example kernel to one hipacm mode and collects the outcomes.
#include "warm_set.h"

#include <chrono>

namespace hipacm::device {
namespace {

std::vector<const char*> c_strings(const std::vector<std::string>& values) {
  std::vector<const char*> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(v.c_str());
  return out;
}

}  // namespace

WarmReport warm_examples(const std::vector<ExampleSource>& set, const std::string& arch,
                         int32_t load_device, int32_t isolation) {
  WarmReport report;
  const auto start = std::chrono::steady_clock::now();

  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = arch.c_str();
  cfg.load_device = load_device;
  cfg.isolation = isolation;
  cfg.ignore_errors = 1;  // every outcome is reported per example below
  cfg.cache_policy = HIPACM_CACHE_OFF;
  hipacm_mode* mode = nullptr;
  report.enter_status = hipacm_mode_enter(&cfg, &mode);
  if (report.enter_status != HIPACM_SUCCESS) {
    report.enter_message = hipacm_last_error_message();
    return report;
  }

  std::vector<std::pair<std::string, std::unique_ptr<FutureRef>>> submitted;
  for (const auto& k : set) {
    const auto options = c_strings(k.options);
    std::vector<const char*> header_names, header_sources;
    for (const auto& [name, text] : k.headers) {
      header_names.push_back(name.c_str());
      header_sources.push_back(text.c_str());
    }
    const auto exprs = c_strings(k.name_expressions);
    hipacm_request req{};
    req.struct_size = sizeof req;
    req.source = k.source.c_str();
    req.source_name = k.file.c_str();
    req.options = options.data();
    req.num_options = options.size();
    req.header_sources = header_sources.data();
    req.header_names = header_names.data();
    req.num_headers = header_names.size();
    req.name_expressions = exprs.data();
    req.num_name_expressions = exprs.size();
    hipacm_future* f = nullptr;
    const hipacm_status s = hipacm_submit(mode, &req, &f);
    WarmedExample& w = report.by_file[k.file];
    if (s != HIPACM_SUCCESS) {
      w.status = s;
      w.message = std::string("submit: ") + hipacm_last_error_message();
      continue;
    }
    submitted.emplace_back(k.file, std::make_unique<FutureRef>(f));
  }

  hipacm_future* first_failure = nullptr;
  report.exit_status = hipacm_mode_exit(mode, &first_failure);
  if (report.exit_status != HIPACM_SUCCESS) report.exit_message = hipacm_last_error_message();
  if (first_failure != nullptr) hipacm_future_release(first_failure);

  for (auto& [file, ref] : submitted) {
    WarmedExample& w = report.by_file[file];
    const hipacm_kernel* kernel = nullptr;
    w.status = hipacm_future_result(ref->handle, &kernel);
    if (w.status == HIPACM_SUCCESS) {
      w.kernel = kernel;
    } else {
      w.message = hipacm_future_error_message(ref->handle);
      const std::string log = hipacm_future_log(ref->handle);
      if (!log.empty()) w.message += "\n    log: " + log;
    }
    w.future = std::move(ref);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace hipacm::device
