// SPDX-License-Identifier: MIT
// runtime_fact_memo.cpp - one checked file per remembered library fact in the runtime directory.
#include "hip_backend/machine/runtime_fact_memo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <string_view>
#include <utility>

#include "hip_backend/machine/runtime_dir.h"
#include "support/bytes/sha256.h"
#include "support/files/private_file.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {
namespace {

constexpr std::string_view kMagic = "hipacm-fact-1 ";

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string encode_runtime_fact(const std::string& key, const std::string& value) {
  std::string record(kMagic);
  record += std::to_string(key.size());
  record += '\n';
  record += key;
  record += value;
  return record;
}

std::optional<std::string> decode_runtime_fact(std::string_view record, const std::string& key) {
  if (record.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  record.remove_prefix(kMagic.size());
  const std::size_t newline = record.find('\n');
  // Canonical decimal only (no sign, no leading zero): one record, one spelling.
  if (newline == std::string_view::npos || newline == 0 || newline > 8 ||
      (record[0] == '0' && newline > 1))
    return std::nullopt;
  std::size_t key_size = 0;
  const auto [end, ec] = std::from_chars(record.data(), record.data() + newline, key_size);
  if (ec != std::errc() || end != record.data() + newline) return std::nullopt;
  record.remove_prefix(newline + 1);
  if (key_size != key.size() || record.size() < key_size || record.substr(0, key_size) != key)
    return std::nullopt;
  return std::string(record.substr(key_size));
}

RuntimeFactMemo::RuntimeFactMemo(std::string runtime_dir)
    : runtime_dir_(std::move(runtime_dir)), facts_dir_(runtime_dir_ + "/facts") {}

std::string RuntimeFactMemo::path_for(const std::string& key) const {
  return facts_dir_ + "/" + sha256_hex(key.data(), key.size());
}

std::optional<std::string> RuntimeFactMemo::load(const std::string& key) {
  // Both checked before reading: a directory another user can write could hold a file that
  // lies, and a fact decides which compiler library this process trusts for an arch.
  if (!make_runtime_directory(runtime_dir_) || !make_private_directory(facts_dir_))
    return std::nullopt;
  // Never blocks: a FIFO planted as a fact is refused, not waited on.
  struct stat st {};
  UniqueFd fd = open_private_file(path_for(key), O_RDONLY, S_IFREG, &st);
  if (!fd.valid() || st.st_size <= 0 || static_cast<std::size_t>(st.st_size) > kMaxFactFileBytes)
    return std::nullopt;
  std::string record(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::read(fd.get(), record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // shorter than it said: not a whole record
    done += static_cast<std::size_t>(n);
  }
  return decode_runtime_fact(record, key);
}

void RuntimeFactMemo::store(const std::string& key, const std::string& value) {
  const std::string record = encode_runtime_fact(key, value);
  if (record.size() > kMaxFactFileBytes) return;
  if (!make_runtime_directory(runtime_dir_) || !make_private_directory(facts_dir_)) return;
  std::string temp = facts_dir_ + "/.tmp-XXXXXX";
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (!fd.valid()) return;
  const bool written = write_all(fd.get(), record);
  fd.reset();
  // rename() replaces atomically: a concurrent reader sees the old record or the new one.
  if (!written || ::rename(temp.c_str(), path_for(key).c_str()) != 0) ::unlink(temp.c_str());
}

std::shared_ptr<LibraryFactMemo> runtime_fact_memo() {
  return std::make_shared<RuntimeFactMemo>(runtime_dir_from_environment());
}

}  // namespace hipacm::backend
