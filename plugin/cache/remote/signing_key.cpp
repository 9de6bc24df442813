// SPDX-License-Identifier: MIT
// signing_key.cpp - the remote cache's HMAC-SHA256 key: read from a private file, used through
// Nettle, compared in constant time and wiped when dropped.
#include "plugin/cache/remote/signing_key.h"

#include <fcntl.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "support/bytes/sha256.h"
#include "support/files/unique_fd.h"

namespace hipacm::cache::remote {
namespace {

// Tells this digest apart from every other SHA-256 hipacm computes over the same bytes, so a
// fingerprint never equals some other published hash of the key.
constexpr std::string_view kFingerprintLabel = "hipacm-remote-cache-key-fingerprint-v1";

Failure invalid(std::string message) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Zeroes every byte the string owns, its spare capacity included (a shorter key read into the
// same buffer earlier may linger there); resize() to the capacity never reallocates.
void wipe(std::string& bytes) noexcept {
  bytes.resize(bytes.capacity());
  explicit_bzero(bytes.data(), bytes.size());
  bytes.clear();
}

// Wipes what it holds when it goes out of scope, whichever way the function returns.
struct WipedString {
  std::string bytes;
  ~WipedString() { wipe(bytes); }
};

std::size_t without_trailing_newline(std::string_view bytes) {
  if (bytes.size() >= 2 && bytes.substr(bytes.size() - 2) == "\r\n") return bytes.size() - 2;
  if (!bytes.empty() && bytes.back() == '\n') return bytes.size() - 1;
  return bytes.size();
}

Expected<void> length_fits(std::size_t size, const std::string& what) {
  if (size < kMinKeyBytes)
    return invalid(what + " holds " + std::to_string(size) + " bytes; a key is at least " +
                   std::to_string(kMinKeyBytes) + " (make one with: head -c 32 /dev/urandom)");
  if (size > kMaxKeyBytes)
    return invalid(what + " holds " + std::to_string(size) + " bytes; a key is at most " +
                   std::to_string(kMaxKeyBytes));
  return {};
}

}  // namespace

Expected<SigningKey> SigningKey::load(const std::string& path) {
  const std::string what = "remote cache key file '" + path + "'";
  // O_NONBLOCK: a FIFO put where the key should be must not hang the open; fstat refuses it.
  backend::UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) {
    const int error = errno;
    if (error == ELOOP) return invalid(what + " is a symbolic link; name the file itself");
    return invalid("cannot open " + what + ": " + std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return invalid("cannot stat " + what + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return invalid(what + " is a directory, not a key file");
  if (!S_ISREG(st.st_mode)) return invalid(what + " is not a regular file");
  if (st.st_uid != ::geteuid())
    return invalid(what + " is owned by uid " + std::to_string(st.st_uid) +
                   ", not by this user (uid " + std::to_string(::geteuid()) + ")");
  if ((st.st_mode & 077) != 0)
    return invalid(what + " is readable or writable by its group or others (mode " +
                   mode_text(st.st_mode) + "); chmod 600 it");
  // Refused unread when even a stripped newline could not bring it within bounds.
  if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > kMaxKeyBytes + 2)
    return invalid(what + " holds " + std::to_string(st.st_size) + " bytes; a key is at most " +
                   std::to_string(kMaxKeyBytes));

  // Reads at most one byte past the largest allowed file, so a file that grew since fstat is
  // still refused rather than read whole.
  WipedString buffer;
  buffer.bytes.resize(kMaxKeyBytes + 3);
  std::size_t got = 0;
  while (got < buffer.bytes.size()) {
    const ssize_t n = ::read(fd.get(), buffer.bytes.data() + got, buffer.bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalid("cannot read " + what + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxKeyBytes + 2)
    return invalid(what + " grew past " + std::to_string(kMaxKeyBytes) + " bytes while read");
  const std::size_t size = without_trailing_newline(std::string_view(buffer.bytes.data(), got));
  if (Expected<void> fits = length_fits(size, what); !fits) return std::move(fits).failure();
  return SigningKey(std::string(buffer.bytes.data(), size));
}

Expected<SigningKey> SigningKey::from_bytes(std::string_view bytes) {
  if (Expected<void> fits = length_fits(bytes.size(), "the remote cache key"); !fits)
    return std::move(fits).failure();
  return SigningKey(std::string(bytes));
}

SigningKey::SigningKey(SigningKey&& other) noexcept : bytes_(std::move(other.bytes_)) {
  wipe(other.bytes_);
}

SigningKey& SigningKey::operator=(SigningKey&& other) noexcept {
  if (this != &other) {
    wipe(bytes_);
    bytes_ = std::move(other.bytes_);
    wipe(other.bytes_);
  }
  return *this;
}

SigningKey::~SigningKey() { wipe(bytes_); }

std::string SigningKey::mac(std::string_view data) const {
  hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, bytes_.size(), reinterpret_cast<const std::uint8_t*>(bytes_.data()));
  hmac_sha256_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::string out(kMacBytes, '\0');
  hmac_sha256_digest(&ctx, kMacBytes, reinterpret_cast<std::uint8_t*>(out.data()));
  // The context holds the key's padded inner and outer states: as good as the key to a forger.
  explicit_bzero(&ctx, sizeof ctx);
  return out;
}

bool SigningKey::verify(std::string_view data, std::string_view mac) const {
  // The length is public (always kMacBytes for a real value); only the contents are compared in
  // constant time.
  if (mac.size() != kMacBytes) return false;
  const std::string expected = this->mac(data);
  return memeql_sec(expected.data(), mac.data(), kMacBytes) != 0;
}

std::string SigningKey::fingerprint() const {
  Sha256 sha;
  sha.add_field(kFingerprintLabel);
  sha.add_field(bytes_);
  return sha.hex().substr(0, 16);
}

}  // namespace hipacm::cache::remote
