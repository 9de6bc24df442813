// SPDX-License-Identifier: MIT
// external_inputs.cpp - the include scan's steps, and the compiler's environment in the digest.
#include "plugin/cache/key/external_inputs.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "plugin/cache/key/include_directives.h"
#include "plugin/cache/key/include_scanner.h"
#include "plugin/cache/key/scanned_files.h"
#include "plugin/cache/key/search_plan.h"
#include "support/bytes/sha256.h"
#include "support/failure.h"
#include "support/pass_counts.h"

namespace hipacm::cache {

ExternalInputs scan_external_inputs(const backend::CompileRequest& request,
                                    const ExternalInputLimits& limits) noexcept {
  using input_scan::include_names;
  using input_scan::IncludeName;
  using input_scan::plan_environment;
  using input_scan::plan_search;
  using input_scan::Scanner;
  using input_scan::SearchPlan;
  backend::count_pass(backend::pass_counts().input_scans);
  ExternalInputs out;
  try {
    SearchPlan plan = plan_search(request.options);
    plan_environment(request.environment, &plan);
    if (!plan.cacheable) {
      out.cacheable = false;
      out.why_not = plan.why_not;
      return out;
    }
    // The compiler's driver loads <name>.pch or <name>.gch (a file or a directory) in place of a
    // forced include where one exists: a file the key does not see.
    for (const std::string& name : plan.forced_includes) {
      for (const char* suffix : {".pch", ".gch"}) {
        struct stat st {};
        if (::lstat((name + suffix).c_str(), &st) == 0) {
          out.cacheable = false;
          out.why_not = "a precompiled header " + name + suffix + " stands beside forced include " +
                        name + " and would be loaded in its place";
          return out;
        }
        out.absent_precompiled.push_back(name + suffix);
      }
    }
    Scanner scanner(plan, limits);
    for (const std::string& name : plan.forced_includes) scanner.resolve({name, false}, "");
    for (const IncludeName& name : include_names(request.source)) scanner.resolve(name, "");
    for (const auto& header : request.headers)
      for (const IncludeName& name : include_names(header.second)) scanner.resolve(name, "");
    scanner.run();
    if (!scanner.ok()) {
      out.cacheable = false;
      out.why_not = scanner.why_not();
      return out;
    }
    out.files_read = scanner.files();
    if (scanner.probed_anything()) {
      out.digest = scanner.digest();
      out.observed.assign(scanner.observed().begin(), scanner.observed().end());
    }
    if (!plan.environment.empty()) {
      Sha256 sha;
      sha.add_field("hipacm-compiler-environment");
      sha.add_count(plan.environment.size());
      for (const std::string& entry : plan.environment) sha.add_field(entry);
      sha.add_field(out.digest);
      out.digest = sha.hex();
    }
  } catch (...) {
    out = ExternalInputs{};
    out.cacheable = false;
    out.why_not = failure_from_current_exception("the include scan failed").message;
  }
  return out;
}

bool inputs_unchanged(const ExternalInputs& scanned) noexcept {
  try {
    for (const auto& [path, state] : scanned.observed)
      if (input_scan::path_state(path) != state) return false;
    for (const std::string& path : scanned.absent_precompiled) {
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0) return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace hipacm::cache
