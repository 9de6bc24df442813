// SPDX-License-Identifier: MIT
// worker_test_support.h - kernels, /proc scans and environment helpers for the worker tests.
#pragma once

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/compiler.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/pool/worker_pool.h"
#include "support/log.h"
#include "tests/scoped_env.h"
#include "tests/temp_dir.h"

namespace hipacm::test {

inline constexpr const char* kWorkerPath = HIPACM_TEST_WORKER_PATH;
inline constexpr const char* kArch = "gfx90a";

/// A small kernel whose name (and so whose code object) depends on `i`.
/// Built by appending: GCC 12 at -O3 reports a false -Wrestrict overlap for
/// `"literal" + std::string&&` (GCC PR 105329), which inserts at the front.
inline std::string kernel_source(int i) {
  const std::string index = std::to_string(i);
  std::string source = "extern \"C\" __global__ void k";
  source += index;
  source +=
      "(float* a, float b, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) a[i] = a[i] * b + ";
  source += index;
  source += ".0f;\n}\n";
  return source;
}

inline backend::CompileRequest make_request(std::string source, std::string name = "kernel.hip") {
  backend::CompileRequest r;
  r.source = std::move(source);
  r.source_name = std::move(name);
  r.arch = kArch;
  return r;
}

/// A real gfx90a code object (kernel_source(0), compiled once in this process).
/// The echo fault replies with the request's source as its code object, and
/// the host checks every reply, so transport tests send one of these.
inline const std::string& real_code_object() {
  static const std::string code = [] {
    const backend::CompileResult r = backend::compile_for_target(make_request(kernel_source(0)));
    return std::string(r.code.begin(), r.code.end());
  }();
  return code;
}

/// A request that the echo fault answers with a code object the host accepts.
inline backend::CompileRequest echo_request() { return make_request(real_code_object()); }

/// Checks that `result` is a successful gfx90a code object with a descriptor for `kernel`.
inline void expect_gfx90a_kernel(const backend::CompileResult& result, const std::string& kernel) {
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  const auto read = backend::read_code_object(result.code.data(), result.code.size());
  ASSERT_TRUE(read) << read.failure().message;
  const backend::CodeObjectInfo& info = read.value();
  EXPECT_EQ(info.machine, 224) << "EM_AMDGPU";
  EXPECT_EQ(backend::amdgpu_processor_from_flags(info.flags), kArch);
  EXPECT_NE(std::find(info.amdgpu_kernels.begin(), info.amdgpu_kernels.end(), kernel),
            info.amdgpu_kernels.end())
      << kernel << " has no kernel descriptor";
}

/// Collects the lines hipacm logs while it lives.
class LogLines {
 public:
  LogLines() { backend::set_log_sink(&record, this, backend::LogLevel::kInfo); }
  ~LogLines() { backend::set_log_sink(nullptr, nullptr, backend::LogLevel::kOff); }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;

  /// The first line that contains `text`, or "".
  std::string find(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& line : lines_)
      if (line.find(text) != std::string::npos) return line;
    return "";
  }

 private:
  static void record(void* self, std::int32_t, const char* message) {
    auto* lines = static_cast<LogLines*>(self);
    std::lock_guard<std::mutex> lock(lines->mutex_);
    lines->lines_.emplace_back(message);
  }
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

/// Enables worker fault injection with `spec` for workers spawned in this
/// scope; the pool is emptied on entry and exit so no worker outlives its spec.
class FaultScope {
 public:
  explicit FaultScope(const std::string& spec)
      : drained_(), enable_("HIPACM_TEST_HOOKS", "1"), spec_("HIPACM_WORKER_FAULT", spec) {}
  ~FaultScope() { backend::WorkerPool::instance().shutdown(); }

 private:
  struct Drain {
    Drain() { backend::WorkerPool::instance().shutdown(); }
  } drained_;
  ScopedEnv enable_;
  ScopedEnv spec_;
};

struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  std::string comm;
};

/// /proc/<pid>/stat, or nullopt when the process is gone.
inline std::optional<ProcInfo> read_proc(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces, so split at the last ')'.
  const auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  ProcInfo info;
  info.pid = pid;
  info.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 2));
  rest >> info.state >> info.ppid;
  return info;
}

/// Whether `pid` is a process that has not ended.
inline bool alive(pid_t pid) {
  const auto info = read_proc(pid);
  return info && info->state != 'Z';
}

/// Whether a worker of the service is back with it, waiting for its next host: it has let go of
/// its last host's socket (its fd 3 is /dev/null again) and sleeps on its line to the service.
inline bool back_in_service(pid_t pid) {
  std::error_code ec;
  const auto target = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/fd/3", ec);
  const auto info = read_proc(pid);
  return !ec && target == "/dev/null" && info && info->state == 'S';
}

/// Every live or zombie child of `parent`.
inline std::vector<ProcInfo> children_of(pid_t parent) {
  std::vector<ProcInfo> out;
  DIR* dir = opendir("/proc");
  if (!dir) return out;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (auto info = read_proc(static_cast<pid_t>(pid)); info && info->ppid == parent) {
      out.push_back(*info);
    }
  }
  closedir(dir);
  return out;
}

/// Pids of this process's hipacm-worker children (zombies included).
inline std::vector<pid_t> worker_children(bool include_zombies = true) {
  std::vector<pid_t> pids;
  for (const ProcInfo& p : children_of(getpid())) {
    if (p.comm == "hipacm-worker" && (include_zombies || p.state != 'Z')) pids.push_back(p.pid);
  }
  return pids;
}

inline int zombie_children() {
  int n = 0;
  for (const ProcInfo& p : children_of(getpid())) n += p.state == 'Z';
  return n;
}

/// Entries in /proc/self/fd, minus the one the listing itself uses.
inline int open_fd_count() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  while (const dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n - 1;
}

/// Polls `done` every 10 ms for up to `ms`.
template <typename Pred>
bool wait_until(Pred done, int ms) {
  for (int waited = 0; waited <= ms; waited += 10) {
    if (done()) return true;
    boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace hipacm::test
