// SPDX-License-Identifier: MIT
// bounded_json.cpp - the depth-bounded JSON parse behind manifests, record files and --costs.
#include "tools/input/bounded_json.h"

#include <fmt/core.h>

#include "tools/common/exit_codes.h"

namespace hipacm::cli {

nlohmann::json parse_bounded_json(std::string_view text, const std::string& label,
                                  const char* not_what) {
  using Json = nlohmann::json;
  const Json::parser_callback_t limit_depth = [&label](int depth, Json::parse_event_t event,
                                                       Json&) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxManifestDepth)
      throw InputError(fmt::format("{}: nested deeper than {} levels", label, kMaxManifestDepth));
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), limit_depth);
  } catch (const Json::exception& e) {
    throw InputError(fmt::format("{}: {}: {}", label, not_what, e.what()));
  }
}

}  // namespace hipacm::cli
