// SPDX-License-Identifier: MIT
// input_files.cpp - opens input files without blocking, refuses non-regular files, bounds reads.
#include "tools/input/input_files.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "support/files/unique_fd.h"
#include "tools/common/exit_codes.h"

namespace hipacm::cli {
namespace {

std::string mib(std::size_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

}  // namespace

std::string read_input_file(const std::filesystem::path& file, std::size_t max_bytes) {
  const std::string name = file.string();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const backend::UniqueFd fd(::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) throw InputError(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw InputError(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(fmt::format("{}: is a directory, not a file", name));
  if (!S_ISREG(st.st_mode))
    throw InputError(fmt::format(
        "{}: not a regular file (a FIFO, device or socket has no fixed contents to read)", name));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw InputError(
        fmt::format("{}: {} bytes, larger than the limit of {}", name, st.st_size, mib(max_bytes)));
  // The size from fstat is a hint only: the file may grow while it is read, so the read itself
  // stops one byte past the limit.
  std::string contents;
  contents.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t used = 0;
  for (;;) {
    if (used == contents.size()) {
      if (contents.size() > max_bytes)
        throw InputError(
            fmt::format("{}: grew past the limit of {} while being read", name, mib(max_bytes)));
      contents.resize(std::min(max_bytes + 1, contents.size() * 2));
    }
    const ssize_t n = ::read(fd.get(), contents.data() + used, contents.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  contents.resize(used);
  return contents;
}

std::string read_source_file(const std::filesystem::path& file) {
  std::string text = read_input_file(file, kMaxSourceFileBytes);
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw InputError(
        fmt::format("{}: NUL byte at offset {}; the compiler would see only the text before it",
                    file.string(), nul));
  return text;
}

void count_input_bytes(std::size_t bytes, std::size_t* total, const std::string& where) {
  *total += bytes;
  if (*total > kMaxInputBytesPerRun)
    throw InputError(
        fmt::format("{}: the kernels' sources and headers pass {} in all; split the run", where,
                    mib(kMaxInputBytesPerRun)));
}

}  // namespace hipacm::cli
