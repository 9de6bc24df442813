// SPDX-License-Identifier: MIT
// host_limits.cpp - captures a host's rlimits, CPU set and nice value, carries them in a compile
// service order, and applies them to the worker that serves the host.
#include "hip_backend/process/host_limits.h"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace hipacm::backend {
namespace {

// Every resource the kernel limits: a worker the host spawns inherits them all.
constexpr std::uint32_t kResources = RLIMIT_NLIMITS;
constexpr std::int32_t kMinNice = -20;
constexpr std::int32_t kMaxNice = 19;

std::string errno_text() { return std::strerror(errno); }

struct CpuSetFree {
  void operator()(cpu_set_t* set) const { CPU_FREE(set); }
};
using CpuSet = std::unique_ptr<cpu_set_t, CpuSetFree>;
constexpr std::size_t kMaxCpus = kMaxCpuMaskBytes * 8;

CpuSet new_cpu_set() {
  CpuSet set(CPU_ALLOC(kMaxCpus));
  if (set) CPU_ZERO_S(CPU_ALLOC_SIZE(kMaxCpus), set.get());
  return set;
}

/// Thread `tid`'s CPU set as a trimmed byte mask; empty when it cannot be read.
std::vector<std::uint8_t> cpu_mask_of(pid_t tid) {
  const CpuSet set = new_cpu_set();
  const std::size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  if (!set || ::sched_getaffinity(tid, size, set.get()) != 0) return {};
  std::vector<std::uint8_t> mask;
  for (std::size_t cpu = 0; cpu < kMaxCpus; ++cpu) {
    if (!CPU_ISSET_S(cpu, size, set.get())) continue;
    mask.resize(cpu / 8 + 1, 0);
    mask[cpu / 8] = static_cast<std::uint8_t>(mask[cpu / 8] | (1u << (cpu % 8)));
  }
  return mask;
}

bool nice_of(pid_t tid, std::int32_t* nice) {
  errno = 0;
  const int value = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (value == -1 && errno != 0) return false;
  *nice = value;
  return true;
}

/// The ids of the threads of `pid` now.
std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::unique_ptr<DIR, int (*)(DIR*)> tasks(::opendir(dir.c_str()), ::closedir);
  if (!tasks) return {pid};
  while (const dirent* entry = ::readdir(tasks.get())) {
    char* end = nullptr;
    const long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  return tids;
}

void put_le(std::vector<std::uint8_t>* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

std::string resource_name(std::uint32_t resource) {
  switch (resource) {
    case RLIMIT_AS:
      return "RLIMIT_AS";
    case RLIMIT_CPU:
      return "RLIMIT_CPU";
    case RLIMIT_DATA:
      return "RLIMIT_DATA";
    case RLIMIT_STACK:
      return "RLIMIT_STACK";
    case RLIMIT_NOFILE:
      return "RLIMIT_NOFILE";
    case RLIMIT_NPROC:
      return "RLIMIT_NPROC";
    default:
      return "resource " + std::to_string(resource);
  }
}

}  // namespace

HostLimits capture_host_limits() {
  HostLimits host;
  for (std::uint32_t resource = 0; resource < kResources; ++resource) {
    rlimit limit{};
    if (::getrlimit(static_cast<__rlimit_resource_t>(resource), &limit) != 0) continue;
    host.limits.push_back({resource, limit.rlim_cur, limit.rlim_max});
  }
  // 0: the calling thread, whose settings a child it spawns takes.
  host.cpus = cpu_mask_of(0);
  if (!nice_of(0, &host.nice)) host.nice = 0;
  return host;
}

void encode_host_limits(const HostLimits& limits, std::vector<std::uint8_t>* out) {
  put_le(out, limits.limits.size(), 1);
  for (const ResourceLimit& limit : limits.limits) {
    put_le(out, limit.resource, 4);
    put_le(out, limit.soft, 8);
    put_le(out, limit.hard, 8);
  }
  put_le(out, limits.cpus.size(), 2);
  out->insert(out->end(), limits.cpus.begin(), limits.cpus.end());
  put_le(out, static_cast<std::uint32_t>(limits.nice), 4);
}

Expected<HostLimits> decode_host_limits(ByteReader& in) {
  const auto bad = [](std::string why) { return Failure{HIPACM_ERROR_INTERNAL, std::move(why)}; };
  HostLimits host;
  std::uint8_t count = 0;
  if (!in.le(&count) || count > kResources) {
    return bad("bad resource limit count");
  }
  for (std::uint8_t i = 0; i < count; ++i) {
    ResourceLimit limit;
    if (!in.le(&limit.resource) || !in.le(&limit.soft) || !in.le(&limit.hard)) {
      return bad("short resource limit");
    }
    // Ascending and once each: the one encoding of a set, and no resource this kernel lacks.
    if (limit.resource >= kResources ||
        (!host.limits.empty() && limit.resource <= host.limits.back().resource)) {
      return bad("unknown or repeated resource limit " + std::to_string(limit.resource));
    }
    if (limit.soft > limit.hard) {  // RLIM_INFINITY is the largest value
      return bad("a soft resource limit above its hard limit");
    }
    host.limits.push_back(limit);
  }
  std::uint16_t mask_bytes = 0;
  const std::uint8_t* mask = nullptr;
  if (!in.le(&mask_bytes) || mask_bytes > kMaxCpuMaskBytes || !in.take(mask_bytes, &mask) ||
      (mask_bytes > 0 && mask[mask_bytes - 1] == 0)) {
    return bad("bad CPU set");
  }
  host.cpus.assign(mask, mask + mask_bytes);
  std::uint32_t nice = 0;
  if (!in.le(&nice)) {
    return bad("short nice value");
  }
  host.nice = static_cast<std::int32_t>(nice);
  if (host.nice < kMinNice || host.nice > kMaxNice) {
    return bad("nice value out of range");
  }
  return host;
}

std::string host_limits_service_key(const HostLimits& limits) {
  std::string key = "hard limits";
  for (const ResourceLimit& limit : limits.limits) {
    key += ' ';
    key += std::to_string(limit.resource);
    key += ':';
    key += std::to_string(limit.hard);
  }
  key += "\nnice ";
  key += std::to_string(limits.nice);
  key += '\n';
  return key;
}

bool needs_fresh_worker(const HostLimits& limits) {
  for (const ResourceLimit& limit : limits.limits) {
    if (limit.resource == RLIMIT_CPU) return limit.soft != RLIM_INFINITY;
  }
  return false;
}

Expected<void> apply_host_limits(pid_t pid, const HostLimits& limits) {
  const auto refused = [](std::string why) {
    return Failure{HIPACM_ERROR_INTERNAL, std::move(why)};
  };
  for (const ResourceLimit& limit : limits.limits) {
    const auto resource = static_cast<__rlimit_resource>(limit.resource);
    rlimit wanted{limit.soft, limit.hard};
    // A crashing compiler leaves no core; the worker's session sets the same.
    if (limit.resource == RLIMIT_CORE) wanted.rlim_cur = 0;
    rlimit now{};
    if (::prlimit(pid, resource, &wanted, nullptr) != 0 ||
        ::prlimit(pid, resource, nullptr, &now) != 0) {
      return refused("the worker cannot take on this process's " + resource_name(limit.resource) +
                     " (" + errno_text() + ")");
    }
    if (now.rlim_cur != wanted.rlim_cur || now.rlim_max != wanted.rlim_max) {
      return refused("the worker did not take on this process's " + resource_name(limit.resource));
    }
  }
  CpuSet set;
  const std::size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  if (!limits.cpus.empty()) {
    set = new_cpu_set();
    if (!set) {
      return Failure{HIPACM_ERROR_OUT_OF_MEMORY, "out of memory"};
    }
    for (std::size_t cpu = 0; cpu < limits.cpus.size() * 8; ++cpu) {
      if ((limits.cpus[cpu / 8] >> (cpu % 8)) & 1u) CPU_SET_S(cpu, size, set.get());
    }
  }
  // Affinity and nice value are each thread's. Twice over: a thread that one started while the
  // first pass ran took its creator's old settings.
  for (int pass = 0; pass < 2; ++pass) {
    for (const pid_t tid : threads_of(pid)) {
      if (set) {
        if (::sched_setaffinity(tid, size, set.get()) != 0) {
          if (errno == ESRCH) continue;  // the thread ended
          return refused("the worker cannot take on this process's CPU set (" + errno_text() + ")");
        }
        // The kernel keeps only the CPUs of the worker's cpuset, silently.
        const std::vector<std::uint8_t> now = cpu_mask_of(tid);
        if (now.empty()) continue;  // the thread ended
        if (now != limits.cpus) {
          return refused("the worker cannot take on this process's CPU set (outside its cpuset)");
        }
      }
      std::int32_t nice = 0;
      if (!nice_of(tid, &nice) || nice == limits.nice) continue;  // ended, or already so
      if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), limits.nice) != 0) {
        if (errno == ESRCH) continue;
        return refused("the worker cannot take on this process's nice value " +
                       std::to_string(limits.nice) + " (" + errno_text() + ")");
      }
      if (nice_of(tid, &nice) && nice != limits.nice) {
        return refused("the worker did not take on this process's nice value");
      }
    }
  }
  return {};
}

}  // namespace hipacm::backend
