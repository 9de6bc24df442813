// SPDX-License-Identifier: MIT
// worker_rss_monitor.cpp - reads Name, PPid, VmRSS and VmHWM of child processes from /proc.
#include "worker_rss_monitor.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace hipacm::bench::nvidia {
namespace {

struct ProcStatus {
  std::string name;
  long ppid = -1, rss_kib = 0, hwm_kib = 0;
};

long field_value(const std::string& line) {
  const auto at = line.find_first_of("0123456789");
  return at == std::string::npos ? 0 : std::stol(line.substr(at));
}

ProcStatus read_status(const std::filesystem::path& dir) {
  ProcStatus s;
  std::ifstream in(dir / "status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Name:", 0) == 0) {
      s.name = line.substr(line.find_first_not_of(" \t", 5));
    } else if (line.rfind("PPid:", 0) == 0) {
      s.ppid = field_value(line);
    } else if (line.rfind("VmRSS:", 0) == 0) {
      s.rss_kib = field_value(line);
    } else if (line.rfind("VmHWM:", 0) == 0) {
      s.hwm_kib = field_value(line);
    }
  }
  return s;
}

}  // namespace

WorkerRssMonitor::WorkerRssMonitor(unsigned period_ms)
    : sampler_([this, period_ms](std::stop_token stop) {
        while (!stop.stop_requested()) {
          sample();
          std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
        }
        sample();
      }) {}

WorkerRssMonitor::~WorkerRssMonitor() { stop(); }

void WorkerRssMonitor::stop() {
  if (sampler_.joinable()) {
    sampler_.request_stop();
    sampler_.join();
  }
}

/// This process's children, from each thread's /proc children list (workers are spawned from
/// several threads); nullopt where the kernel has no such lists.
std::optional<std::vector<long>> child_pids() {
  std::vector<long> pids;
  std::error_code ec;
  bool any_list = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    if (!in) continue;
    any_list = true;
    for (long pid = 0; in >> pid;) pids.push_back(pid);
  }
  if (!any_list) return std::nullopt;
  return pids;
}

void WorkerRssMonitor::sample() {
  // Reading every process's status costs the measured process real kernel time on a busy
  // machine, so read only the children when the kernel lists them.
  std::vector<std::filesystem::path> candidates;
  if (const auto children = child_pids()) {
    for (const long pid : *children) candidates.push_back("/proc/" + std::to_string(pid));
  } else {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
        candidates.push_back(entry.path());
    }
  }
  const long self = static_cast<long>(getpid());
  long total = 0;
  for (const auto& dir : candidates) {
    const ProcStatus s = read_status(dir);
    if (s.ppid != self || s.name != "hipacm-worker") continue;
    seen_.insert(std::stol(dir.filename().string()));
    total += s.rss_kib;
    if (s.hwm_kib > peak_kib_.load(std::memory_order_relaxed))
      peak_kib_.store(s.hwm_kib, std::memory_order_relaxed);
  }
  if (total > peak_total_kib_.load(std::memory_order_relaxed))
    peak_total_kib_.store(total, std::memory_order_relaxed);
}

}  // namespace hipacm::bench::nvidia
