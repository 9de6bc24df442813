// SPDX-License-Identifier: MIT
// worker_session.cpp - one worker's life: serves compile requests over its socket until EOF.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hip_backend/code_loading_options.h"
#include "hip_backend/compiler_environment.h"
#include "hip_backend/pch/runtime_header_pch_compile.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/source_name_policy.h"
#include "support/environment.h"
#include "support/settings.h"
#include "worker/session/worker_faults.h"
#include "worker/session/worker_session.h"

namespace {

using hipacm::Expected;
using hipacm::backend::CompileRequest;
using hipacm::backend::CompileResult;
using hipacm::backend::WorkerFault;
namespace wire = hipacm::backend::wire;

// The parent-death signal. Not SIGKILL: Linux sends it when the *thread*
// that spawned us exits, not only when the host process dies, and hosts spawn
// workers from pool threads that come and go. The handler tells the two
// apart with getppid(): a dead thread leaves us with the same parent process.
constexpr int kParentDeathSignal = SIGUSR1;
volatile std::sig_atomic_t g_parent_pid = 0;

extern "C" void on_parent_death(int) {
  // Only async-signal-safe calls here.
  if (getppid() != static_cast<pid_t>(g_parent_pid)) _exit(0);
}

void sleep_ms(long ms) {
  timespec left{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

bool install_parent_death_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_parent_death;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return sigaction(kParentDeathSignal, &sa, nullptr) == 0;
}

/// Dies with the host process, race-free: the check after prctl() catches a
/// parent that died before the signal was armed.
bool arm_parent_death(pid_t parent) {
  g_parent_pid = parent;
  if (!install_parent_death_handler()) return false;
  if (prctl(PR_SET_PDEATHSIG, kParentDeathSignal) != 0) return false;
  return getppid() == parent;
}

/// $HIPACM_WORKER_FAULT, honoured only with the test hooks' switch, $HIPACM_TEST_HOOKS=1.
bool load_faults(std::vector<WorkerFault>* faults) {
  const auto spec = hipacm::settings::worker_fault();
  if (!spec) return true;
  Expected<std::vector<WorkerFault>> parsed = hipacm::backend::parse_worker_faults(*spec);
  if (!parsed) {
    std::fprintf(stderr, "hipacm-worker: %s: %s\n",
                 hipacm::settings::name(hipacm::settings::Id::kWorkerFault),
                 parsed.failure().message.c_str());
    return false;
  }
  *faults = std::move(parsed).value();
  return true;
}

/// The host's request reader refuses these names already; a name that
/// climbs out of the compiler's directory must not reach it by any path.
bool refuse_unsafe_names(const CompileRequest& request, CompileResult* result) {
  const Expected<void> allowed = hipacm::backend::request_names_allowed(request);
  if (allowed) return false;
  result->status = HIPACM_ERROR_INVALID_ARGUMENT;
  result->error_message = "hipacm-worker refused the request: " + allowed.failure().message;
  return true;
}

/// The working directory of one compile: `<private dir>/cwd`, where the private directory is a
/// fresh mkdtemp one in the worker's TMPDIR. The compiler's driver reads files from its working
/// directory that no request names (a `hiprtc_runtime.h.pch` above all, and `../lib/...`): here
/// there are none, whoever started the worker and wherever. Left (to "/") and removed with the
/// compile.
class CompileDirectory {
 public:
  CompileDirectory() {
    auto dir = hipacm::backend::PrivateTempDir::create("hipacm-compile-");
    if (!dir) {
      error_ = std::move(dir).failure().message;
      return;
    }
    dir_ = std::move(dir).value();
    const std::string cwd = dir_->path() + "/cwd";
    if (::mkdir(cwd.c_str(), 0700) != 0 || ::chdir(cwd.c_str()) != 0) {
      error_ = "cannot enter a private working directory " + cwd + ": " + std::strerror(errno);
      return;
    }
    entered_ = true;
  }
  CompileDirectory(const CompileDirectory&) = delete;
  CompileDirectory& operator=(const CompileDirectory&) = delete;
  ~CompileDirectory() {
    if (entered_ && ::chdir("/") != 0) _exit(wire::kWorkerExitUsage);
  }
  bool entered() const { return entered_; }
  const std::string& error() const { return error_; }

 private:
  std::unique_ptr<hipacm::backend::PrivateTempDir> dir_;
  bool entered_ = false;
  std::string error_;
};

CompileResult compile_safely(const CompileRequest& request,
                             std::optional<hipacm::backend::PendingPchBuild>* pending) {
  try {
    const CompileDirectory directory;
    if (!directory.entered()) {
      // Never the directory the worker happened to start in.
      CompileResult result;
      result.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
      result.error_message = "hipacm-worker: " + directory.error();
      return result;
    }
    // The host's compiler variables when it submitted, not those this worker started with: the
    // key was made from them (a host may set CPATH after its workers started).
    if (const Expected<void> applied =
            request.environment.empty()
                ? Expected<void>()
                : hipacm::backend::apply_compiler_environment(request.environment);
        !applied) {
      CompileResult result;
      result.status = HIPACM_ERROR_INVALID_ARGUMENT;
      result.error_message = "hipacm-worker: " + applied.failure().message;
      return result;
    }
    return hipacm::backend::compile_in_worker(request, pending);
  } catch (...) {
    return hipacm::backend::failed_compile(hipacm::failure_from_current_exception("hipacm-worker"));
  }
}

/// Acts out a test fault. Returns only for faults that still produce a result
/// (echo) or keep serving (garbage); *respond says whether to send `result`.
CompileResult inject(const WorkerFault& fault, const CompileRequest& request, int fd,
                     bool* respond) {
  using Kind = WorkerFault::Kind;
  static constexpr const char* kNames[] = {"crash-segv", "abort", "hang", "garbage",  "exit",
                                           "slow-start", "echo",  "spam", "slow-exit"};
  if (fault.kind != Kind::kEcho) {
    std::fprintf(stderr, "hipacm-worker: injecting fault '%s'\n",
                 kNames[static_cast<int>(fault.kind)]);
    std::fflush(stderr);
  }
  CompileResult result;
  *respond = true;
  switch (fault.kind) {
    case Kind::kCrashSegv:
      std::signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
      break;
    case Kind::kAbort:
      std::abort();
    case Kind::kHang:
      for (;;) pause();
    case Kind::kExit:
      _exit(static_cast<int>(fault.value));
    case Kind::kGarbage: {
      static constexpr char kJunk[] = "this is not a hipacm frame \x01\x02\x03\xff\xfe";
      (void)wire::write_all(fd, kJunk, sizeof kJunk);
      *respond = false;
      break;
    }
    case Kind::kSpam:
      // More than a pipe holds: the host must drain while it waits.
      for (long i = 0; i < fault.value; i += 64) {
        std::fputs("hipacm-worker: spam spam spam spam spam spam spam spam spam spam\n", stderr);
      }
      std::fflush(stderr);
      [[fallthrough]];
    case Kind::kSlowStart:
    case Kind::kSlowExit:
    case Kind::kEcho:
      if (fault.kind != Kind::kSpam) sleep_ms(fault.value);
      result.status = HIPACM_SUCCESS;
      result.log = "echo";
      result.code.assign(request.source.begin(), request.source.end());
      result.lowered_names = request.name_expressions;
      result.compile_seconds = static_cast<double>(fault.value) / 1000.0;
      break;
  }
  return result;
}

/// Whether `temp_dir` is this worker's own private TMPDIR, which the host
/// made for it alone: only then may the worker empty it.
bool owns_temp_dir(const std::string& temp_dir) {
  return !temp_dir.empty() && hipacm::backend::environment_value("TMPDIR") == temp_dir;
}

/// The session's slow-start or slow-exit delay in ms, 0 without one.
long session_delay_ms(const std::vector<WorkerFault>& faults, WorkerFault::Kind kind) {
  for (const WorkerFault& f : faults) {
    if (f.kind == kind) return f.value;
  }
  return 0;
}

/// How long a compile service's worker whose host has gone finishes the runtime-header PCH that
/// one of its compiles started, before it goes back to the service.
constexpr long kBuildAfterHostMs = 10000;

/// Waits for `building` to finish, at most `limit_ms`; one still running then is killed.
void finish_build(std::optional<hipacm::backend::PchBuild>* building, long limit_ms) {
  for (long waited = 0; *building && !(*building)->finished() && waited < limit_ms; waited += 10)
    sleep_ms(10);
  building->reset();
}

int serve(int fd, const std::vector<WorkerFault>& faults, const std::string& temp_dir,
          bool service_worker) {
  const bool empty_temp_dir = owns_temp_dir(temp_dir);
  wire::FrameHeader header;
  std::vector<std::uint8_t> payload;
  // Declared before the loop's exits, so that a helper still running is killed and reaped on
  // every one of them.
  std::optional<hipacm::backend::PchBuild> building;
  // Set by a compile whose options may have left code or LLVM settings in this process.
  bool retire = false;
  for (;;) {
    // While a PCH is being built, look after it between polls of the socket; the next request
    // is read as soon as it arrives.
    while (building) {
      if (building->finished()) {
        building.reset();
        break;
      }
      pollfd socket{fd, POLLIN, 0};
      if (::poll(&socket, 1, 20) > 0) break;
    }
    const wire::ReadResult read = wire::read_frame(fd, &header, &payload);
    switch (read.status) {
      case wire::ReadStatus::kEof:
        sleep_ms(session_delay_ms(faults, WorkerFault::Kind::kSlowExit));
        // A PCH started by a host's last compiles is for the hosts after it: killed here, it
        // would be started again, and lost again, by every process that compiles its key last.
        // A service worker's host no longer waits for it; a pool worker's host reaps it now.
        if (service_worker) finish_build(&building, kBuildAfterHostMs);
        // The host is done with us; a worker of the compile service goes back to it on 0 only.
        return retire ? wire::kWorkerExitRetired : 0;
      case wire::ReadStatus::kError:
        std::fprintf(stderr, "hipacm-worker: %s\n", read.error.c_str());
        return hipacm::backend::wire::kWorkerExitProtocolError;
      case wire::ReadStatus::kFrame:
        break;
    }
    if (header.type != wire::FrameType::kCompileRequest) {
      std::fprintf(stderr, "hipacm-worker: expected a compile request frame\n");
      return wire::kWorkerExitProtocolError;
    }
    Expected<CompileRequest> decoded = wire::decode_request(payload.data(), payload.size());
    if (!decoded) {
      std::fprintf(stderr, "hipacm-worker: %s\n", decoded.failure().message.c_str());
      return wire::kWorkerExitProtocolError;
    }
    CompileRequest request = std::move(decoded).value();
    payload = {};  // a large source need not stay resident while we compile
    retire = retire || hipacm::backend::options_leave_compiler_state(request.options);

    bool respond = true;
    CompileResult result;
    std::optional<hipacm::backend::PendingPchBuild> pending;
    if (!refuse_unsafe_names(request, &result)) {
      const WorkerFault* fault = hipacm::backend::match_worker_fault(faults, request);
      result = fault ? inject(*fault, request, fd, &respond) : compile_safely(request, &pending);
    }
    // Nothing of this compile (the source comgr wrote out) outlives it.
    if (empty_temp_dir) hipacm::backend::remove_directory_contents(temp_dir);
    // hipRTC's LLVM may install signal handlers of its own; keep ours armed,
    // and catch a host that died while we were busy.
    if (g_parent_pid != 0) {
      install_parent_death_handler();
      if (getppid() != static_cast<pid_t>(g_parent_pid)) return 0;
    }
    if (!respond) continue;
    Expected<std::vector<std::uint8_t>> frame =
        wire::encode_result_frame(header.request_id, result);
    if (!frame) {
      CompileResult too_big;
      too_big.status = HIPACM_ERROR_INTERNAL;
      too_big.error_message = "hipacm-worker could not send its result: " + frame.failure().message;
      frame = wire::encode_result_frame(header.request_id, too_big);
    }
    // (The short failure result always fits; were it not sent, nothing was written.)
    if (frame && !wire::write_all(fd, frame->data(), frame->size())) {
      // The host went away mid-request; nobody is left to serve.
      return 0;
    }
    // The host has its result; the build runs beside the next requests, never before them.
    if (pending && !building) building.emplace(std::move(*pending));
  }
}

}  // namespace

namespace hipacm::backend {

int run_worker_session(int socket_fd, pid_t parent, const std::string& temp_dir) {
  if (parent > 0 && !arm_parent_death(parent)) return 0;  // the host is already gone

  // Our own process: a vanished host must be EPIPE, never a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  // A crashing compiler should not leave a core of hundreds of MiB in the
  // host's working directory; the host reports the signal instead.
  rlimit core{};
  if (getrlimit(RLIMIT_CORE, &core) == 0) {
    core.rlim_cur = 0;
    setrlimit(RLIMIT_CORE, &core);
  }

  // What the compiler writes (comgr's copies of the source and headers) is
  // readable by this user only, whatever the host's umask.
  umask(077);
  // Out of the host's working directory for good: each compile has one of its own.
  if (::chdir("/") != 0) return wire::kWorkerExitUsage;

  std::vector<WorkerFault> faults;
  if (!load_faults(&faults)) return wire::kWorkerExitUsage;
  sleep_ms(session_delay_ms(faults, WorkerFault::Kind::kSlowStart));
  // A worker of the compile service has no parent to watch: the service owns it.
  return serve(socket_fd, faults, temp_dir, parent == 0);
}

}  // namespace hipacm::backend
