// SPDX-License-Identifier: MIT
// rank_services.h - the compile service a rank of `hipacm warmup --mpi` started, stopped when the
// rank's run ends.
#pragma once

#include <sys/types.h>

#include <string>

namespace hipacm::cli {

/// A rank orders its workers from a compile service only when HIPACM_ISOLATION's service=on asks
/// for it (ranks spawn their own by default). The service is keyed by the rank's environment, so
/// nothing but this rank would ever order from it again, yet it would wait with its warm workers
/// for HIPACM_IDLE_MS after the job. Made before the rank compiles: notes this rank's service
/// socket and whether a service already answered there (one this run did not start is never
/// touched).
class RankServices {
 public:
  RankServices();

  /// Ends the service at this rank's socket when none answered there before the run: SIGTERM
  /// through a pidfd (never a recycled pid), then waits up to 10 s for it to exit, which it does
  /// cleanly, removing its socket and lock. Returns the pid it stopped, or -1 when there was none
  /// to stop. Never throws: a service it cannot stop is left to its idle exit, with a warning.
  pid_t stop_started() noexcept;

  /// The socket looked at ("" when the rank uses no service).
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  bool running_before_ = false;
};

}  // namespace hipacm::cli
