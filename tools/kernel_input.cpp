// kernel_input.cpp - expands warmup PATHS (files, directories, manifests) into kernel inputs.
#include "tools/kernel_input.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "tools/exit_codes.h"
#include "tools/kernel_directives.h"
#include "tools/manifest_reader.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

std::vector<fs::path> hip_files_below(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->path().extension() == ".hip" && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) throw InputError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());  // directory order is not deterministic
  return files;
}

}  // namespace

std::vector<KernelInput> collect_kernel_inputs(const std::vector<std::string>& paths) {
  std::vector<KernelInput> kernels;
  std::set<std::string> seen;  // canonical source paths already listed
  auto add = [&](KernelInput kernel) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(kernel.path, ec);
    if (seen.insert(ec ? kernel.path : canonical.string()).second)
      kernels.push_back(std::move(kernel));
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) throw InputError(fmt::format("{}: no such file or directory", path));
    if (fs::is_directory(status)) {
      const auto files = hip_files_below(path);
      if (files.empty()) throw InputError(fmt::format("{}: no .hip files below it", path));
      for (const fs::path& file : files) add(read_kernel_file(file));
    } else if (fs::path(path).extension() == ".json") {
      for (KernelInput& kernel : read_manifest(path)) add(std::move(kernel));
    } else {
      add(read_kernel_file(path));
    }
  }
  if (kernels.empty())
    throw InputError("no kernels to warm: pass .hip files, directories or a manifest");
  return kernels;
}

}  // namespace hipacm::cli
