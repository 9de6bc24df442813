// SPDX-License-Identifier: MIT
// service_socket.h - the compile service's listening socket, and whether its path still leads to
// it.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/failure.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend::service_internal {

/// The socket a service listens on, at its path in the private runtime directory. A service whose
/// path was removed (its runtime directory went at logout) or taken over by a newer service can
/// no longer be reached, and leaves.
class ServiceSocket {
 public:
  /// Binds and listens on `path` (mode 0600 in the private runtime directory), replacing a dead
  /// service's socket there; the listening descriptor, or why it cannot.
  static Expected<UniqueFd> listen_at(const std::string& path);

  /// `listener` listens at `path`, whose file's identity is taken now.
  ServiceSocket(UniqueFd listener, std::string path);

  int fd() const { return listener_.get(); }
  const std::string& path() const { return path_; }
  /// Whether its path still names the one it listens on (not removed, not taken over).
  bool reachable() const;
  /// Whether a connection waits to be accepted.
  bool connection_waiting() const;
  /// Removes the socket file if it is still its own (a newer service may have taken the name),
  /// and stops listening.
  void close();

 private:
  struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const Identity&) const = default;
  };
  /// The socket file's identity: a listening socket's own fstat() names sockfs, not the file.
  static Identity identity_of(const std::string& path);

  const Identity identity_;
  UniqueFd listener_;
  const std::string path_;
};

}  // namespace hipacm::backend::service_internal
