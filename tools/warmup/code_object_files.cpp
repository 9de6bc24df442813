// SPDX-License-Identifier: MIT
// code_object_files.cpp - saves warmed code objects under predictable file names.
#include "tools/warmup/code_object_files.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

#include "tools/common/exit_codes.h"
#include "tools/common/output_files.h"

namespace hipacm::cli {
namespace fs = std::filesystem;

std::vector<std::string> write_code_objects(const WarmupResult& result, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", dir, ec.message()));
  check_output_directory(dir);
  std::vector<std::string> written;
  std::set<std::string> used;
  for (const KernelOutcome& outcome : result.outcomes) {
    if (outcome.status != HIPACM_SUCCESS || outcome.code.empty()) continue;
    std::string arch = outcome.arch;
    std::replace(arch.begin(), arch.end(), ':', '_');
    const std::string stem = fs::path(outcome.input->source_name).stem().string();
    std::string name = fmt::format("{}.{}.co", stem, arch);
    for (int n = 2; !used.insert(name).second; ++n)
      name = fmt::format("{}-{}.{}.co", stem, n, arch);
    const fs::path path = fs::path(dir) / name;
    write_output_file(
        path.string(),
        std::string_view(reinterpret_cast<const char*>(outcome.code.data()), outcome.code.size()));
    written.push_back(path.string());
  }
  return written;
}

}  // namespace hipacm::cli
