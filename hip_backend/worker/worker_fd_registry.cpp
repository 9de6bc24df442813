// worker_fd_registry.cpp - records worker descriptors and closes them in a fork()ed child.
#include "hip_backend/worker/worker_fd_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>

#include <algorithm>
#include <vector>

#include "support/no_destructor.h"

namespace hipacm::backend {
namespace {

struct Registry {
  boost::mutex mutex;
  std::vector<int> fds;
};

// Never destroyed: a host thread may still close a worker while exit() runs
// static destructors.
Registry& registry() {
  static NoDestructor<Registry> instance;
  return *instance;
}

extern "C" void registry_prepare() { registry().mutex.lock(); }
extern "C" void registry_parent() { registry().mutex.unlock(); }
extern "C" void registry_child() {
  // The forking thread holds the mutex (prepare took it), so no other thread
  // of the parent was mid-way through creating or closing a worker fd.
  Registry& r = registry();
  for (int fd : r.fds) ::close(fd);
  r.fds.clear();
  r.mutex.unlock();
}

void install_fork_handlers() {
  // A function-local static: thread-safe, runs once, no global constructor.
  static const bool installed =
      pthread_atfork(registry_prepare, registry_parent, registry_child) == 0;
  (void)installed;
}

}  // namespace

boost::unique_lock<boost::mutex> WorkerFdRegistry::lock() {
  install_fork_handlers();
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
