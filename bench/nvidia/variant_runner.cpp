// SPDX-License-Identifier: MIT
// variant_runner.cpp - the variants themselves: a plain NVRTC or hipRTC loop and hipacm modes.
#include "variant_runner.h"

#include <sys/resource.h>
#include <hipacm/hipacm.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "bench/common/kernel_request.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"

#include "machine_ceiling.h"
#include "nvrtc_library.h"
#include "worker_rss_monitor.h"

namespace hipacm::bench::nvidia {
namespace {

using Clock = std::chrono::steady_clock;

/// `count` distinct trivial kernels: compiling them first pays every one-time cost (library
/// load, NVRTC's first-use initialization, worker start-up) outside the timed region.
std::vector<SetKernel> warm_up_set(std::size_t count) {
  std::vector<SetKernel> set;
  for (std::size_t i = 0; i < count; ++i) {
    SetKernel k;
    k.file = "warm_up_" + std::to_string(i) + ".cu";
    k.source = "extern \"C\" __global__ void warm_up_" + std::to_string(i) +
               "(float* x) { x[threadIdx.x] += " + std::to_string(i) + ".0f; }\n";
    set.push_back(std::move(k));
  }
  return set;
}

VariantRun run_serial_nvrtc(const std::vector<SetKernel>& set, const std::string& arch, bool warm) {
  VariantRun run;
  const NvrtcLibrary nvrtc;
  if (warm)
    for (const auto& k : warm_up_set(1)) nvrtc.compile_to_cubin(k, arch);
  const auto start = Clock::now();
  for (const auto& k : set) {
    try {
      nvrtc.compile_to_cubin(k, arch);
      ++run.ok;
    } catch (const std::exception& e) {
      if (run.failed++ == 0) run.error = e.what();
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

/// The AMD baseline: hipRTC (loaded with dlopen, like hipacm's workers load it) in this process,
/// one compile after another. As with NVRTC, the library is loaded before the clock starts and
/// its first-use initialization falls in the first compile.
VariantRun run_serial_hiprtc(const std::vector<SetKernel>& set, const std::string& arch,
                             bool warm) {
  VariantRun run;
  if (const auto loaded = backend::load_hiprtc(); !loaded)
    throw std::runtime_error(loaded.failure().message);
  if (warm)
    for (const auto& k : warm_up_set(1)) {
      const auto result = backend::compile_with_hiprtc(to_backend_request(k, arch));
      if (result.status != HIPACM_SUCCESS)
        throw std::runtime_error("warm-up compile failed: " + result.error_message);
    }
  const auto start = Clock::now();
  for (const auto& k : set) {
    const auto result = backend::compile_with_hiprtc(to_backend_request(k, arch));
    if (result.status == HIPACM_SUCCESS) {
      ++run.ok;
    } else if (run.failed++ == 0) {
      run.error = k.file + ": " + result.error_message + "\n" + result.log.substr(0, 800);
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

// What a JIT does between entering the mode and submitting: tracing, building sources. A busy
// core, not a sleep, since that work takes a CPU from the workers.
void host_work(unsigned ms) {
  const auto until = Clock::now() + std::chrono::milliseconds(ms);
  volatile std::uint64_t spin = 0;
  while (Clock::now() < until) spin = spin + 1;
}

VariantRun run_hipacm(const std::vector<SetKernel>& set, const std::string& arch,
                      hipacm::Isolation isolation, unsigned threads, const std::string& cache_dir,
                      unsigned host_gap_ms = 0) {
  VariantRun run;
  WorkerRssMonitor monitor;
  const auto config = hipacm::Config()
                          .arch(arch)
                          .isolation(isolation)
                          .max_workers(threads)
                          .ignore_errors()
                          .cache_dir(cache_dir)
                          .cache_policy(cache_dir.empty() ? hipacm::CachePolicy::Off
                                                          : hipacm::CachePolicy::ReadWrite);

  const auto start = Clock::now();
  std::vector<std::pair<const SetKernel*, hipacm::Future>> futures;
  try {
    hipacm::Mode mode(config);
    host_work(host_gap_ms);
    for (const auto& k : set) {
      try {
        futures.emplace_back(&k, mode.submit(to_request(k)));
      } catch (const hipacm::Error& e) {
        if (run.failed++ == 0) run.error = k.file + ": submit: " + e.message();
      }
    }
    mode.exit();                      // ignore_errors: every outcome is read from its future below
  } catch (const hipacm::Error& e) {  // entering the mode: a refused submit is caught above
    throw std::runtime_error(std::string("hipacm_mode_enter: ") +
                             hipacm::status_string(e.status()) + ": " + e.message());
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  monitor.stop();

  for (const auto& [kernel, future] : futures) {
    try {
      const hipacm_kernel& compiled = future.result();
      ++run.ok;
      if (hipacm::from_cache(compiled)) ++run.from_cache;
    } catch (const hipacm::Error& e) {
      if (run.failed++ == 0)
        run.error = kernel->file + ": " + hipacm::status_string(e.status()) + ": " + e.message() +
                    "\n" + e.log().substr(0, 800);
    }
  }
  run.worker_peak_kib = monitor.peak_worker_kib();
  run.workers_total_kib = monitor.peak_total_kib();
  run.workers_seen = static_cast<long>(monitor.workers_seen());
  return run;
}

}  // namespace

bool is_amd_arch(const std::string& arch) { return arch.rfind("gfx", 0) == 0; }

VariantRun run_variant(const std::string& variant, const std::vector<SetKernel>& set,
                       const std::string& arch, unsigned threads, const std::string& cache_dir,
                       unsigned host_gap_ms) {
  VariantRun run;
  if (variant == "a" || variant == "a-warm") {
    run = is_amd_arch(arch) ? run_serial_hiprtc(set, arch, variant == "a-warm")
                            : run_serial_nvrtc(set, arch, variant == "a-warm");
  } else if (variant == "ceiling") {
    run = run_machine_ceiling(set, arch, threads);
  } else if (variant == "d") {
    run = run_hipacm(set, arch, hipacm::Isolation::InProcess, threads, "", host_gap_ms);
  } else if (variant == "e") {
    run = run_hipacm(set, arch, hipacm::Isolation::Process, threads, "", host_gap_ms);
  } else if (variant == "e-warm") {
    // A host that has warmed up before: the process-wide worker pool outlives a mode, so a
    // first mode of trivial kernels leaves `threads` started, initialized workers behind.
    const VariantRun warm_up =
        run_hipacm(warm_up_set(threads), arch, hipacm::Isolation::Process, threads, "");
    if (warm_up.failed != 0) throw std::runtime_error("warm-up mode failed: " + warm_up.error);
    run = run_hipacm(set, arch, hipacm::Isolation::Process, threads, "");
  } else if (variant == "cache") {
    run = run_hipacm(set, arch, hipacm::Isolation::Process, threads, cache_dir, host_gap_ms);
  } else {
    throw std::runtime_error("unknown variant " + variant);
  }
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  run.host_peak_kib = self.ru_maxrss;
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  if (children.ru_maxrss > run.worker_peak_kib) run.worker_peak_kib = children.ru_maxrss;
  return run;
}

}  // namespace hipacm::bench::nvidia
