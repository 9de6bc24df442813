// SPDX-License-Identifier: MIT
// code_object_files.cpp - saves warmed code objects under predictable file names.
#include "tools/warmup/code_object_files.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "support/unique_fd.h"
#include "tools/common/exit_codes.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

// O_NOFOLLOW: a link planted at DIR/<name>.co must not redirect the write to a file elsewhere.
void write_file_no_follow(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  const backend::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid())
    throw InputError(fmt::format("cannot write {}: {}{}", path.string(), std::strerror(errno),
                                 errno == ELOOP ? " (it is a symbolic link)" : ""));
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InputError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

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
    write_file_no_follow(path, outcome.code);
    written.push_back(path.string());
  }
  return written;
}

}  // namespace hipacm::cli
