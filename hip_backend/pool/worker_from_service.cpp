// SPDX-License-Identifier: MIT
// worker_from_service.cpp - a worker ordered from the user's compile service, and the
// service= choice of $HIPACM_ISOLATION, given up for the process once the service fails it.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <utility>

#include "hip_backend/pool/worker_process.h"
#include "hip_backend/pool/worker_process_internal.h"
#include "hip_backend/process/host_limits.h"
#include "hip_backend/service/service_client.h"
#include "support/log.h"

namespace hipacm::backend {
namespace {

using worker_process_internal::errno_text;

// Set once the compile service failed this process; it spawns its own workers from then on.
std::atomic<bool> service_given_up{false};
// Set once an unknown service= value was reported.
std::atomic<bool> service_setting_reported{false};

}  // namespace

bool worker_process_internal::use_compile_service() {
  std::string problem;
  compile_service_setting(&problem);
  if (!problem.empty() && !service_setting_reported.exchange(true, std::memory_order_relaxed))
    log(LogLevel::kWarning, problem);
  return compile_service_requested() && !service_given_up.load(std::memory_order_acquire);
}

std::unique_ptr<WorkerProcess> WorkerProcess::order_from_service(const std::string& path,
                                                                 const std::string& arch) {
  std::string why;
  // Two tries: a service that was exiting for idleness as we connected gives way to a new one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto created = PrivateTempDir::create(PrivateTempDir::kWorkerPrefix);
    char cwd[4096];
    if (!created) {
      why = std::move(created).failure().message;
      break;
    }
    std::unique_ptr<PrivateTempDir> temp_dir = std::move(created).value();
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      // A removed working directory (ENOENT) or one too long to name: a worker of our own starts
      // in it all the same, one from the service could not be sent there.
      why = "the working directory cannot be read: " + errno_text(errno);
      break;
    }
    service_wire::WorkerOrder order;
    order.arch = arch;
    order.cwd = cwd;
    order.temp_dir = temp_dir->path();
    order.environment = environment_for(temp_dir->path());
    order.limits = capture_host_limits();  // this thread's, as a worker it spawned would inherit
    Expected<ServiceWorker> ordered = order_service_worker(path, order);
    if (!ordered) why = std::move(ordered).failure().message;
    if (ordered) {
      return std::make_unique<WorkerProcess>(Key(), path, ordered->pid, std::move(ordered->socket),
                                             std::move(ordered->output), std::move(ordered->pidfd),
                                             std::move(temp_dir), std::move(ordered->control));
    }
  }
  // Said once, by whichever thread gave up first.
  if (!service_given_up.exchange(true, std::memory_order_acq_rel)) {
    // Asked for by name it is a warning; by default (auto) a note, since nothing was asked.
    const LogLevel level = compile_service_setting() == CompileServiceSetting::kOn
                               ? LogLevel::kWarning
                               : LogLevel::kInfo;
    log(level, "the compile service cannot be used (" + why +
                   "); this process starts its own hipacm-workers from now on");
  }
  return nullptr;
}

}  // namespace hipacm::backend
