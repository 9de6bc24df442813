// SPDX-License-Identifier: MIT
// json_output.cpp - writes a JSON document to a file or stdout.
#include "tools/common/json_output.h"

#include <iostream>

#include "tools/common/output_files.h"

namespace hipacm::cli {

void write_json(const nlohmann::ordered_json& document, const std::string& target) {
  // Names from files and caches may be invalid UTF-8; replacing those bytes with U+FFFD keeps the
  // document valid JSON where the default handler would throw mid-report.
  const std::string text =
      document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (target == "-") {
    std::cout << text << std::flush;
    return;
  }
  write_output_file(target, text);
}

}  // namespace hipacm::cli
