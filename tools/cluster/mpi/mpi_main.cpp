// SPDX-License-Identifier: MIT
// mpi_main.cpp - hipacm-mpi: the hipacm tool linked with MPI, which `hipacm warmup --mpi` becomes.
#include <fmt/core.h>

#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "hip_backend/service/service_client.h"
#include "support/settings.h"
#include "tools/cluster/mpi/cluster_warmup.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/warmup/warmup_job.h"

int main(int argc, char** argv) {
  using namespace hipacm::cli;
  try {
    MpiSession session(&argc, &argv);
    // One cache per rank when several share a machine: HIPACM_CACHE_DIR may hold %r as
    // --cache-dir may, and is made this rank's before anything reads it.
    namespace settings = hipacm::settings;
    if (const std::optional<std::string> dir = settings::cache_dir())
      settings::put(settings::Id::kCacheDir, with_rank(*dir, session.rank()), /*overwrite=*/true);
    // No compile service for a rank unless HIPACM_ISOLATION's service=on asks for it: the service
    // is keyed by the environment, which differs between ranks (OMPI_COMM_WORLD_RANK, PMIX_RANK,
    // ...), so "auto" would start one service per rank, each lingering after the job. Each rank
    // spawns its own workers instead; the plugin reads this when it enters its first mode.
    if (hipacm::backend::compile_service_setting() == hipacm::backend::CompileServiceSetting::kAuto)
      settings::put_compile_service(settings::CompileService::kOff);
    ClusterRunner cluster;
    cluster.rank = session.rank();
    cluster.run = &run_cluster_warmup;
    return run_tool(argc, argv, &cluster);
  } catch (const std::exception& e) {
    fmt::print(stderr, "hipacm: error: {}\n", e.what());
    return kExitFailures;
  }
}
