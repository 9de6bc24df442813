// SPDX-License-Identifier: MIT
// search_plan_environment.cpp - the compiler variables (CPATH, ...) in the search plan.
#include <string_view>

#include "hip_backend/compiler_environment.h"
#include "plugin/cache/key/search_plan.h"

namespace hipacm::cache::input_scan {

// The compiler variables of the request (compiler_environment.h): include lists are searched as
// include directories, every value that is set is keyed, and one through which the compiler
// reads what no key sees makes the request uncacheable.
void plan_environment(const std::vector<std::string>& environment, SearchPlan* plan) {
  for (const std::string& entry : environment) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;  // not set
    const std::string name = entry.substr(0, eq);
    const std::string_view value = std::string_view(entry).substr(eq + 1);
    const backend::CompilerVariable* variable = backend::find_compiler_variable(name);
    if (variable == nullptr) continue;
    switch (variable->use) {
      case backend::CompilerVariableUse::kOpaque:
        if (!value.empty())
          not_cacheable(plan, "the environment variable " + name +
                                  " makes the compiler read input hipacm cannot account for");
        continue;
      case backend::CompilerVariableUse::kIncludePath:
        for (std::size_t at = 0; at <= value.size();) {
          std::size_t colon = value.find(':', at);
          if (colon == std::string_view::npos) colon = value.size();
          const std::string_view dir = value.substr(at, colon - at);
          // An empty entry means the working directory to the driver, as does a relative one.
          if (!value.empty() && (dir.empty() || dir.front() != '/'))
            not_cacheable(plan, "the environment variable " + name +
                                    " names a directory relative to the working directory");
          else if (!dir.empty())
            plan->dirs.emplace_back(dir);
          at = colon + 1;
        }
        break;
      case backend::CompilerVariableUse::kKeyed:
        break;
    }
    plan->environment.push_back(entry);
  }
}

}  // namespace hipacm::cache::input_scan
