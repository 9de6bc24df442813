// SPDX-License-Identifier: MIT
// worker_fd_registry.h - the host's worker descriptors, closed in a fork()ed child.
#pragma once

#include <boost/thread/lock_types.hpp>
#include <boost/thread/mutex.hpp>

#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// Every descriptor that refers to a worker (socket, stderr pipe, pidfd) is
/// created, registered, deregistered and closed under one mutex that fork()
/// also takes (support/fork_epoch.h, ForkRank::kWorkerFds). So fork() never copies a
/// half-made worker, and the child handler can close every inherited worker
/// descriptor: a child that kept a copy of a socket would stop that worker
/// from ever seeing EOF. Linux has no close-on-fork flag; this is its stand-in.
class WorkerFdRegistry {
 public:
  /// The lock to hold while creating and registering descriptors. The first
  /// use joins the fork epoch, so call it holding no other fork-held lock.
  static boost::unique_lock<boost::mutex> lock();
  /// Records fd; the caller holds lock().
  static void add_locked(int fd);
  /// Forgets and closes fd, atomically with respect to fork().
  static void close(UniqueFd& fd);
  /// How many descriptors are registered (for tests).
  static std::size_t size();
};

}  // namespace hipacm::backend
