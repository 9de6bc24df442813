// SPDX-License-Identifier: MIT
// request_recorder.cpp - appends every request the host compiles to the $HIPACM_RECORD file, one
// JSON line each, for `hipacm warmup FILE` to replay.
#include "plugin/record/request_recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "plugin/cache/key/key.h"
#include "plugin/record/record_format.h"
#include "support/files/file_lock.h"
#include "support/files/unique_fd.h"
#include "support/fork_epoch.h"
#include "support/log.h"
#include "support/settings.h"

namespace hipacm {
namespace {

using Json = nlohmann::ordered_json;

struct RecorderState {
  boost::mutex mutex;
  std::string path;  // the file `fd` was opened for and `recorded` describes
  backend::UniqueFd fd;
  bool lock_stuck = false;  // the last wait for the file's lock ran out: do not wait again
  std::unordered_set<std::string> recorded;  // content digests this process appended to `path`
};

// A child shares the parent's open file description, and with it the parent's flock: the lock
// would no longer keep the two apart. The child opens the file again on its next record; what the
// parent recorded is in the file already, so `recorded` stays.
void reopen_in_child(RecorderState& state) noexcept { state.fd.reset(); }

RecorderState& recorder() {
  return ForkGuarded<RecorderState, ForkRank::kRecordFile, &reopen_in_child>::instance();
}

std::string errno_text() { return std::strerror(errno); }

/// How long a record waits for another process's lock on the file before it is skipped. A
/// holder that never lets go (anyone who can open the file can take the lock) must not stall
/// compiles: once a wait has run out, later records try the lock once and do not wait again
/// until a lock is taken.
constexpr std::chrono::milliseconds kLockWait{1500};

/// Opens `path` for appending: never through a symbolic link, only a regular file (a FIFO would
/// block or lose lines), and only one this user owns that no one else may write. A file another
/// user planted (say a 0666 file in a shared directory) would otherwise receive this user's
/// sources. The checks run on the opened descriptor, so the file cannot be swapped between check
/// and use. A missing file is created 0600 (sources may be private) and exclusively, so the file
/// created is the file written.
std::optional<std::string> open_record_file(RecorderState& state) {
  constexpr int kFlags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
  backend::UniqueFd fd;
  for (int attempt = 0; attempt < 4 && !fd.valid(); ++attempt) {
    fd = backend::UniqueFd(::open(state.path.c_str(), kFlags));
    if (fd.valid() || errno != ENOENT) break;
    fd = backend::UniqueFd(::open(state.path.c_str(), kFlags | O_CREAT | O_EXCL, 0600));
    if (!fd.valid() && errno != EEXIST) break;  // EEXIST: made meanwhile, open that one
  }
  if (!fd.valid()) return "cannot open it: " + errno_text();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return "cannot stat it: " + errno_text();
  if (!S_ISREG(st.st_mode)) return std::string("it is not a regular file");
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return std::string("other users may write it (group- or other-writable)");
  state.fd = std::move(fd);
  return std::nullopt;
}

/// Why a line was not appended: `lock_busy` when another process held the file's lock.
struct AppendError {
  std::string reason;
  bool lock_busy = false;
};

/// Appends `line` whole or not at all; the reason when not.
std::optional<AppendError> append_line(RecorderState& state, const std::string& line) {
  if (!state.fd.valid())
    if (auto error = open_record_file(state)) return AppendError{std::move(*error)};
  const int fd = state.fd.get();
  // O_APPEND alone keeps whole writes apart; the lock also covers a short write (a full disk),
  // which is cut off again below before another writer can append after it.
  // An exclusive flock on the shared descriptor, polled for (1 ms, doubling up to 50 ms) and
  // unlocked explicitly when the line is in.
  const backend::FileLock lock = backend::FileLock::acquire_borrowed(
      fd, backend::LockKind::kFlock, backend::LockRange::whole_file(),
      backend::LockWait::up_to(state.lock_stuck ? std::chrono::milliseconds(0) : kLockWait,
                               std::chrono::milliseconds(1), std::chrono::milliseconds(50)));
  if (lock.busy()) {
    state.lock_stuck = true;
    return AppendError{"another process has held its lock for more than " +
                           std::to_string(kLockWait.count()) +
                           " ms; requests it compiles "
                           "meanwhile are not recorded",
                       true};
  }
  if (!lock.held())
    return AppendError{"cannot lock it: " + std::string(std::strerror(lock.error()))};
  state.lock_stuck = false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return AppendError{"cannot stat it: " + errno_text()};
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size + line.size() > kMaxRecordFileBytes)
    return AppendError{"it has reached the record file limit of " +
                       std::to_string(kMaxRecordFileBytes >> 20) + " MiB"};
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = "cannot write it: " + (n < 0 ? errno_text() : "no progress");
      // Cut the partial line off; should that fail too, the replay names the torn line.
      if (written > 0 && ::ftruncate(fd, st.st_size) != 0)
        return AppendError{error + " (a partial line remains)"};
      return AppendError{error};
    }
    written += static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

void warn(std::string_view topic, const std::string& message) noexcept {
  backend::log_once(backend::LogLevel::kWarning, topic, message);
}

}  // namespace

std::string record_line(const backend::CompileRequest& request) {
  Json headers = Json::array();
  for (const auto& [name, source] : request.headers)
    headers.push_back(Json{{"name", name}, {"source", source}});
  const Json record{{"schema", kRecordSchema},
                    {"arch", request.arch},
                    {"source_name", request.source_name},
                    {"options", request.options},
                    {"name_expressions", request.name_expressions},
                    {"headers", std::move(headers)},
                    {"source", request.source}};
  // dump() escapes every control character, '\n' included: one request is one line.
  return record.dump() + '\n';
}

void record_request(const backend::CompileRequest& request) noexcept {
  try {
    const std::optional<std::string> path = settings::record_path();
    if (!path) return;
    const std::string digest = content_digest(request);
    RecorderState& state = recorder();
    auto select_file = [&] {
      if (state.path == *path) return;
      state.fd.reset();
      state.recorded.clear();
      state.lock_stuck = false;
      state.path = *path;
    };
    {
      const boost::lock_guard<boost::mutex> lock(state.mutex);
      select_file();
      if (state.recorded.count(digest) != 0) return;
    }
    std::string line;
    try {
      line = record_line(request);  // outside the lock: a large source takes a while
    } catch (const nlohmann::json::exception&) {
      warn("record-not-utf8",
           "a request whose source, names or options are not UTF-8 was compiled but not "
           "recorded to " +
               *path);
      return;
    }
    if (line.size() > kMaxRecordLineBytes) {
      warn("record-too-large", "a request larger than " +
                                   std::to_string(kMaxRecordLineBytes >> 20) +
                                   " MiB was compiled but not recorded to " + *path);
      return;
    }
    std::optional<AppendError> error;
    {
      const boost::lock_guard<boost::mutex> lock(state.mutex);
      select_file();
      if (!state.recorded.insert(digest).second) return;  // another thread got there first
      error = append_line(state, line);
      if (error) state.recorded.erase(digest);  // a later submit may try again
    }
    // Logged without the recorder's lock: the log's own lock ranks before it at fork.
    // One warning per process for a held lock, whichever records it skips.
    if (error)
      warn(error->lock_busy ? "record-lock" : "record-write",
           "cannot record requests to " + *path + ": " + error->reason +
               "; compiling goes on without recording");
  } catch (...) {
    warn("record-failed", "recording a request failed; compiling goes on without recording");
  }
}

}  // namespace hipacm
