// SPDX-License-Identifier: MIT
// worker_exchange.cpp - one request and its reply with a worker under a deadline, its output
// drained meanwhile, the idle check, and the result that names how a failed worker ended.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "hip_backend/pool/worker_process.h"
#include "hip_backend/pool/worker_process_internal.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::backend {
namespace {

using worker_process_internal::errno_text;

}  // namespace

void WorkerProcess::drain_stderr() {
  if (!stderr_pipe_) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(stderr_pipe_.get(), buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<std::size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0) WorkerFdRegistry::close(stderr_pipe_);  // every writer is gone
      return;                                             // EOF, EAGAIN or an error
    }
  }
}

WorkerProcess::Io WorkerProcess::wait_ready(short events, const Deadline& deadline) {
  for (;;) {
    pollfd fds[2] = {{socket_.get(), events, 0}, {stderr_pipe_.get(), POLLIN, 0}};
    const nfds_t count = stderr_pipe_ ? 2 : 1;
    const int n = poll(fds, count, deadline.poll_timeout());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Io::kError;
    }
    if (n == 0) return Io::kTimeout;
    if (count == 2 && fds[1].revents != 0) drain_stderr();
    // Readiness, hang-up and errors all go back to send/recv, which tell them apart.
    if (fds[0].revents != 0) return Io::kReady;
    if (deadline.passed()) return Io::kTimeout;
  }
}

WorkerProcess::Io WorkerProcess::send_all(const std::vector<std::uint8_t>& bytes,
                                          const Deadline& deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(socket_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const Io io = wait_ready(POLLOUT, deadline); io != Io::kReady) return io;
    } else if (errno == EPIPE || errno == ECONNRESET) {
      return Io::kClosed;
    } else if (errno != EINTR) {
      return Io::kError;
    }
  }
  return Io::kReady;
}

WorkerProcess::Io WorkerProcess::recv_exact(std::uint8_t* buf, std::size_t size,
                                            const Deadline& deadline) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::recv(socket_.get(), buf + got, size - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0 || errno == ECONNRESET) {
      return Io::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const Io io = wait_ready(POLLIN, deadline); io != Io::kReady) return io;
    } else if (errno != EINTR) {
      return Io::kError;
    }
  }
  return Io::kReady;
}

WorkerProcess::Received WorkerProcess::recv_frame(wire::FrameHeader* header,
                                                  std::vector<std::uint8_t>* payload,
                                                  const Deadline& deadline) {
  // The socket as the protocol's byte source: each fill polls until the deadline.
  class Source final : public wire::ByteSource {
   public:
    Source(WorkerProcess& worker, const Deadline& deadline)
        : worker_(worker), deadline_(deadline) {}
    bool fill(std::uint8_t* buffer, std::size_t size) override {
      io_ = worker_.recv_exact(buffer, size, deadline_);
      return io_ == Io::kReady;
    }
    Io io() const { return io_; }

   private:
    WorkerProcess& worker_;
    const Deadline& deadline_;
    Io io_ = Io::kReady;
  };
  Source source(*this, deadline);
  wire::FrameReadResult read = wire::read_frame_from(source, header, payload);
  if (read.read == wire::FrameRead::kBadHeader) return {Io::kError, std::move(read.error)};
  return {source.io(), {}};
}

CompileResult WorkerProcess::compile(const CompileRequest& request, std::uint32_t timeout_ms,
                                     std::uint32_t waited_ms) {
  if (!usable_) return fail(HIPACM_ERROR_COMPILER_CRASHED, "hipacm-worker is no longer usable");
  const std::uint32_t id = ++next_request_id_;
  Expected<std::vector<std::uint8_t>> encoded = wire::encode_request_frame(id, request);
  if (!encoded) {
    CompileResult result;  // nothing was sent: the worker stays usable
    result.status = HIPACM_ERROR_INVALID_ARGUMENT;
    result.error_message =
        "request for " + request.source_name + " cannot be sent: " + encoded.failure().message;
    return result;
  }
  std::vector<std::uint8_t> frame = std::move(encoded).value();
  std::string why;
  // What the wait for a slot left of the limit, at least a millisecond (0 means none).
  const Deadline deadline(timeout_ms == 0          ? 0
                          : timeout_ms > waited_ms ? timeout_ms - waited_ms
                                                   : 1);
  // Unusable until a valid response arrives: if an exception (bad_alloc)
  // escapes mid-request, the stream is out of step and the worker must go.
  usable_ = false;
  Io io = send_all(frame, deadline);
  wire::FrameHeader header;
  if (io == Io::kReady) {
    Received received = recv_frame(&header, &frame, deadline);
    io = received.io;
    why = std::move(received.why);
  }

  if (io == Io::kReady) {
    Expected<CompileResult> result = wire::decode_result_frame(header, frame);
    if (!result) {
      why = std::move(result).failure().message;
    } else if (header.request_id == id) {
      usable_ = true;
      return std::move(result).value();
    } else {
      why = "a response to request " + std::to_string(header.request_id) + " instead of " +
            std::to_string(id);
      io = Io::kError;
    }
  }
  const std::string what = "while compiling " + request.source_name;
  std::string summary;
  hipacm_status status = HIPACM_ERROR_COMPILER_CRASHED;
  switch (io) {
    case Io::kTimeout:
      signal_kill();
      status = HIPACM_ERROR_TIMEOUT;
      summary = "compile of " + request.source_name + " timed out after " +
                std::to_string(timeout_ms) + " ms" +
                (waited_ms > 0 ? " (" + std::to_string(std::min(waited_ms, timeout_ms)) +
                                     " ms of it waiting for a machine-wide compile slot)"
                               : std::string()) +
                "; hipacm-worker (pid " + std::to_string(pid_) + ") was killed";
      break;
    case Io::kClosed:
      reap(kGracefulExitMs);  // it closed the socket: it is exiting or dead
      summary = "hipacm-worker (pid " + std::to_string(pid_) + ") " + describe_exit() + " " + what;
      break;
    default:
      if (why.empty()) why = "socket error: " + errno_text(errno);
      signal_kill();
      summary = "hipacm-worker (pid " + std::to_string(pid_) + ") sent an invalid response " +
                what + " (" + why + "); it was killed";
      break;
  }
  // Counted and logged here, in the host: the worker's own log went down with it.
  count(status == HIPACM_ERROR_TIMEOUT ? stats().timeouts : stats().worker_crashes);
  log(LogLevel::kWarning, summary);
  failure_logged_ = true;
  return fail(status, summary);
}

bool WorkerProcess::probe_idle() {
  if (!usable_) return false;
  pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {stderr_pipe_.get(), POLLIN, 0}};
  const nfds_t count = stderr_pipe_ ? 2 : 1;
  int n;
  do {
    n = poll(fds, count, 0);
  } while (n < 0 && errno == EINTR);
  if (count == 2 && fds[1].revents != 0) drain_stderr();
  // An idle worker has nothing to say: readable means EOF (death) or junk.
  if (n < 0 || fds[0].revents != 0) {
    usable_ = false;
    signal_kill();
    reap(kGracefulExitMs);  // killed just now, if it was not dead already: quick
    log(LogLevel::kWarning, "idle hipacm-worker (pid " + std::to_string(pid_) + ") " +
                                describe_exit() + "; another takes its place");
    failure_logged_ = true;
    return false;
  }
  return true;
}

CompileResult WorkerProcess::fail(hipacm_status status, const std::string& summary) {
  usable_ = false;
  reap(kGracefulExitMs);
  drain_stderr();  // after death: everything it wrote is in the pipe now
  // A killed compile's source and headers go now, not when the pool lets go
  // of this object.
  remove_temp_dir();
  CompileResult result;
  result.status = status;
  result.error_message = summary;
  std::string tail = stderr_tail_;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (!tail.empty()) result.error_message += "; its output ended with:\n" + tail;
  return result;
}

}  // namespace hipacm::backend
