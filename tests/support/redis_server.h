// SPDX-License-Identifier: MIT
// redis_server.h - RedisServer: a private redis-server for one test (127.0.0.1, a free port, a
// random password, no persistence), killed and reaped with its scope; with delay_proxy.h's
// DelayProxy and SilentServer for slow and stalled servers.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/delay_proxy.h"
#include "tests/temp_dir.h"

namespace hipacm::test {

/// Whether the suite runs in CI, where a missing redis-server is a failure, not a skip.
inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

/// Skips the test when redis-server is not installed, or fails it in CI (`CI=true`), where
/// .ci/install-deps installs it. Use it first in a test body or SetUp().
#define HIPACM_REQUIRE_REDIS_SERVER()                                                           \
  do {                                                                                          \
    if (::hipacm::test::RedisServer::executable().empty()) {                                    \
      if (::hipacm::test::running_in_ci()) FAIL() << "redis-server is not installed (CI=true)"; \
      GTEST_SKIP() << "redis-server is not installed (Debian: apt install redis-server)";       \
    }                                                                                           \
  } while (0)

struct RedisServerOptions {
  /// When not empty, the server's maxmemory ("4mb"), with maxmemory-policy noeviction: a full
  /// server refuses writes instead of dropping keys.
  std::string maxmemory;
};

/// A redis-server of this test's own. It listens on 127.0.0.1 only, on a port found free by
/// binding port 0 (another is tried when the server cannot bind it), with a random password in
/// a 0600 config file (never in argv), saves nothing, and works in a temporary directory of its
/// own. running() says whether it answered PING; error() why not.
///
/// Started from the main thread, the server dies with the test process (PR_SET_PDEATHSIG), so a
/// crashed or timed-out test leaves none behind; from another thread it does not, since the
/// signal follows the thread that forked.
class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {}) : options_(std::move(options)) {
    password_ = random_hex(16);
    for (int attempt = 0; attempt < 8 && pid_ < 0; ++attempt) {
      port_ = free_port();
      if (port_ > 0) start();
    }
  }
  ~RedisServer() { kill(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// redis-server's path (PATH, then /usr/bin, /usr/sbin), or "" when it is not installed.
  static std::string executable() {
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("PATH")) {
      std::string all = path;
      for (std::size_t start = 0; start <= all.size();) {
        const std::size_t end = std::min(all.find(':', start), all.size());
        if (end > start) dirs.push_back(all.substr(start, end - start));
        start = end + 1;
      }
    }
    dirs.insert(dirs.end(), {"/usr/bin", "/usr/sbin"});
    for (const std::string& dir : dirs) {
      const std::string candidate = dir + "/redis-server";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
  }

  bool running() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& password() const { return password_; }
  /// redis://:<password>@127.0.0.1:<port> (the password is hex: nothing to escape).
  std::string url() const {
    return "redis://:" + password_ + "@127.0.0.1:" + std::to_string(port_);
  }
  /// The server's log, for a failing test's message.
  std::string log() const {
    std::ifstream in(dir_.path() + "/redis.log");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  /// SIGKILL, then waits for it: no zombie is left. Nothing when not running.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  /// Kills the server (when running) and starts a fresh, empty one on the same port with the
  /// same password. False (with error()) when it did not answer.
  bool restart() {
    kill();
    error_.clear();
    // The old server's port may take a moment to be free again.
    for (int attempt = 0; attempt < 20 && pid_ < 0; ++attempt) {
      if (!start()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return running();
  }

 private:
  static std::string random_hex(std::size_t bytes) {
    std::ifstream random("/dev/urandom", std::ios::binary);
    std::string out;
    static constexpr char kHex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes; ++i) {
      const auto byte = static_cast<unsigned char>(random.get());
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
    return out;
  }

  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
      port = ntohs(address.sin_port);
    ::close(fd);
    return port;
  }

  /// Whether AUTH and PING on 127.0.0.1:port_ answer PONG within half a second.
  bool answers_ping() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const timeval limit{0, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port_));
    bool pong = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      const std::string request = "*2\r\n$4\r\nAUTH\r\n$" + std::to_string(password_.size()) +
                                  "\r\n" + password_ + "\r\n*1\r\n$4\r\nPING\r\n";
      if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
        std::string reply;
        char buffer[256];
        while (!pong && reply.size() < 4096) {
          const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
          if (n <= 0) break;
          reply.append(buffer, static_cast<std::size_t>(n));
          pong = reply.find("+PONG\r\n") != std::string::npos;
        }
      }
    }
    ::close(fd);
    return pong;
  }

  /// Writes the config, starts the server on port_ and waits (up to 10 s) for PING.
  bool start() {
    if (dir_.path().empty()) {
      error_ = "cannot make a temporary directory";
      return false;
    }
    const std::string program = executable();
    if (program.empty()) {
      error_ = "redis-server is not installed";
      return false;
    }
    const std::string config = dir_.path() + "/redis.conf";
    {
      const int fd = ::open(config.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) {
        error_ = "cannot write " + config;
        return false;
      }
      std::string text = "bind 127.0.0.1\nport " + std::to_string(port_) + "\nrequirepass " +
                         password_ + "\nsave \"\"\nappendonly no\ndaemonize no\ndir " +
                         dir_.path() + "\nlogfile " + dir_.path() + "/redis.log\n";
      if (!options_.maxmemory.empty())
        text += "maxmemory " + options_.maxmemory + "\nmaxmemory-policy noeviction\n";
      const bool written =
          ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::close(fd);
      if (!written) {
        error_ = "cannot write " + config;
        return false;
      }
    }
    const std::string null_device = "/dev/null";
    std::vector<char*> argv = {const_cast<char*>(program.c_str()),
                               const_cast<char*>(config.c_str()), nullptr};
    const bool main_thread = ::syscall(SYS_gettid) == ::getpid();
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      error_ = "fork failed";
      return false;
    }
    if (pid == 0) {
      // Async-signal-safe calls only: the test may run threads.
      if (main_thread) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
      }
      const int null_fd = ::open(null_device.c_str(), O_RDWR);
      if (null_fd >= 0) {
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
      }
      // No descriptor of the test (a proxy's listening socket, say) may live on in the server.
      if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
        for (int fd = 3; fd < 4096; ++fd) ::close(fd);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    pid_ = pid;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (answers_ping()) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        // Most likely the port was taken meanwhile; the caller tries another.
        pid_ = -1;
        error_ = "redis-server exited at start (port " + std::to_string(port_) + "): " + log();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    error_ = "redis-server did not answer PING within 10 s: " + log();
    kill();
    return false;
  }

  RedisServerOptions options_;
  TempDir dir_{"hipacm-redis-"};
  std::string password_;
  std::string error_;
  int port_ = -1;
  pid_t pid_ = -1;
};

}  // namespace hipacm::test
