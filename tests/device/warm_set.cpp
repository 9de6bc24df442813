// SPDX-License-Identifier: MIT
// warm_set.cpp - submits every example kernel to one hipacm mode and collects the outcomes.
#include "warm_set.h"

#include <chrono>
#include <optional>

#include "bench/common/kernel_request.h"

namespace hipacm::device {

WarmReport warm_examples(const std::vector<ExampleSource>& set, const std::string& arch,
                         std::int32_t load_device, hipacm::Isolation isolation) {
  WarmReport report;
  const auto start = std::chrono::steady_clock::now();

  // ignore_errors: every outcome is reported per example below.
  const auto config = hipacm::Config()
                          .arch(arch)
                          .isolation(isolation)
                          .ignore_errors()
                          .cache_policy(hipacm::CachePolicy::Off)
                          .load_device(load_device);
  std::optional<hipacm::Mode> mode;
  try {
    mode.emplace(config);
  } catch (const hipacm::Error& e) {
    report.enter_status = e.status();
    report.enter_message = e.message();
    return report;
  }

  for (const auto& k : set) {
    WarmedExample& w = report.by_file[k.file];
    try {
      w.future = mode->submit(bench::to_request(k));
    } catch (const hipacm::Error& e) {
      w.status = e.status();
      w.message = "submit: " + e.message();
    }
  }
  try {
    mode->exit();  // collects every future; with ignore_errors only a failing exit call throws
  } catch (const hipacm::Error& e) {
    report.exit_status = e.status();
    report.exit_message = e.message();
  }

  for (auto& [file, w] : report.by_file) {
    if (!w.future) continue;
    try {
      w.kernel = &w.future.result();
      w.status = hipacm::Status::Success;
    } catch (const hipacm::Error& e) {
      w.status = e.status();
      w.message = e.message();
      if (!e.log().empty()) w.message += "\n    log: " + e.log();
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace hipacm::device
