// SPDX-License-Identifier: MIT
// worker_zygote.h - how the compile service makes a new worker: forked from its warm,
// single-threaded self, else spawned from its own binary; and the ends each worker is given.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/files/unique_fd.h"
#include "worker/service/service_common.h"

namespace hipacm::backend::service_internal {

/// A connected pair for a worker: the host's end non-blocking, the worker's above its fixed fds;
/// and its output pipe, the reading end non-blocking, the writing end above its fixed fds.
Expected<void> make_worker_ends(UniqueFd* host_socket, UniqueFd* child_socket,
                                UniqueFd* output_read, UniqueFd* output_write);

/// Makes the service's new workers.
class Zygote {
 public:
  Zygote();

  /// A new worker for `order`: forked from the service while the service is single-threaded,
  /// else spawned from the service's own binary (a compiler that started threads cannot be forked
  /// safely, and a forked copy of it runs without them). Its host's ends go to *host_socket and
  /// *output, the service's line to it to *channel; its pid, or why it cannot start.
  Expected<pid_t> start_worker(const sw::WorkerOrder& order, UniqueFd* host_socket,
                               UniqueFd* output, UniqueFd* channel);
  /// Whether the service still has its one thread (once not, never again).
  bool single_threaded();

 private:
  Expected<pid_t> spawn_worker(const sw::WorkerOrder& order, int child_socket, int output,
                               int channel);

  /// $HIPACM_SERVICE_FORK=off: always spawn.
  bool can_fork_;
  const std::string self_;
};

}  // namespace hipacm::backend::service_internal
