// SPDX-License-Identifier: MIT
// entry_exchange.h - step 5: entries go to the ranks that lack them, in bounded rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tools/cluster/cluster_messages.h"
#include "tools/cluster/mpi/job_agreement.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_job.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli::cluster_steps {

/// $HIPACM_MPI_ROUND_BYTES: what one exchange round may send from a rank (and so what a rank
/// receives in one, from all ranks together). Read on every rank; each bounds its own sends.
/// InputError for a value that is not a byte count from 4 KiB to kMaxMessageBytes.
std::uint64_t exchange_round_bytes();

/// Sends this rank's entries (`result`'s successes, read back from its cache) to their receivers
/// and stores what arrives, each checked against `map`'s key; counts it all in `report`. With
/// --gather-to-root, rank 0 then writes the export file and sets *gathered to the entries it
/// holds. Returns the number of rounds, the same on every rank.
std::size_t exchange_entries(Cluster& cluster, const WarmupJob& job,
                             const std::vector<JobItem>& items, const ShardPlan& plan,
                             const CacheMap& map, const WarmupResult& result,
                             std::uint64_t round_bytes, RankReport* report, std::size_t* gathered);

}  // namespace hipacm::cli::cluster_steps
