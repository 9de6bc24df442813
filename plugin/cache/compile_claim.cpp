// SPDX-License-Identifier: MIT
// compile_claim.cpp - claims on cache keys through open-file-description locks on a claim file.
#include "plugin/cache/compile_claim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "support/files/file_lock.h"

namespace hipacm::cache {
namespace {

// One byte of the claim file per key, at an offset below 2^44 taken from the key's first hex
// digits. Two keys share a byte only when those digits collide; they then take turns, which
// costs time, never correctness.
constexpr int kOffsetHexDigits = 11;
constexpr std::chrono::milliseconds kLongestPause{5};

}  // namespace

std::string CompileClaim::claim_file(const std::string& database) { return database + ".claims"; }

std::int64_t CompileClaim::offset_of(const std::string& key) noexcept {
  std::int64_t offset = 0;
  const std::size_t digits = std::min<std::size_t>(key.size(), kOffsetHexDigits);
  for (std::size_t i = 0; i < digits; ++i) {
    const char c = key[i];
    const int value = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : static_cast<unsigned char>(c) & 0xf;
    offset = offset * 16 + value;
  }
  return offset;
}

CompileClaim CompileClaim::acquire(const std::string& database, const std::string& key,
                                   std::chrono::milliseconds max_wait) noexcept {
  CompileClaim claim;
  const std::string path = claim_file(database);
  backend::UniqueFd fd(::open(
      path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, 0600));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return claim;
  const std::int64_t offset = offset_of(key);
  // A short poll: the waiter's whole wait is added to its own warm-up, kernel after kernel, and a
  // compile takes tens of milliseconds at least, so a few milliseconds of checking costs little.
  backend::FileLock lock = backend::FileLock::acquire(
      std::move(fd), backend::LockKind::kOpenFileDescription, backend::LockRange::byte(offset),
      backend::LockWait::up_to(std::max(max_wait, std::chrono::milliseconds(0)),
                               std::chrono::milliseconds(1), kLongestPause));
  // Anything but "held by another description" means this file system cannot do it.
  if (!lock.held() && !lock.busy()) return claim;
  claim.waited_ = lock.waited();
  if (lock.held()) claim.lock_ = std::move(lock);
  return claim;
}

}  // namespace hipacm::cache
