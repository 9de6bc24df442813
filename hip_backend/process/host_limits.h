// SPDX-License-Identifier: MIT
// host_limits.h - a host's resource limits, CPU set and nice value: captured where it orders a
// worker from the compile service, carried in the order within fixed bounds, and applied to the
// service's worker that serves it, as a worker the host spawned itself would inherit them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/bytes/byte_reader.h"
#include "support/failure.h"

namespace hipacm::backend {

struct ResourceLimit {
  std::uint32_t resource = 0;  ///< an RLIMIT_* id
  std::uint64_t soft = 0;      ///< RLIM_INFINITY for none
  std::uint64_t hard = 0;
  bool operator==(const ResourceLimit&) const = default;
};

struct HostLimits {
  std::vector<ResourceLimit> limits;  ///< each RLIMIT_* the kernel has, ascending, once each
  /// The sched_getaffinity() mask, byte i bit j for CPU 8i+j, without trailing zero bytes; empty
  /// when unknown (the worker then keeps its own).
  std::vector<std::uint8_t> cpus;
  std::int32_t nice = 0;
  bool operator==(const HostLimits&) const = default;
};

/// Masks for up to 8192 CPUs.
constexpr std::size_t kMaxCpuMaskBytes = 1024;

/// The calling thread's: what a worker it spawned now would inherit (affinity and nice value
/// are a thread's, and a child takes those of the thread that started it).
HostLimits capture_host_limits();

/// Appends `limits` to an order's bytes.
void encode_host_limits(const HostLimits& limits, std::vector<std::uint8_t>* out);
/// Reads what encode_host_limits() wrote, refusing anything it would not write: unknown or
/// repeated resources, a soft limit above its hard one, an oversized or untrimmed CPU mask, a
/// nice value out of range (INTERNAL, with what was wrong).
Expected<HostLimits> decode_host_limits(ByteReader& in);

/// What a compile service must share with a host to serve it: the hard limits and the nice
/// value, which no worker the service starts can raise above the service's own.
std::string host_limits_service_key(const HostLimits& limits);

/// Whether only a fresh worker may serve a host with these limits: one with a finite CPU time
/// limit, which a worker that has already compiled has partly used up.
bool needs_fresh_worker(const HostLimits& limits);

/// Gives process `pid` (a worker of this user that the caller started) these limits, with the
/// soft RLIMIT_CORE at 0 as every worker sets it, and every thread of it this CPU set and nice
/// value; then reads them back. The Failure says why it cannot take them on (a hard limit above
/// its own, a nice value below its own, CPUs outside its cpuset).
Expected<void> apply_host_limits(pid_t pid, const HostLimits& limits);

}  // namespace hipacm::backend
