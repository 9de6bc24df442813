// SPDX-License-Identifier: MIT
// doctor_checks.h - the facts `hipacm doctor` reports, each with a verdict and a hint.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hipacm::cli {

enum class CheckLevel { kOk, kInfo, kWarning, kError };

struct Check {
  std::string name;  ///< "plugin", "hiprtc", "comgr", "worker", "cache", "arch", "devices"
  CheckLevel level = CheckLevel::kOk;
  std::string summary;  ///< one line: what was found
  std::string hint;     ///< what to do about it; empty when nothing
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
};

/// Every check, in a fixed order. Errors make hipacm unusable (no compiler);
/// warnings make it slower or forgetful (no worker, no writable cache, no
/// default arch); info is neither (no GPU: compiling needs none).
std::vector<Check> run_doctor_checks();

/// True when no check is an error.
bool usable(const std::vector<Check>& checks);

const char* level_name(CheckLevel level);

}  // namespace hipacm::cli
