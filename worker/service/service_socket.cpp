// SPDX-License-Identifier: MIT
// service_socket.cpp - listening on the compile service's socket, and checking that its path
// still leads to it.
#include "worker/service/service_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "worker/service/service_common.h"

namespace hipacm::backend::service_internal {

Expected<UniqueFd> ServiceSocket::listen_at(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    return Failure{HIPACM_ERROR_INTERNAL, "socket path " + path + " is too long"};
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) {
    return Failure{HIPACM_ERROR_INTERNAL, "socket: " + errno_text()};
  }
  ::unlink(path.c_str());  // a dead service's socket; the starter holds the start lock
  const mode_t old_mask = ::umask(077);
  const int bound = ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(listener.get(), 128) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot listen on " + path + ": " + errno_text()};
  }
  return listener;
}

ServiceSocket::ServiceSocket(UniqueFd listener, std::string path)
    : identity_(identity_of(path)), listener_(std::move(listener)), path_(std::move(path)) {}

ServiceSocket::Identity ServiceSocket::identity_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino};
}

bool ServiceSocket::reachable() const {
  return identity_.ino != 0 && identity_of(path_) == identity_;
}

bool ServiceSocket::connection_waiting() const {
  pollfd pending{listener_.get(), POLLIN, 0};
  return ::poll(&pending, 1, 0) > 0;
}

void ServiceSocket::close() {
  // Only our own socket: a newer service may have taken the name.
  if (reachable()) ::unlink(path_.c_str());
  listener_.reset();
}

}  // namespace hipacm::backend::service_internal
