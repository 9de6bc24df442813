// SPDX-License-Identifier: MIT
// worker_process.h - one hipacm-worker child process: spawn, compile with a deadline, reap.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// A persistent compile worker. Owned and used by one thread at a time (the
/// pool hands it out); not internally synchronized.
///
/// Fork safety: every descriptor that refers to a worker is recorded in a
/// process-wide registry whose fork() child handler closes them, so a
/// forked child never holds the parent's sockets (which would keep a worker
/// from seeing EOF) and never signals or waits for the parent's children.
class WorkerProcess {
 public:
  /// How long the destructor lets a worker exit on EOF before SIGKILL.
  static constexpr int kGracefulExitMs = 500;
  /// How many bytes of the worker's stdout/stderr are kept for messages.
  static constexpr std::size_t kStderrTailBytes = 4096;

  /// Starts `path` with posix_spawn: a socketpair end on fd 3, stdout and
  /// stderr on a pipe that this object drains, stdin on /dev/null, every other
  /// descriptor closed, default signal dispositions, an empty signal mask and
  /// its own process group (a terminal's Ctrl-C meant for the host does not
  /// kill compiles), and the host's environment with TMPDIR set to a private
  /// directory (PrivateTempDir::kWorkerPrefix, mode 0700) that this object
  /// removes once the worker has exited, however it ended, and with comgr's
  /// own cache off unless the user chose it (comgr_cache_policy.h). The Failure
  /// (BACKEND_UNAVAILABLE) says why it cannot start.
  ///
  /// With service=on in $HIPACM_ISOLATION the worker is ordered from the user's compile service
  /// instead (service_client.h), set up the same way but forked from a process whose compiler
  /// for `arch` is already loaded and warm; when the service cannot be used, the worker is
  /// spawned here as above, and this process stops asking the service.
  static Expected<std::unique_ptr<WorkerProcess>> spawn(const std::string& path,
                                                        const std::string& arch = {});

  /// A worker's environment: the host's (worker_environment()) with TMPDIR set to `temp_dir`
  /// and comgr's cache policy applied.
  static std::vector<std::string> environment_for(const std::string& temp_dir);

  /// Only spawn() can make the key, so only spawn() constructs.
  class Key {
    friend class WorkerProcess;
    Key() = default;
  };
  /// service_control: for a worker of the compile service, the order's connection.
  WorkerProcess(Key, std::string path, pid_t pid, UniqueFd socket, UniqueFd stderr_pipe,
                UniqueFd pidfd, std::unique_ptr<PrivateTempDir> temp_dir,
                UniqueFd service_control = UniqueFd());
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  /// Closes the socket (the worker exits on EOF), waits up to
  /// kGracefulExitMs, then SIGKILLs; always reaps. A usable worker of the compile service is
  /// handed back to the service instead, which keeps it warm for the next process. In a forked
  /// child that inherited this object it only forgets the (already closed) descriptors.
  ~WorkerProcess();

  /// Sends one request and waits for its result, at most `timeout_ms` (0 = no limit) less
  /// `waited_ms`, the part of the compile's limit already spent waiting for a machine-wide slot
  /// (a timeout's message gives the whole limit and that part), draining the worker's stderr
  /// meanwhile. Worker failures are results, not exceptions: TIMEOUT (the worker was killed) and
  /// COMPILER_CRASHED (it died, or sent something that is not a valid response) name the signal
  /// or exit code and quote the stderr tail; after either, usable() is false. May throw
  /// std::bad_alloc.
  CompileResult compile(const CompileRequest& request, std::uint32_t timeout_ms,
                        std::uint32_t waited_ms = 0);

  /// False once the worker has failed; it must then be discarded.
  bool usable() const { return usable_; }
  /// Marks a worker that answered with something hipacm rejected: it is
  /// killed when given back, never trusted with another request.
  void mark_unusable() noexcept { usable_ = false; }

  /// A non-blocking check for an idle worker: drains its stderr and returns
  /// false (and marks it unusable) if it died or wrote to the socket unasked.
  bool probe_idle();

  pid_t pid() const { return pid_; }
  /// The worker's private TMPDIR; empty once the worker has been reaped.
  std::string temp_dir() const { return temp_dir_ ? temp_dir_->path() : std::string(); }
  const std::string& path() const { return path_; }
  /// The last kStderrTailBytes of the worker's stdout and stderr.
  const std::string& stderr_tail() const { return stderr_tail_; }

 private:
  enum class Io { kReady, kTimeout, kClosed, kError };

  /// spawn() up to the worker's registration, under the descriptor registry's lock.
  static Expected<std::unique_ptr<WorkerProcess>> spawn_registered(const std::string& path);
  /// A worker from the compile service; null (and the service is not asked again) when that
  /// fails.
  static std::unique_ptr<WorkerProcess> order_from_service(const std::string& path,
                                                           const std::string& arch);
  struct Deadline;

  Io wait_ready(short events, const Deadline& deadline);
  Io send_all(const std::vector<std::uint8_t>& bytes, const Deadline& deadline);
  Io recv_exact(std::uint8_t* buf, std::size_t size, const Deadline& deadline);
  /// How a read of one response ended, and why when its header was refused.
  struct Received {
    Io io = Io::kReady;
    std::string why;
  };
  Received recv_frame(wire::FrameHeader* header, std::vector<std::uint8_t>* payload,
                      const Deadline& deadline);
  void drain_stderr();
  void signal_kill();
  /// Waits up to grace_ms for the worker to exit, then SIGKILLs it and waits.
  void reap(int grace_ms);
  /// reap() for a worker of the compile service, whose parent is the service: the pidfd says
  /// when it ended, and the service's notice says how.
  void reap_service_worker(int grace_ms);
  /// Removes the worker's private directory once it has been reaped.
  void remove_temp_dir();
  std::string describe_exit() const;
  CompileResult fail(hipacm_status status, const std::string& summary);

  std::string path_;
  pid_t pid_ = -1;
  pid_t owner_pid_ = -1;  ///< getpid() of the process that spawned it
  UniqueFd socket_;
  UniqueFd stderr_pipe_;
  UniqueFd pidfd_;            ///< invalid where pidfd_open is unavailable
  UniqueFd service_control_;  ///< valid for a worker of the compile service
  bool usable_ = true;
  bool reaped_ = false;
  bool failure_logged_ = false;  ///< a warning said how it ended; no retirement line then
  int wait_status_ = 0;
  bool status_known_ = false;
  std::uint32_t next_request_id_ = 0;
  std::string stderr_tail_;
  std::unique_ptr<PrivateTempDir> temp_dir_;
};

}  // namespace hipacm::backend
