// SPDX-License-Identifier: MIT
// machine_ceiling.cpp - N warmed compiler processes sharing one kernel counter, timed.
#include "machine_ceiling.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

#include "bench/common/kernel_request.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "nvrtc_library.h"

namespace hipacm::bench::nvidia {
namespace {

/// Lives in a MAP_SHARED page that every child sees.
struct SharedCounters {
  std::atomic<unsigned> next{0};
  std::atomic<unsigned> ok{0};
  std::atomic<unsigned> failed{0};
};
static_assert(std::atomic<unsigned>::is_always_lock_free, "shared across processes");

const char* kWarmUpSource =
    "extern \"C\" __global__ void ceiling_warm_up(float* x) { x[0] = 1; }\n";

/// The child's whole life: compile a trivial kernel, report ready, wait for the start, then take
/// kernels until the counter runs past the set. Returns the exit code.
int compile_share(const std::vector<SetKernel>& set, const std::string& arch,
                  SharedCounters* counters, int ready_fd, int start_fd) {
  try {
    SetKernel warm_up;
    warm_up.file = "ceiling_warm_up.cu";
    warm_up.source = kWarmUpSource;
    std::function<bool(const SetKernel&)> compile;
    std::unique_ptr<NvrtcLibrary> nvrtc;
    if (is_amd_arch(arch)) {
      if (!backend::load_hiprtc()) return 3;
      compile = [&arch](const SetKernel& k) {
        return backend::compile_with_hiprtc(to_backend_request(k, arch)).status == HIPACM_SUCCESS;
      };
    } else {
      nvrtc = std::make_unique<NvrtcLibrary>();
      compile = [&](const SetKernel& k) {
        try {
          nvrtc->compile_to_cubin(k, arch);
          return true;
        } catch (const std::exception&) {
          return false;
        }
      };
    }
    if (!compile(warm_up)) return 4;
    const char ready = 'r';
    if (write(ready_fd, &ready, 1) != 1) return 5;
    char go = 0;
    while (read(start_fd, &go, 1) < 0 && errno == EINTR) {
    }
    for (;;) {
      const unsigned i = counters->next.fetch_add(1, std::memory_order_relaxed);
      if (i >= set.size()) break;
      (compile(set[i]) ? counters->ok : counters->failed).fetch_add(1, std::memory_order_relaxed);
    }
    // Done before exiting: unloading the compiler is no part of compiling the set, and the pool
    // rows do not count their workers' exit either.
    const char done = 'd';
    if (write(ready_fd, &done, 1) != 1) return 7;
    return 0;
  } catch (...) {
    return 6;
  }
}

}  // namespace

VariantRun run_machine_ceiling(const std::vector<SetKernel>& set, const std::string& arch,
                               unsigned processes) {
  using Clock = std::chrono::steady_clock;
  void* page = mmap(nullptr, sizeof(SharedCounters), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error("mmap of the shared counters failed");
  SharedCounters* counters = std::construct_at(static_cast<SharedCounters*>(page));
  int ready[2], start[2];
  if (pipe(ready) != 0 || pipe(start) != 0) throw std::runtime_error("pipe failed");
  std::vector<pid_t> children;
  for (unsigned p = 0; p < processes; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      close(start[1]);
      _exit(compile_share(set, arch, counters, ready[1], start[0]));
    }
    if (pid > 0) children.push_back(pid);
  }
  close(ready[1]);
  close(start[0]);
  VariantRun run;
  unsigned ready_count = 0;
  char byte = 0;
  while (ready_count < children.size()) {
    const ssize_t n = read(ready[0], &byte, 1);
    if (n == 1) {
      ++ready_count;
    } else if (n == 0 || errno != EINTR) {
      break;  // a child died before it was ready: its exit code says why, below
    }
  }
  const auto started = Clock::now();
  close(start[1]);  // EOF is the start signal, for every child at once
  // The clock stops at the last child's "done" (or once every child is gone), not at its exit.
  unsigned done_count = 0;
  while (done_count < ready_count) {
    const ssize_t n = read(ready[0], &byte, 1);
    if (n == 1) {
      ++done_count;
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  int bad_exits = 0;
  for (const pid_t pid : children) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++bad_exits;
  }
  close(ready[0]);
  run.ok = static_cast<int>(counters->ok.load());
  run.failed = static_cast<int>(set.size()) - run.ok;
  if (bad_exits != 0 || children.size() != processes)
    run.error = std::to_string(bad_exits) + " of " + std::to_string(processes) +
                " ceiling processes failed (or could not be forked)";
  else if (run.failed != 0)
    run.error = std::to_string(run.failed) + " kernels failed to compile";
  std::destroy_at(counters);
  munmap(page, sizeof(SharedCounters));
  run.workers_seen = static_cast<long>(children.size());
  return run;
}

}  // namespace hipacm::bench::nvidia
