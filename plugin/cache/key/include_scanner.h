// SPDX-License-Identifier: MIT
// include_scanner.h - internal: the walk over every file the includes could open, digested.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>

#include "plugin/cache/key/external_inputs.h"
#include "plugin/cache/key/include_directives.h"
#include "plugin/cache/key/scanned_files.h"
#include "plugin/cache/key/search_plan.h"

namespace hipacm::cache::input_scan {

/// Probes every candidate path of each include name (the includer's directory and every include
/// directory of `plan`), reads each file found and follows its own includes, within `limits`.
/// The first reason to stop (a computed include, a bound passed) is kept; once stopped, nothing
/// more is probed.
class Scanner {
 public:
  Scanner(const SearchPlan& plan, const ExternalInputLimits& limits)
      : plan_(plan), limits_(limits) {}

  /// Resolves `name` as included from `includer_dir` ("" for in-memory text).
  void resolve(const IncludeName& name, const std::string& includer_dir);
  /// Follows the includes of every file found, breadth first, until none is left.
  void run();

  bool ok() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }
  std::size_t files() const { return found_.size(); }
  bool probed_anything() const { return !probes_.empty(); }

  /// Hex SHA-256 over every probed path and what was there, in path order.
  std::string digest() const;
  /// Every probed path with stat's answer there (stat_state), for inputs_unchanged.
  const std::map<std::string, std::string>& observed() const { return observed_; }

 private:
  void stop(std::string why);
  void probe(const std::string& path);

  const SearchPlan& plan_;
  const ExternalInputLimits& limits_;
  std::map<std::string, std::string> probes_;    // path -> state; sorted for the digest
  std::map<std::string, std::string> observed_;  // path -> stat_state when probed
  std::map<std::string, ScannedFile> found_;
  std::deque<std::string> queue_;
  std::size_t total_bytes_ = 0;
  std::string why_not_;
};

}  // namespace hipacm::cache::input_scan
