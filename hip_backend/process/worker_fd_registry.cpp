// SPDX-License-Identifier: MIT
// worker_fd_registry.cpp - records worker descriptors and closes them in a fork()ed child.
#include "hip_backend/process/worker_fd_registry.h"

#include <unistd.h>

#include <boost/thread/lock_guard.hpp>

#include <algorithm>
#include <vector>

#include "support/fork_epoch.h"

namespace hipacm::backend {
namespace {

struct Registry {
  boost::mutex mutex;
  std::vector<int> fds;
};

// The forking thread holds the mutex (fork() took it first), so no other thread
// of the parent was mid-way through creating or closing a worker fd.
void close_inherited_fds(Registry& r) noexcept {
  for (int fd : r.fds) ::close(fd);
  r.fds.clear();
}

// Never destroyed: a host thread may still close a worker while exit() runs
// static destructors.
Registry& registry() {
  return ForkGuarded<Registry, ForkRank::kWorkerFds, &close_inherited_fds>::instance();
}

}  // namespace

boost::unique_lock<boost::mutex> WorkerFdRegistry::lock() {
  return boost::unique_lock<boost::mutex>(registry().mutex);
}

void WorkerFdRegistry::add_locked(int fd) {
  if (fd >= 0) registry().fds.push_back(fd);
}

void WorkerFdRegistry::close(UniqueFd& fd) {
  if (!fd) return;
  Registry& r = registry();
  boost::lock_guard<boost::mutex> guard(r.mutex);
  r.fds.erase(std::remove(r.fds.begin(), r.fds.end(), fd.get()), r.fds.end());
  fd.reset();
}

std::size_t WorkerFdRegistry::size() {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> guard(r.mutex);
  return r.fds.size();
}

}  // namespace hipacm::backend
