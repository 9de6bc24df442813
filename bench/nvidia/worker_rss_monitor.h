// SPDX-License-Identifier: MIT
// worker_rss_monitor.h - samples the peak resident set (VmHWM) of this process's hipacm-worker
// children while a benchmark variant runs.
#pragma once

#include <atomic>
#include <cstddef>
#include <set>
#include <thread>

namespace hipacm::bench::nvidia {

class WorkerRssMonitor {
 public:
  /// Starts sampling /proc every `period_ms` on a background thread. A worker's VmHWM is a high
  /// mark, so a sparse sample still finds each worker's peak; it only has to see the worker.
  explicit WorkerRssMonitor(unsigned period_ms = 50);
  ~WorkerRssMonitor();
  WorkerRssMonitor(const WorkerRssMonitor&) = delete;
  WorkerRssMonitor& operator=(const WorkerRssMonitor&) = delete;

  /// Stops sampling (idempotent); call before reading the results.
  void stop();
  /// The largest VmHWM of any single worker seen, in KiB.
  long peak_worker_kib() const { return peak_kib_.load(std::memory_order_relaxed); }
  /// The largest sum of VmRSS over all workers at one sample, in KiB.
  long peak_total_kib() const { return peak_total_kib_.load(std::memory_order_relaxed); }
  /// Distinct worker processes seen.
  std::size_t workers_seen() const { return seen_.size(); }

 private:
  void sample();

  std::atomic<long> peak_kib_{0};
  std::atomic<long> peak_total_kib_{0};
  std::set<long> seen_;  // written by the sampler only; read after stop() joined it
  std::jthread sampler_;
};

}  // namespace hipacm::bench::nvidia
