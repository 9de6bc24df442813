// SPDX-License-Identifier: MIT
// cluster_warmup.h - `hipacm warmup --mpi`: one warmup shared out over the ranks of an MPI job.
#pragma once

#include "tools/warmup/warmup_job.h"

namespace hipacm::cli {

/// Runs this rank's part of `job` (collective: every rank of MPI_COMM_WORLD calls it with the
/// same job): agree on the items, find what each cache holds, share the rest out by cost,
/// compile, exchange the code objects into every cache (or only to rank 0's export file), and
/// report the whole job on rank 0. Returns the job's exit status, the same on every rank.
int run_cluster_warmup(const WarmupJob& job);

}  // namespace hipacm::cli
