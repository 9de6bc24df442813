// SPDX-License-Identifier: MIT
// job_agreement.h - steps 1 and 2: the same items on every rank, and what each cache holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/cluster/mpi/cluster_steps.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/warmup/warmup_job.h"

namespace hipacm::cli::cluster_steps {

/// Throws InputError naming a rank that was given other kernels (another count or fingerprint)
/// than this one, JobLost when a rank sent a malformed agreement.
void agree_on_items(Cluster& cluster, std::size_t count, std::uint64_t fingerprint);

/// What the caches hold: held[r][i], rank r's cache holds item i now; and this rank's key of each
/// item, which names what it sends and checks what it receives.
struct CacheMap {
  Held held;
  std::vector<std::string> keys;
};

/// Looks every item up in this rank's cache (as --dry-run does) and shares the bitmaps.
CacheMap what_caches_hold(Cluster& cluster, const WarmupJob& job, std::size_t count);

}  // namespace hipacm::cli::cluster_steps
