// SPDX-License-Identifier: MIT
// delay_proxy.h - DelayProxy: a TCP proxy on a free 127.0.0.1 port that delays every chunk it
// forwards, or stalls (holds everything, answers nothing); SilentServer: one that never answers.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace hipacm::test {

/// Listens on 127.0.0.1 (port() is free, found by binding port 0) and forwards each connection
/// to 127.0.0.1:target_port, two threads a connection, until destroyed. Each chunk read from
/// either side waits `delay` before it goes on (a round trip costs twice that). While stalled,
/// nothing moves in either direction and a new connection is accepted (so a client's connect
/// succeeds) but never reaches the target nor hears anything back. Every thread polls in short
/// slices and the destructor joins them all and closes every descriptor.
class DelayProxy {
 public:
  explicit DelayProxy(int target_port,
                      std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : target_port_(target_port), delay_ms_(delay.count()) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    if (listener_ < 0 ||
        ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      if (listener_ >= 0) ::close(listener_);
      listener_ = -1;
      return;
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~DelayProxy() {
    stopping_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    for (Pump& pump : pumps_) pump.thread.join();
    for (const int fd : held_) ::close(fd);
    if (listener_ >= 0) ::close(listener_);
  }
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  /// 0 when the proxy could not listen.
  int port() const { return port_; }
  void set_delay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }
  /// Stops (true) or resumes (false) all traffic; connections accepted while stalled stay silent.
  void stall(bool on = true) { stalled_ = on; }
  /// How many connections it has accepted so far.
  std::size_t accepted() const { return accepted_; }

 private:
  /// Both ends of one forwarded connection, closed when the last of its two pumps lets go.
  struct Link {
    int client = -1;
    int upstream = -1;
    ~Link() {
      if (client >= 0) ::close(client);
      if (upstream >= 0) ::close(upstream);
    }
  };
  struct Pump {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  static constexpr int kSliceMs = 10;

  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    return address;
  }

  /// Sleeps `ms` in slices; false when the proxy is stopping.
  bool wait(std::int64_t ms) const {
    for (std::int64_t left = ms; left > 0 && !stopping_; left -= kSliceMs)
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min<std::int64_t>(left, kSliceMs)));
    return !stopping_;
  }

  bool hold_while_stalled() const {
    while (stalled_ && !stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(kSliceMs));
    return !stopping_;
  }

  /// Whether `fd` became ready for `events` within one slice.
  static bool ready(int fd, short events) {
    pollfd one{fd, events, 0};
    return ::poll(&one, 1, kSliceMs) > 0;
  }

  bool send_all(int fd, const char* data, std::size_t size) const {
    while (size > 0 && !stopping_) {
      const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        data += n;
        size -= static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        ready(fd, POLLOUT);
      } else {
        return false;
      }
    }
    return size == 0;
  }

  void pump(const std::shared_ptr<Link>& link, bool to_upstream) const {
    const int from = to_upstream ? link->client : link->upstream;
    const int to = to_upstream ? link->upstream : link->client;
    std::vector<char> buffer(64 * 1024);
    while (hold_while_stalled()) {
      if (!ready(from, POLLIN)) continue;
      // Stalled meanwhile: leave the bytes unread.
      if (stalled_) continue;
      const ssize_t n = ::recv(from, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) {
        ::shutdown(to, SHUT_WR);
        return;
      }
      if (!wait(delay_ms_) || !hold_while_stalled()) return;
      if (!send_all(to, buffer.data(), static_cast<std::size_t>(n))) {
        ::shutdown(from, SHUT_RD);
        return;
      }
    }
  }

  void accept_loop() {
    while (!stopping_) {
      // Join the pumps of connections that have ended, so that threads do not pile up.
      for (auto it = pumps_.begin(); it != pumps_.end();) {
        if (*it->done) {
          it->thread.join();
          it = pumps_.erase(it);
        } else {
          ++it;
        }
      }
      if (!ready(listener_, POLLIN)) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++accepted_;
      if (stalled_ || target_port_ <= 0) {
        held_.push_back(client);
        continue;
      }
      auto link = std::make_shared<Link>();
      link->client = client;
      link->upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_in target = loopback(target_port_);
      if (link->upstream < 0 ||
          ::connect(link->upstream, reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0)
        continue;  // the target is down: the client sees its connection closed
      for (const bool to_upstream : {true, false}) {
        auto done = std::make_shared<std::atomic<bool>>(false);
        pumps_.push_back(Pump{std::thread([this, link, to_upstream, done] {
                                pump(link, to_upstream);
                                *done = true;
                              }),
                              done});
      }
    }
  }

  const int target_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<std::int64_t> delay_ms_;
  std::atomic<bool> stalled_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> accepted_{0};
  std::vector<Pump> pumps_;  ///< the acceptor's, until the destructor has joined it
  std::vector<int> held_;    ///< connections accepted while stalled, never answered
  std::thread acceptor_;
};

/// A server that accepts every connection and never answers: a Redis that hangs.
class SilentServer : public DelayProxy {
 public:
  SilentServer() : DelayProxy(0) { stall(); }
};

}  // namespace hipacm::test
