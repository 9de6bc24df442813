// SPDX-License-Identifier: MIT
// request_recorder.cpp - appends every request the host compiles to the $HIPACM_RECORD file, one
// JSON line each, for `hipacm warmup FILE` to replay.
#include "plugin/mode/request_recorder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "plugin/cache/key/key.h"
#include "plugin/mode/record_format.h"
#include "support/environment.h"
#include "support/fork_epoch.h"
#include "support/log.h"
#include "support/unique_fd.h"

namespace hipacm {
namespace {

using Json = nlohmann::ordered_json;

struct RecorderState {
  boost::mutex mutex;
  std::string path;  // the file `fd` was opened for and `recorded` describes
  backend::UniqueFd fd;
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

/// Holds an exclusive flock on a descriptor while it lives.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    int rc;
    do rc = ::flock(fd_, LOCK_EX);
    while (rc != 0 && errno == EINTR);
    locked_ = rc == 0;
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    if (locked_) ::flock(fd_, LOCK_UN);
  }
  bool locked() const noexcept { return locked_; }

 private:
  int fd_;
  bool locked_ = false;
};

/// Opens `path` for appending: created 0600 (sources may be private), never through a symbolic
/// link, and only a regular file (a FIFO would block or lose lines).
std::optional<std::string> open_record_file(RecorderState& state) {
  backend::UniqueFd fd(
      ::open(state.path.c_str(),
             O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, 0600));
  if (!fd.valid()) return "cannot open it: " + errno_text();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return "cannot stat it: " + errno_text();
  if (!S_ISREG(st.st_mode)) return std::string("it is not a regular file");
  state.fd = std::move(fd);
  return std::nullopt;
}

/// Appends `line` whole or not at all; the reason when not.
std::optional<std::string> append_line(RecorderState& state, const std::string& line) {
  if (!state.fd.valid())
    if (auto error = open_record_file(state)) return error;
  const int fd = state.fd.get();
  // O_APPEND alone keeps whole writes apart; the lock also covers a short write (a full disk),
  // which is cut off again below before another writer can append after it.
  const FileLock lock(fd);
  if (!lock.locked()) return "cannot lock it: " + errno_text();
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "cannot stat it: " + errno_text();
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size + line.size() > kMaxRecordFileBytes)
    return "it has reached the record file limit of " + std::to_string(kMaxRecordFileBytes >> 20) +
           " MiB";
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = "cannot write it: " + (n < 0 ? errno_text() : "no progress");
      // Cut the partial line off; should that fail too, the replay names the torn line.
      if (written > 0 && ::ftruncate(fd, st.st_size) != 0)
        return error + " (a partial line remains)";
      return error;
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
    const std::optional<std::string> path = backend::environment_value("HIPACM_RECORD");
    if (!path) return;
    const std::string digest = content_digest(request);
    RecorderState& state = recorder();
    auto select_file = [&] {
      if (state.path == *path) return;
      state.fd.reset();
      state.recorded.clear();
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
    std::optional<std::string> error;
    {
      const boost::lock_guard<boost::mutex> lock(state.mutex);
      select_file();
      if (!state.recorded.insert(digest).second) return;  // another thread got there first
      error = append_line(state, line);
      if (error) state.recorded.erase(digest);  // a later submit may try again
    }
    // Logged without the recorder's lock: the log's own lock ranks before it at fork.
    if (error)
      warn("record-write", "cannot record requests to " + *path + ": " + *error +
                               "; compiling goes on without recording");
  } catch (...) {
    warn("record-failed", "recording a request failed; compiling goes on without recording");
  }
}

}  // namespace hipacm
