// code_object_files.cpp - saves warmed code objects under predictable file names.
#include "tools/code_object_files.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "tools/exit_codes.h"

namespace hipacm::cli {
namespace fs = std::filesystem;

std::vector<std::string> write_code_objects(const WarmupResult& result, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", dir, ec.message()));
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
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(outcome.code.data()),
              static_cast<std::streamsize>(outcome.code.size()));
    if (!out.flush())
      throw InputError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    written.push_back(path.string());
  }
  return written;
}

}  // namespace hipacm::cli
