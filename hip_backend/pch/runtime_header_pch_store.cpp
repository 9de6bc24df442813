// SPDX-License-Identifier: MIT
// runtime_header_pch_store.cpp - checked lookups, one builder per key, staging and publishing of
// runtime-header PCHs.
#include "hip_backend/pch/runtime_header_pch_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/pch/runtime_header_pch_file.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "support/bytes/sha256.h"
#include "support/environment.h"
#include "support/files/file_lock.h"
#include "support/files/private_file.h"
#include "support/files/unique_fd.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

constexpr const char* kStagingPrefix = ".stage-";
/// A build takes seconds; a staging directory this old lost its builder.
constexpr std::time_t kStaleStagingSeconds = 3600;

bool plausible_pch(const std::string& path) {
  std::size_t size = 0;
  return UniqueFd(open_plausible_pch(path, &size)).valid();
}

constexpr const char* kDigestName = "hiprtc_runtime.h.pch.sha256";

/// Which file this is, as of `st`: any rewrite or replacement gives another identity.
std::string file_identity(const struct stat& st) {
  std::string identity;
  for (const std::string& part :
       {std::to_string(st.st_dev), std::to_string(st.st_ino), std::to_string(st.st_size),
        std::to_string(st.st_ctim.tv_sec), std::to_string(st.st_ctim.tv_nsec)}) {
    identity.append(part).append(":");
  }
  return identity;
}

/// The SHA-256 (hex) of a plausible PCH's bytes, or "" when it cannot be read. Also says which
/// file it hashed (device, inode, size, change time), so that a process hashes one file once.
std::string pch_digest(const std::string& path, std::string* identity) {
  std::size_t size = 0;
  UniqueFd fd(open_plausible_pch(path, &size));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return "";
  *identity = file_identity(st);
  Sha256 hash;
  std::vector<char> buffer(1 << 16);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    hash.add_bytes(buffer.data(), static_cast<std::size_t>(n));
    done += static_cast<std::size_t>(n);
  }
  return done == size ? hash.hex() : "";
}

/// The digest file's 64 hex digits, or "".
std::string recorded_digest(const std::string& path) {
  struct stat st {};
  UniqueFd fd = open_private_file(path, O_RDONLY, S_IFREG, &st);
  char text[64];
  if (!fd.valid() || st.st_size != 64 || ::pread(fd.get(), text, 64, 0) != 64) return "";
  return std::string(text, 64);
}

/// Whether the PCH in `dir` has the bytes it was published with: a PCH that changed on disk
/// (a torn write, a bad block) could make clang abort instead of failing the compile. A file
/// once checked is remembered by its identity, so each process hashes it once.
bool pch_intact(const std::string& dir) {
  static NoDestructor<std::mutex> mutex;
  static NoDestructor<std::set<std::string>> checked;
  const std::string path = dir + "/" + kRuntimeHeaderPchName;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  const std::string seen = path + "|" + file_identity(st);
  {
    const std::lock_guard<std::mutex> lock(*mutex);
    if (checked->count(seen) != 0) return true;
  }
  std::string identity;
  const std::string digest = pch_digest(path, &identity);
  if (digest.empty() || digest != recorded_digest(dir + "/" + kDigestName)) return false;
  if (path + "|" + identity != seen) return false;  // it changed while it was read
  const std::lock_guard<std::mutex> lock(*mutex);
  if (checked->size() < 1024) checked->insert(seen);
  return true;
}

// A real directory of this user, not a link, that no one else may write.
bool own_directory(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & 022) == 0;
}

}  // namespace

RuntimeHeaderPchSetting runtime_header_pch_setting(std::string* problem) {
  settings::Parsed<settings::HiprtcPch> setting = settings::hiprtc_pch();
  if (problem != nullptr && !setting.problem.empty()) *problem = std::move(setting.problem);
  return setting.value;
}

bool valid_runtime_header_pch_key(const std::string& key) {
  return key.size() == 64 && std::all_of(key.begin(), key.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

RuntimeHeaderPchStore::RuntimeHeaderPchStore(std::string root)
    : runtime_dir_(root.substr(0, root.rfind('/'))), root_(std::move(root)) {}

RuntimeHeaderPchStore RuntimeHeaderPchStore::in_runtime_dir() {
  return RuntimeHeaderPchStore(runtime_dir_from_environment() + "/pch");
}

Expected<void> RuntimeHeaderPchStore::usable() const {
  Expected<void> made = make_runtime_directory(runtime_dir_);
  if (!made) return made;
  return make_private_directory(root_);
}

std::optional<std::string> RuntimeHeaderPchStore::ready_dir(const std::string& key) const {
  if (!valid_runtime_header_pch_key(key) || !usable()) return std::nullopt;
  const std::string dir = root_ + "/" + key;
  if (!own_directory(dir) || !pch_intact(dir)) return std::nullopt;
  return dir;
}

bool RuntimeHeaderPchStore::refused(const std::string& key) const {
  if (!valid_runtime_header_pch_key(key) || !usable()) return false;
  struct stat st {};
  return ::lstat((root_ + "/" + key + ".refused").c_str(), &st) == 0;
}

void RuntimeHeaderPchStore::forget(const std::string& key) const {
  if (!valid_runtime_header_pch_key(key) || !usable()) return;
  remove_directory_tree(root_ + "/" + key);
}

void RuntimeHeaderPchStore::refuse(const std::string& key, const std::string& reason) const {
  if (!valid_runtime_header_pch_key(key) || !usable()) return;
  const std::string path = root_ + "/" + key + ".refused";
  UniqueFd fd = open_private_file(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd.valid()) (void)wire::write_all(fd.get(), reason.data(), reason.size());
}

Expected<RuntimeHeaderPchStore::Claim> RuntimeHeaderPchStore::claim(const std::string& key) const {
  if (!valid_runtime_header_pch_key(key))
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, "not a PCH key"};
  if (Expected<void> ready = usable(); !ready) return std::move(ready).failure();
  const std::string lock_path = root_ + "/" + key + ".lock";
  // The kernel drops a flock when its holder dies, so a builder that crashed blocks no one. The
  // claim keeps the descriptor, and with it the lock, until it goes.
  UniqueFd lock = FileLock::acquire(open_private_file(lock_path, O_RDWR | O_CREAT),
                                    LockKind::kFlock, LockRange::whole_file(), LockWait::once())
                      .take_fd();
  if (!lock.valid()) return Failure{HIPACM_ERROR_NOT_READY, "another process is building this PCH"};
  return Claim(*this, key, std::move(lock));
}

RuntimeHeaderPchStore::Counts RuntimeHeaderPchStore::counts() const {
  Counts counts;
  if (!usable()) return counts;
  constexpr std::string_view kRefused = ".refused";
  if (DIR* dir = ::opendir(root_.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (ready_dir(name)) ++counts.ready;
      if (name.size() > kRefused.size() &&
          name.compare(name.size() - kRefused.size(), kRefused.size(), kRefused) == 0 &&
          valid_runtime_header_pch_key(name.substr(0, name.size() - kRefused.size())))
        ++counts.refused;
    }
    ::closedir(dir);
  }
  return counts;
}

void RuntimeHeaderPchStore::remove_stale_staging() const {
  const std::time_t stale = std::time(nullptr) - kStaleStagingSeconds;
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(root_.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      struct stat st {};
      if (name.rfind(kStagingPrefix, 0) == 0 && ::lstat((root_ + "/" + name).c_str(), &st) == 0 &&
          S_ISDIR(st.st_mode) && st.st_mtime < stale)
        names.push_back(name);
    }
    ::closedir(dir);
  }
  for (const std::string& name : names) remove_directory_tree(root_ + "/" + name);
}

void RuntimeHeaderPchStore::evict_oldest_beyond(std::size_t keep) const {
  std::vector<std::pair<long long, std::string>> entries;
  if (DIR* dir = ::opendir(root_.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      struct stat st {};
      if (valid_runtime_header_pch_key(name) && ::lstat((root_ + "/" + name).c_str(), &st) == 0 &&
          S_ISDIR(st.st_mode))
        entries.emplace_back(static_cast<long long>(st.st_mtime), name);
    }
    ::closedir(dir);
  }
  if (entries.size() <= keep) return;
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + keep < entries.size(); ++i) {
    remove_directory_tree(root_ + "/" + entries[i].second);
    // At worst a builder that holds it now and one that takes the new file both build: each
    // publishes only a PCH that passed its own check.
    ::unlink((root_ + "/" + entries[i].second + ".lock").c_str());
  }
}

RuntimeHeaderPchStore::Claim::Claim(const RuntimeHeaderPchStore& store, std::string key,
                                    UniqueFd lock)
    : store_(std::make_unique<const RuntimeHeaderPchStore>(store)),
      key_(std::move(key)),
      lock_(std::move(lock)) {}

RuntimeHeaderPchStore::Claim::Claim(Claim&& other) noexcept
    : store_(std::move(other.store_)),
      key_(std::move(other.key_)),
      lock_(std::move(other.lock_)),
      staging_(std::exchange(other.staging_, std::string())) {}

RuntimeHeaderPchStore::Claim::~Claim() {
  if (!staging_.empty()) remove_directory_tree(staging_);
}

Expected<void> RuntimeHeaderPchStore::Claim::make_staging_dir() {
  if (!staging_.empty()) return {};
  store_->remove_stale_staging();
  std::string dir = store_->root_ + "/" + kStagingPrefix + "XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot make a staging directory in " + store_->root_ +
                                              ": " + std::strerror(errno)};
  }
  staging_ = std::move(dir);
  return {};
}

Expected<void> RuntimeHeaderPchStore::Claim::publish() {
  if (staging_.empty() || !plausible_pch(staging_ + "/" + kRuntimeHeaderPchName)) {
    return Failure{HIPACM_ERROR_INTERNAL, "no plausible PCH was staged"};
  }
  // Only the PCH and its digest go public: the builder's request and compiler files stay behind.
  std::string identity;
  const std::string digest = pch_digest(staging_ + "/" + kRuntimeHeaderPchName, &identity);
  if (digest.empty()) return Failure{HIPACM_ERROR_INTERNAL, "cannot read the staged PCH"};
  if (DIR* dir = ::opendir(staging_.c_str())) {
    std::vector<std::string> others;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != ".." && name != kRuntimeHeaderPchName) others.push_back(name);
    }
    ::closedir(dir);
    for (const std::string& name : others) {
      const std::string path = staging_ + "/" + name;
      if (::unlink(path.c_str()) != 0) remove_directory_tree(path);
    }
  }
  {
    const std::string digest_path = staging_ + "/" + kDigestName;
    UniqueFd fd = open_private_file(digest_path, O_WRONLY | O_CREAT | O_EXCL);
    if (!fd.valid()) {
      return Failure{HIPACM_ERROR_INTERNAL,
                     "cannot write " + digest_path + ": " + std::strerror(errno)};
    }
    if (Expected<void> written = wire::write_all(fd.get(), digest.data(), digest.size());
        !written) {
      return written;
    }
  }
  store_->evict_oldest_beyond(kMaxEntries - 1);
  const std::string target = store_->root_ + "/" + key_;
  remove_directory_tree(target);  // a PCH that failed the plausibility check
  if (::rename(staging_.c_str(), target.c_str()) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot publish " + target + ": " + std::strerror(errno)};
  }
  staging_.clear();
  return {};
}

void RuntimeHeaderPchStore::Claim::refuse(const std::string& reason) {
  store_->refuse(key_, reason);
}

}  // namespace hipacm::backend
