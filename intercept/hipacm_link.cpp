// SPDX-License-Identifier: MIT
// hipacm_link.cpp - libhipacm.so.1's private entry found beside the shim and loaded on first use;
// the stats lines of `hipacm run --stats`; the shim's log lines.
#include "intercept/hipacm_link.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "intercept/real_rtc.h"
#include "support/pid_lock.h"

namespace hipacm::intercept {
namespace {

// The environment is read with secure_getenv, as libhipacm reads its settings: a set-id program
// gets none of them.
const char* setting(const char* name) noexcept { return secure_getenv(name); }

LogLevel allowed_level() noexcept {
  const char* value = setting("HIPACM_LOG");
  if (value == nullptr || *value == 0) return LogLevel::kWarning;
  if (std::strcmp(value, "off") == 0) return static_cast<LogLevel>(0);
  if (std::strcmp(value, "error") == 0) return LogLevel::kError;
  if (std::strcmp(value, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(value, "debug") == 0) return LogLevel::kDebug;
  return LogLevel::kWarning;
}

void write_all(int fd, const std::string& text) noexcept {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Loaded {
  PidLock lock;
  std::atomic<int> state{0};  // 0 not tried, 1 loaded, 2 cannot be used
  HipacmEntry entry{};
  std::string why;
};

Loaded& loaded() {
  static Loaded* const instance = new Loaded;  // never destroyed: used until the process ends
  return *instance;
}

// libhipacm.so.1 from this library's directory: the build tree and an installed libdir both
// keep the two side by side, and no other libhipacm (another build's) is ever taken.
void load(Loaded* l) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&hipacm_entry), &self) == 0 ||
      self.dli_fname == nullptr) {
    l->why = "cannot find the directory of libhipacm_intercept.so";
    return;
  }
  std::string path = self.dli_fname;
  const std::size_t slash = path.rfind('/');
  path =
      (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/libhipacm.so.1";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    l->why = "cannot load " + path + ": " + (error != nullptr ? error : "unknown error");
    return;
  }
  l->entry.compile = reinterpret_cast<decltype(l->entry.compile)>(
      real_dlsym(handle, "hipacm_intercept_compile_v1"));
  l->entry.release = reinterpret_cast<decltype(l->entry.release)>(
      real_dlsym(handle, "hipacm_intercept_release_v1"));
  if (l->entry.compile == nullptr || l->entry.release == nullptr)
    l->why = path + " has no hipacm_intercept_compile_v1 (a libhipacm of another build)";
}

}  // namespace

const HipacmEntry* hipacm_entry(std::string* why) noexcept {
  Loaded& l = loaded();
  int state = l.state.load(std::memory_order_acquire);
  if (state == 0) {
    std::lock_guard<PidLock> guard(l.lock);
    state = l.state.load(std::memory_order_acquire);
    if (state == 0) {
      try {
        load(&l);
      } catch (...) {
        l.why = "out of memory";
      }
      state = l.why.empty() ? 1 : 2;
      l.state.store(state, std::memory_order_release);
    }
  }
  if (state == 1) return &l.entry;
  try {
    *why = l.why;
  } catch (...) {
  }
  return nullptr;
}

void log_line(LogLevel level, std::string_view message) noexcept {
  if (static_cast<int>(level) > static_cast<int>(allowed_level())) return;
  static constexpr const char* kNames[] = {"off", "error", "warning", "info", "debug"};
  try {
    write_all(STDERR_FILENO, "hipacm: " + std::string(kNames[static_cast<int>(level)]) + ": " +
                                 std::string(message) + "\n");
  } catch (...) {
  }
}

void warn_unavailable_once(std::string_view why) noexcept {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  try {
    log_line(LogLevel::kWarning, "cannot compile through hipacm in this process (" +
                                     std::string(why) +
                                     "); hipRTC and NVRTC compile here as usual");
  } catch (...) {
  }
}

void record_stats(std::string_view event, std::string_view reason) noexcept {
  const char* path = setting("HIPACM_RUN_STATS");
  if (path == nullptr || *path == 0) return;
  try {
    const std::string line = "{\"pid\":" + std::to_string(getpid()) +
                             ",\"event\":" + json_string(event) +
                             ",\"reason\":" + json_string(reason) + "}\n";
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    // One write on an O_APPEND descriptor: lines of concurrent processes never interleave.
    (void)!write(fd, line.data(), line.size());
    close(fd);
  } catch (...) {
  }
}

}  // namespace hipacm::intercept
