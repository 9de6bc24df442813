// SPDX-License-Identifier: MIT
// main.cpp - hipacm-worker's command line: a worker of one host, or the compile service.
//
// Usage: hipacm-worker --fd N --parent-pid P [--temp-dir DIR]
//        hipacm-worker --service SOCKET
//        hipacm-worker --service-worker TEMP_DIR   (started by the service)
//        hipacm-worker --emit-header-pch DIR ARCH [OPTION...]   (started by a worker)
// The host spawns a worker (worker_process.cpp) with a socket on fd N, stdout and stderr on a
// pipe that the host reads, stdin on /dev/null, and TMPDIR set to DIR, a private directory that
// the host made for it and removes after it. A host that uses the compile service starts it
// (service_client.cpp) and orders workers from it instead.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "hip_backend/pch/runtime_header_pch_compile.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "worker/service/compile_service.h"
#include "worker/service/service_worker.h"
#include "worker/session/worker_session.h"

namespace {

bool parse_int(std::string_view text, long* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

int usage() {
  std::fprintf(stderr,
               "usage: hipacm-worker --fd N --parent-pid P [--temp-dir DIR]\n"
               "       hipacm-worker --service SOCKET\n"
               "hipacm-worker is started by the hipacm plugin; it is not meant to be run "
               "by hand.\n");
  return hipacm::backend::wire::kWorkerExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--service") {
    return hipacm::backend::run_compile_service(argv[2]);
  }
  if (argc >= 2 && std::string_view(argv[1]) == hipacm::backend::kEmitHeaderPchFlag) {
    // A one-shot process: the compiler's exit handlers (and a leak checker's report on what
    // hipRTC keeps for the process's life) have nothing to add to its exit code.
    const int code = hipacm::backend::run_runtime_header_pch_helper(argc, argv);
    std::fflush(nullptr);
    _exit(code);
  }
  if (argc == 3 && std::string_view(argv[1]) == "--service-worker") {
    return hipacm::backend::run_service_worker(argv[2]);
  }
  long fd = -1, parent = -1;
  std::string temp_dir;
  bool usage_ok = argc == 5 || argc == 7;
  for (int i = 1; usage_ok && i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--temp-dir") {
      temp_dir = argv[i + 1];
      usage_ok = !temp_dir.empty() && temp_dir.front() == '/';
      continue;
    }
    long* target = flag == "--fd" ? &fd : flag == "--parent-pid" ? &parent : nullptr;
    usage_ok = target && parse_int(argv[i + 1], target);
  }
  if (!usage_ok || fd < 0 || parent <= 0) return usage();
  return hipacm::backend::run_worker_session(static_cast<int>(fd), static_cast<pid_t>(parent),
                                             temp_dir);
}
