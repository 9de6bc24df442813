// SPDX-License-Identifier: MIT
// include_directives.h - internal: the header names a text's include directives ask for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hipacm::cache::input_scan {

struct IncludeName {
  std::string name;
  bool computed = false;  ///< `#include MACRO`: the name is unknown here
};

/// Every `#include`, `#include_next`, `#import` and `__has_include` name in `text`, in every
/// branch of every #if (no preprocessing: an over-approximation), with backslash-newline
/// continuations joined and the `%:` and `??=` spellings of `#`.
std::vector<IncludeName> include_names(std::string_view text);

}  // namespace hipacm::cache::input_scan
