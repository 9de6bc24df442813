// SPDX-License-Identifier: MIT
// warmup_job.h - a warmup as the command resolved it, for a runner that spreads it over ranks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/input/kernel_input.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {

/// Everything `hipacm warmup --mpi` resolved and checked on this rank before any compile: the
/// same on every rank, since every rank was given the same arguments.
struct WarmupJob {
  const std::vector<KernelInput>* inputs = nullptr;
  WarmupSettings settings;                  ///< cache_dir with %r already made this rank's
  std::vector<std::string> common_options;  ///< -I, -D and --option, for the report
  std::string json_target;                  ///< "" none, "-" stdout
  std::string gather_to_root;               ///< "" = every rank's cache gets every kernel
  std::string costs_file;                   ///< an earlier --json report, or ""
  bool quiet = false;
  bool verbose = false;
  bool keep_going = false;
  bool keep_services = false;  ///< leave the compile service this rank started running
  std::size_t log_lines = 10;
};

/// The distributed warmup, present only in the MPI-linked helper (hipacm-mpi): the plain tool
/// has none and hands `--mpi` runs to that helper.
struct ClusterRunner {
  int rank = 0;
  int (*run)(const WarmupJob& job) = nullptr;
};

/// `dir` with every "%r" replaced by `rank` and "%%" by "%": one cache directory per rank on a
/// machine that runs several, as a node-local path already is on a real cluster.
std::string with_rank(const std::string& dir, int rank);

}  // namespace hipacm::cli
