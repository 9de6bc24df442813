// SPDX-License-Identifier: MIT
// service_internal.h - the compile service's one object: its parts, the workers its hosts hold
// and those waiting for the next host; its members are defined by concept in service_*.cpp,
// worker_handout.cpp and handed_workers.cpp.
#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hip_backend/process/host_limits.h"
#include "support/files/unique_fd.h"
#include "worker/service/order_intake.h"
#include "worker/service/service_common.h"
#include "worker/service/service_socket.h"
#include "worker/service/service_warmup.h"
#include "worker/service/worker_zygote.h"

namespace hipacm::backend::service_internal {

class Service {
 public:
  /// `listener` listens at `socket_path`; compilers write their temporary files in `temp_dir`.
  Service(UniqueFd listener, const std::string& socket_path, std::string temp_dir);

  /// Serves until idle, unreachable or asked to stop; the service process's exit code.
  int run();  // service_loop.cpp

 private:
  /// A worker that a host holds.
  struct Handed {
    UniqueFd connection;  ///< the order's connection: the exit notice goes here; closed = released
    UniqueFd channel;     ///< the worker's line back to the service
    std::set<std::string> warm;  ///< compiler families warm in it
    bool idle = false;           ///< it said its host's socket closed
    Clock::time_point kill_at;   ///< released while busy: killed unless idle by then
  };
  /// A warm worker waiting for its next host.
  struct Stocked {
    pid_t pid = -1;
    UniqueFd channel;
    std::set<std::string> warm;
  };

  static unsigned stock_limit();

  // service_loop.cpp: the main loop.
  /// Drains the signal descriptor and reaps; true when asked to stop.
  bool read_signals();

  // worker_handout.cpp: answering an order with a worker.
  void handle_order(UniqueFd connection, sw::MessageReader& reader);
  /// A worker set up for `order`: from the stock when one there has the order's compiler warm,
  /// else forked. Its host ends go to *host_socket and *output; its pid, or why there is none.
  Expected<pid_t> provide_worker(const sw::WorkerOrder& order, UniqueFd* host_socket,
                                 UniqueFd* output, UniqueFd* channel, std::set<std::string>* warm);

  // handed_workers.cpp: the workers out with hosts, back in the stock, and reaped.
  void reap_children();
  void released(pid_t pid);
  void heard_from(pid_t pid);
  /// A waiting worker said something (it has nothing to say): it died or misbehaved, and goes.
  void stocked_spoke(pid_t pid);
  void to_stock(pid_t pid);
  void kill_overdue();

  // service_exit.cpp: leaving.
  bool exit_if_still_idle();
  /// Removes the socket (if it is still ours) and the temp directory; stocked workers go.
  void leave();
  /// Removes what the service owns: its socket (if still its own), its temp dir, and, when
  /// `start_lock` holds it, the start lock's file.
  void leave(const UniqueFd& start_lock);

  ServiceSocket socket_;
  UniqueFd signals_;
  const std::string lock_path_;
  const std::string temp_dir_;
  const Clock::duration idle_;
  const unsigned max_stock_;
  Clock::time_point last_activity_ = Clock::now();
  OrderIntake intake_;
  std::map<pid_t, Handed> handed_;
  std::vector<Stocked> stock_;  ///< most recently used last
  WarmCompilers warm_;
  /// What a worker forked now starts with; one that took on other limits is its host's alone.
  const HostLimits own_limits_ = capture_host_limits();
  std::set<pid_t> bound_to_host_;  ///< handed workers that took on limits other than the above
  Zygote zygote_;
};

}  // namespace hipacm::backend::service_internal
