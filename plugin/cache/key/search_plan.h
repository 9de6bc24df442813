// SPDX-License-Identifier: MIT
// search_plan.h - internal: where a request's compiler looks for files, and if it can be keyed.
#pragma once

#include <string>
#include <utility>
#include <vector>

// The parts of scan_external_inputs() live in a namespace of their own: they are not the
// folder's interface, and their short names must not meet others in hipacm::cache.
namespace hipacm::cache::input_scan {

struct SearchPlan {
  std::vector<std::string> dirs;             ///< every include directory, in order
  std::vector<std::string> forced_includes;  ///< -include / -imacros names
  std::vector<std::string> environment;      ///< "NAME=VALUE" of each compiler variable set
  bool cacheable = true;
  std::string why_not;
};

/// Marks `plan` uncacheable; the first reason given is the one kept.
inline void not_cacheable(SearchPlan* plan, std::string why) {
  if (plan->cacheable) plan->why_not = std::move(why);
  plan->cacheable = false;
}

/// The include directories (absolute against the working directory) and forced includes that
/// `options` name; an option through which the compiler reads what no key sees, or an unknown
/// one whose value names a path on disk, makes the plan uncacheable.
SearchPlan plan_search(const std::vector<std::string>& options);

/// Adds the request's compiler variables ("NAME=VALUE", or "NAME" when unset) to `plan`.
void plan_environment(const std::vector<std::string>& environment, SearchPlan* plan);

}  // namespace hipacm::cache::input_scan
