// SPDX-License-Identifier: MIT
// service_client.cpp - connects to (or starts) the user's compile service and orders a worker.
#include "hip_backend/service/service_client.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/process/adopted_services.h"
#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/host_limits.h"
#include "hip_backend/process/spawn_setup.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "hip_backend/service/service_start_lock.h"
#include "support/bytes/sha256.h"
#include "support/c_strings.h"
#include "support/environment.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

namespace sw = service_wire;

// Waiting for another process that is starting the service.
constexpr int kStartLockWaitMs = 30000;
constexpr int kOrderSendMs = 5000;
// The first order of a new service waits for its compiler to load and run once.
constexpr int kReplyWaitMs = 120000;
// Once the reply is readable, the rest of it is already there.
constexpr int kReplyReadMs = 5000;

/// Variables that change nothing a warm compiler process holds: those that differ between shells
/// of one session, the worker's own TMPDIR and test hooks (a forked worker takes the orderer's
/// values of all of them), and hipacm's host-side settings. Of hipacm's own variables only the
/// compiler libraries (HIPACM_*_LIBRARY) and HIPACM_SERVICE_FORK shape what the service does.
bool irrelevant_to_workers(std::string_view entry) {
  static constexpr std::string_view kNames[] = {"PWD=", "OLDPWD=", "SHLVL=", "_=", "TMPDIR="};
  if (std::any_of(std::begin(kNames), std::end(kNames),
                  [&](std::string_view name) { return entry.starts_with(name); })) {
    return true;
  }
  if (!entry.starts_with("HIPACM_")) return false;
  const std::string_view name = entry.substr(0, entry.find('='));
  return !name.ends_with("_LIBRARY") && name != settings::name(settings::Id::kServiceFork);
}

/// A non-blocking connection to `path`, registered; errno tells why not.
UniqueFd connect_to(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  auto registry = WorkerFdRegistry::lock();
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int err = errno;
    fd.reset();
    errno = err;
    return fd;
  }
  if (!set_nonblocking(fd.get())) return UniqueFd();
  WorkerFdRegistry::add_locked(fd.get());
  return fd;
}

void close_registered(UniqueFd& fd) {
  if (fd) WorkerFdRegistry::close(fd);
}

/// Why the compile service cannot be used (the caller then spawns its own worker).
Failure unusable(std::string why) {
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(why)};
}

/// Runs `hipacm-worker --service SOCKET` and waits until it listens (its starter exits 0) or
/// gives up (anything else).
Expected<void> start_service(const std::string& worker_path, const std::string& socket_path,
                             const std::vector<std::string>& environment) {
  std::vector<char*> envp = exec_strings(environment);
  SpawnSetup setup;
  bool ok = setup.ok() &&
            posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0) == 0 &&
            posix_spawn_file_actions_addopen(setup.actions(), 1, "/dev/null", O_WRONLY, 0) == 0 &&
            setup.default_signals();
  // Its stderr says why it could not listen; it carries nothing else.
  int message[2] = {-1, -1};
  ok = ok && ::pipe2(message, O_CLOEXEC) == 0;
  UniqueFd message_read(message[0]), message_write(message[1]);
  ok = ok && posix_spawn_file_actions_adddup2(setup.actions(), message_write.get(), 2) == 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  ok = ok && posix_spawn_file_actions_addclosefrom_np(setup.actions(), 3) == 0;
#endif
  pid_t pid = -1;
  const char* argv[] = {worker_path.c_str(), "--service", socket_path.c_str(), nullptr};
  const int rc = ok ? posix_spawn(&pid, worker_path.c_str(), setup.actions(), setup.attr(),
                                  const_cast<char* const*>(argv), envp.data())
                    : ENOMEM;
  message_write.reset();
  if (rc != 0)
    return unusable("cannot start the compile service: " + std::string(std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  char text[512] = {};
  const ssize_t n = ::read(message_read.get(), text, sizeof text - 1);
  std::string said = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
  while (!said.empty() && said.back() == '\n') said.pop_back();
  return unusable("the compile service did not start" +
                  (said.empty() ? std::string() : ": " + said));
}

/// A connection to the service at `socket_path`, starting it when no one listens there. One
/// process starts it; the others wait on the start lock and then connect.
Expected<UniqueFd> connect_or_start(const std::string& worker_path, const std::string& socket_path,
                                    const std::vector<std::string>& environment) {
  UniqueFd connection = connect_to(socket_path);
  if (connection) return connection;
  if (errno != ENOENT && errno != ECONNREFUSED) {
    return unusable("cannot connect to the compile service at " + socket_path + ": " +
                    std::strerror(errno));
  }
  const Expected<UniqueFd> lock = lock_service_start(socket_path + ".lock", kStartLockWaitMs);
  if (!lock) return lock.failure();
  connection = connect_to(socket_path);
  if (connection) return connection;  // the lock goes with `lock`
  if (Expected<void> started = start_service(worker_path, socket_path, environment); !started)
    return std::move(started).failure();
  connection = connect_to(socket_path);
  if (!connection) return unusable("the compile service started but refuses connections");
  ucred peer{};
  socklen_t size = sizeof peer;
  if (::getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0)
    adopt_started_service(peer.pid);
  return connection;
}

}  // namespace

CompileServiceSetting compile_service_setting(std::string* problem) {
  settings::Parsed<settings::CompileService> setting = settings::compile_service();
  if (problem && !setting.problem.empty()) *problem = std::move(setting.problem);
  return setting.value;
}

std::string compile_service_auto_declined() {
  if (::getpid() == 1) return "this process is PID 1 and would adopt the compile service";
  int subreaper = 0;
  if (::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && subreaper != 0)
    return "this process is a child subreaper and would adopt the compile service";
  return "";
}

bool compile_service_requested() {
  if (privileged_process()) return false;
  switch (compile_service_setting()) {
    case CompileServiceSetting::kOn:
      return true;
    case CompileServiceSetting::kAuto:
      return compile_service_auto_declined().empty();
    case CompileServiceSetting::kOff:
      break;
  }
  return false;
}

Expected<std::string> compile_service_socket(const std::string& worker_path,
                                             const std::vector<std::string>& environment) {
  const std::string dir = runtime_dir_from_environment();
  if (Expected<void> made = make_runtime_directory(dir); !made)
    return unusable(std::move(made).failure().message);
  struct stat st {};
  if (::stat(worker_path.c_str(), &st) != 0) {
    return unusable("cannot inspect " + worker_path + ": " + std::strerror(errno));
  }
  // The binary's identity: a rebuilt or upgraded worker gets a new service.
  std::string key = "hipacm-compile-service 1\n" + worker_path + "\n" + std::to_string(st.st_dev) +
                    ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
                    "\n" + std::to_string(::geteuid()) + "\n";
  std::vector<std::string> relevant;
  for (const std::string& entry : environment) {
    if (!irrelevant_to_workers(entry)) relevant.push_back(entry);
  }
  std::sort(relevant.begin(), relevant.end());
  for (const std::string& entry : relevant) key += entry + '\0';
  // A worker takes on its host's limits, CPU set and nice value, but no process can raise its
  // hard limits or lower its nice value: a host gets a service that shares those.
  key += host_limits_service_key(capture_host_limits());
  const std::string path =
      dir + "/compile-service-" + sha256_hex(key.data(), key.size()).substr(0, 16) + ".sock";
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return unusable("the compile service's socket path " + path + " is too long for a Unix socket");
  }
  return path;
}

pid_t compile_service_pid(const std::string& socket_path) {
  if (socket_path.empty() || socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) return -1;
  UniqueFd connection = connect_to(socket_path);
  if (!connection) return -1;
  ucred peer{};
  socklen_t size = sizeof peer;
  const bool known = ::getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
                     peer.uid == ::geteuid();
  close_registered(connection);  // at once: the service reads it as an order that never came
  return known ? peer.pid : -1;
}

Expected<ServiceWorker> order_service_worker(const std::string& worker_path,
                                             const sw::WorkerOrder& order) {
  reap_adopted_services();  // a service this process adopted may have exited since
  Expected<std::string> socket = compile_service_socket(worker_path, order.environment);
  if (!socket) return std::move(socket).failure();
  const std::string& socket_path = socket.value();
  Expected<std::vector<std::uint8_t>> bytes = sw::encode_order(order);
  if (!bytes) return unusable(std::move(bytes).failure().message);
  Expected<UniqueFd> control = connect_or_start(worker_path, socket_path, order.environment);
  if (!control) return std::move(control).failure();
  ServiceWorker worker;
  worker.control = std::move(control).value();
  auto fail = [&](std::string text) -> Expected<ServiceWorker> {
    close_registered(worker.control);
    return unusable(std::move(text));
  };
  ucred peer{};
  socklen_t size = sizeof peer;
  if (::getsockopt(worker.control.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
      peer.uid != ::geteuid()) {
    return fail("the compile service socket " + socket_path + " belongs to another user");
  }
  if (Expected<void> sent =
          sw::send_message(worker.control.get(), bytes.value(), nullptr, 0, kOrderSendMs);
      !sent) {
    return fail("cannot send the order: " + sent.failure().message);
  }
  // Wait without the registry's lock: a first order waits for the compiler to warm up.
  pollfd p{worker.control.get(), POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, kReplyWaitMs);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return fail("the compile service did not answer the order in time");
  sw::Header header;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> fds;
  {
    // The handed descriptors are registered before any fork() can copy them.
    auto registry = WorkerFdRegistry::lock();
    sw::ReadResult read =
        sw::read_message(worker.control.get(), kReplyReadMs, &header, &payload, &fds);
    if (!read) {
      registry.unlock();
      return fail(read.error.empty() ? "the compile service closed the connection"
                                     : std::move(read.error));
    }
    for (const UniqueFd& fd : fds) WorkerFdRegistry::add_locked(fd.get());
  }
  auto forget = [&] {
    for (UniqueFd& fd : fds) close_registered(fd);
  };
  Expected<sw::OrderReply> decoded =
      header.type == sw::MessageType::kReply
          ? sw::decode_reply(payload.data(), payload.size())
          : Expected<sw::OrderReply>(Failure{HIPACM_ERROR_INTERNAL, ""});
  if (!decoded) {
    forget();
    return fail("a bad reply from the compile service: " + decoded.failure().message);
  }
  const sw::OrderReply& reply = decoded.value();
  if (!reply.ok || fds.size() != sw::kReplyDescriptors) {
    forget();
    return fail("the compile service refused the order: " +
                (reply.error.empty() ? std::string("no worker came with its reply") : reply.error));
  }
  worker.pid = reply.pid;
  worker.socket = std::move(fds[0]);
  worker.output = std::move(fds[1]);
  worker.pidfd = std::move(fds[2]);
  return worker;
}

}  // namespace hipacm::backend
