// variant_runner.cpp - the variants themselves: a plain NVRTC loop and hipacm modes.
#include "variant_runner.h"

#include <hipacm/hipacm.h>
#include <sys/resource.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>

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

VariantRun run_hipacm(const std::vector<SetKernel>& set, const std::string& arch, int32_t isolation,
                      unsigned threads, const std::string& cache_dir) {
  VariantRun run;
  WorkerRssMonitor monitor;
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = arch.c_str();
  cfg.isolation = isolation;
  cfg.max_workers = threads;
  cfg.ignore_errors = 1;
  cfg.cache_dir = cache_dir.empty() ? nullptr : cache_dir.c_str();
  cfg.cache_policy = cache_dir.empty() ? HIPACM_CACHE_OFF : HIPACM_CACHE_READWRITE;

  const auto start = Clock::now();
  hipacm_mode* mode = nullptr;
  if (hipacm_status s = hipacm_mode_enter(&cfg, &mode); s != HIPACM_SUCCESS)
    throw std::runtime_error(std::string("hipacm_mode_enter: ") + hipacm_status_string(s) + ": " +
                             hipacm_last_error_message());
  std::vector<std::pair<const SetKernel*, hipacm_future*>> futures;
  for (const auto& k : set) {
    std::vector<const char*> options, exprs;
    for (const auto& o : k.options) options.push_back(o.c_str());
    for (const auto& e : k.name_expressions) exprs.push_back(e.c_str());
    hipacm_request req{};
    req.struct_size = sizeof req;
    req.source = k.source.c_str();
    req.source_name = k.file.c_str();
    req.options = options.data();
    req.num_options = options.size();
    req.name_expressions = exprs.data();
    req.num_name_expressions = exprs.size();
    hipacm_future* f = nullptr;
    if (hipacm_submit(mode, &req, &f) == HIPACM_SUCCESS) {
      futures.emplace_back(&k, f);
    } else if (run.failed++ == 0) {
      run.error = k.file + ": submit: " + hipacm_last_error_message();
    }
  }
  hipacm_future* first_failure = nullptr;
  hipacm_mode_exit(mode, &first_failure);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (first_failure != nullptr) hipacm_future_release(first_failure);
  monitor.stop();

  for (const auto& [kernel, f] : futures) {
    const hipacm_kernel* k = nullptr;
    const hipacm_status s = hipacm_future_result(f, &k);
    if (s == HIPACM_SUCCESS) {
      ++run.ok;
      if (k->struct_size >= offsetof(hipacm_kernel, from_cache) + sizeof(k->from_cache) &&
          k->from_cache != 0)
        ++run.from_cache;
    } else if (run.failed++ == 0) {
      run.error = kernel->file + ": " + hipacm_status_string(s) + ": " +
                  hipacm_future_error_message(f) + "\n" +
                  std::string(hipacm_future_log(f)).substr(0, 800);
    }
    hipacm_future_release(f);
  }
  run.worker_peak_kib = monitor.peak_worker_kib();
  run.workers_total_kib = monitor.peak_total_kib();
  run.workers_seen = static_cast<long>(monitor.workers_seen());
  return run;
}

}  // namespace

VariantRun run_variant(const std::string& variant, const std::vector<SetKernel>& set,
                       const std::string& arch, unsigned threads, const std::string& cache_dir) {
  VariantRun run;
  if (variant == "a" || variant == "a-warm") {
    run = run_serial_nvrtc(set, arch, variant == "a-warm");
  } else if (variant == "d") {
    run = run_hipacm(set, arch, HIPACM_ISOLATION_IN_PROCESS, threads, "");
  } else if (variant == "e") {
    run = run_hipacm(set, arch, HIPACM_ISOLATION_PROCESS, threads, "");
  } else if (variant == "e-warm") {
    // A host that has warmed up before: the process-wide worker pool outlives a mode, so a
    // first mode of trivial kernels leaves `threads` started, initialized workers behind.
    const VariantRun warm_up =
        run_hipacm(warm_up_set(threads), arch, HIPACM_ISOLATION_PROCESS, threads, "");
    if (warm_up.failed != 0) throw std::runtime_error("warm-up mode failed: " + warm_up.error);
    run = run_hipacm(set, arch, HIPACM_ISOLATION_PROCESS, threads, "");
  } else if (variant == "cache") {
    run = run_hipacm(set, arch, HIPACM_ISOLATION_PROCESS, threads, cache_dir);
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
