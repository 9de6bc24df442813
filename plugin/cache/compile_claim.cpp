// SPDX-License-Identifier: MIT
// compile_claim.cpp - claims on cache keys through open-file-description locks on a claim file.
#include "plugin/cache/compile_claim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "support/byte_lock.h"

namespace hipacm::cache {
namespace {

using Clock = std::chrono::steady_clock;

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
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + max_wait;
  // A short poll: the waiter's whole wait is added to its own warm-up, kernel after kernel, and a
  // compile takes tens of milliseconds at least, so a few milliseconds of checking costs little.
  // (A blocking F_OFD_SETLKW could not honour max_wait.)
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (backend::lock_one_byte(fd.get(), offset, F_WRLCK)) break;
    // Anything but "held by another description" means this file system cannot do it.
    if (errno != EAGAIN && errno != EACCES) return claim;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      claim.waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
      return claim;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, kLongestPause);
  }
  claim.waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  claim.fd_ = std::move(fd);
  claim.offset_ = offset;
  return claim;
}

CompileClaim& CompileClaim::operator=(CompileClaim&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::move(other.fd_);
    offset_ = other.offset_;
    waited_ = other.waited_;
  }
  return *this;
}

CompileClaim::~CompileClaim() { release(); }

void CompileClaim::release() noexcept {
  if (!fd_.valid()) return;
  backend::lock_one_byte(fd_.get(), offset_, F_UNLCK);
  fd_.reset();
}

}  // namespace hipacm::cache
