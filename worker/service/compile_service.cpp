// SPDX-License-Identifier: MIT
// compile_service.cpp - the compile service's start: its idle time, and how it detaches from its
// starter, makes its temp dir and socket, says it listens, and runs.
#include "worker/service/compile_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "hip_backend/machine/runtime_dir.h"
#include "support/files/unique_fd.h"
#include "support/settings.h"
#include "worker/service/service_internal.h"

namespace hipacm::backend {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

unsigned long compile_service_idle_ms() { return settings::service_idle_ms(); }

int run_compile_service(const std::string& socket_path) {
  if (socket_path.empty() || socket_path.front() != '/') {
    std::fprintf(stderr, "hipacm-worker: compile service: the socket path must be absolute\n");
    return 1;
  }
  if (Expected<void> made = make_runtime_directory(parent_dir(socket_path)); !made) {
    std::fprintf(stderr, "hipacm-worker: compile service: %s\n", made.failure().message.c_str());
    return 1;
  }
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return 1;
  UniqueFd ready_read(ready[0]), ready_write(ready[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid > 0) {
    // The starter: report whether the service listens, then leave it to its own session.
    ready_write.reset();
    char message[512] = {};
    ssize_t n;
    do {
      n = ::read(ready_read.get(), message, sizeof message - 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1 && message[0] == '+') return 0;
    std::fprintf(stderr, "hipacm-worker: compile service: %s\n",
                 n > 0 ? message : "it ended before it listened");
    return 1;
  }
  ready_read.reset();
  // Its own process group, so a Ctrl-C meant for the host that started it passes it by. Not its
  // own session: the scheduler groups tasks by session (autogroup), and sixteen workers in a
  // session of their own would share one task's worth of CPU against every busy host thread.
  ::setpgid(0, 0);
  if (::chdir("/") != 0) return 1;
  auto report = [&](const std::string& text) {
    [[maybe_unused]] const ssize_t w = ::write(ready_write.get(), text.data(), text.size());
  };
  // Compilers write their temporary files here, not in the starter's TMPDIR.
  const std::string temp_dir = socket_path + ".tmp";
  if (Expected<void> made = make_private_directory(temp_dir); !made) {
    report(made.failure().message);
    return 1;
  }
  ::setenv("TMPDIR", temp_dir.c_str(), 1);
  Expected<UniqueFd> listener = service_internal::ServiceSocket::listen_at(socket_path);
  if (!listener) {
    report(listener.failure().message);
    return 1;
  }
  report("+");
  ready_write.reset();
  service_internal::Service service(std::move(listener).value(), socket_path, temp_dir);
  return service.run();
}

}  // namespace hipacm::backend
