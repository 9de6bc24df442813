// SPDX-License-Identifier: MIT
// service_worker.cpp - a worker of the compile service: takes a host's setting, serves it, goes
// back to the service and waits for the next host.
#include "worker/service/service_worker.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/protocol/service_wire.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "support/files/unique_fd.h"
#include "worker/session/worker_session.h"

extern char** environ;

namespace hipacm::backend {
namespace {

namespace sw = service_wire;

std::string errno_text() { return std::strerror(errno); }

/// Makes `order` this process's setting: its environment.
bool take_order(const sw::WorkerOrder& order) {
  // The orderer's environment, as a worker it spawned itself would have had. The strings stay
  // alive in `held` until the next order replaces them.
  static std::vector<std::string> held;
  static std::vector<char*> entries;
  held = order.environment;
  entries.clear();
  for (std::string& entry : held) entries.push_back(entry.data());
  entries.push_back(nullptr);
  environ = entries.data();
  // Never the host's working directory: every compile runs in an empty one of its own
  // (worker_session), and the host made the options' relative paths absolute.
  if (::chdir("/") != 0) {
    std::fprintf(stderr, "hipacm-worker: cannot leave the working directory: %s\n",
                 errno_text().c_str());
    return false;
  }
  return true;
}

/// Puts a host's socket on fd 3 and its output pipe on 1 and 2.
bool take_descriptors(int socket, int output) {
  return ::dup2(output, 1) >= 0 && ::dup2(output, 2) >= 0 &&
         ::dup2(socket, kServiceWorkerSocketFd) >= 0;
}

/// A worker of the service with its first host's socket on 3, output on 1 and 2, and its line to
/// the service on 4: serves that host, then goes back to the service and serves each host the
/// service assigns it next, until the service closes the line. Never returns.
[[noreturn]] void serve_hosts(std::string temp_dir) {
  for (;;) {
    const int code = run_worker_session(kServiceWorkerSocketFd, 0, temp_dir);
    if (code != 0) _exit(code);  // a host that broke the protocol: not a worker to reuse
    // Back to the service, holding nothing of the last host.
    if (::dup2(0, kServiceWorkerSocketFd) < 0 || ::dup2(0, 1) < 0 || ::dup2(0, 2) < 0) _exit(0);
    if (!sw::send_message(kServiceWorkerChannelFd, sw::encode_idle(), nullptr, 0, -1)) _exit(0);
    sw::Header header;
    std::vector<std::uint8_t> payload;
    std::vector<UniqueFd> fds;
    if (!sw::read_message(kServiceWorkerChannelFd, -1, &header, &payload, &fds) ||
        header.type != sw::MessageType::kOrder || fds.size() != 2) {
      _exit(0);  // the service is done with us
    }
    const Expected<sw::WorkerOrder> next = sw::decode_order(payload.data(), payload.size());
    if (!next || !take_descriptors(fds[0].get(), fds[1].get()) || !take_order(next.value())) {
      _exit(0);  // the service is done with us
    }
    temp_dir = next->temp_dir;
  }
}

}  // namespace

/// In the forked child, which is single-threaded: takes the first order's descriptors,
/// environment and working directory, then serve_hosts(). Never returns.
[[noreturn]] void become_service_worker(const sw::WorkerOrder& first, int child_socket, int output,
                                        int channel) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP}) std::signal(sig, SIG_DFL);
  const int devnull = ::open("/dev/null", O_RDWR);
  if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(channel, kServiceWorkerChannelFd) < 0 ||
      !take_descriptors(child_socket, output)) {
    _exit(wire::kWorkerExitUsage);
  }
  close_from(kServiceWorkerChannelFd + 1);
  if (!take_order(first)) _exit(wire::kWorkerExitUsage);
  serve_hosts(first.temp_dir);
}

int run_service_worker(const std::string& temp_dir) {
  if (temp_dir.empty() || temp_dir.front() != '/') return wire::kWorkerExitUsage;
  serve_hosts(temp_dir);
}

}  // namespace hipacm::backend
