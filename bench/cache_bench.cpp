// SPDX-License-Identifier: MIT
// cache_bench.cpp - a cold compile against persistent-cache hits, through hipacm.hpp as a C++
// host would use it.
#include <hipacm/hipacm.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/bench_args.h"
#include "bench/common/service_choice.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string arch = "gfx90a";
  std::string kernel_file;  // empty: the built-in kernel
  int hits = 2000;
  int warmup = 50;
  hipacm::Isolation isolation = hipacm::Isolation::InProcess;
  bool json = false;
};

const char* kBuiltinKernel =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

// Runs `call`; a hipacm::Error becomes "<what>: <message>", the line main() prints.
template <class Call>
void checked(const char* what, Call&& call) {
  try {
    call();
  } catch (const hipacm::Error& e) {
    throw std::runtime_error(std::string(what) + ": " + e.message());
  }
}

class CacheDir {
 public:
  CacheDir() {
    std::string pattern = (fs::temp_directory_path() / "hipacm-cache-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~CacheDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Seconds from Mode::submit to Future::result returning, finalize included.
double submit_to_result(hipacm::Mode& mode, const std::string& source, const std::string& key,
                        int* from_cache) {
  hipacm::Request request(source);
  // A distinct key per submit: every one is a cache lookup, not a dedup. The finalize callback
  // is the one a JIT host would use to take the code object.
  request.key(key).finalize([from_cache](const hipacm_kernel& kernel) {
    if (kernel.code_size == 0) throw std::runtime_error("an empty code object");
    *from_cache += hipacm::from_cache(kernel) ? 1 : 0;
  });
  const auto start = Clock::now();
  hipacm::Future future;
  checked("submit", [&] { future = mode.submit(request); });
  checked("result", [&] { future.result(); });
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

Options parse(int argc, char** argv) {
  Options o;
  std::string isolation = "in-process";
  for (hipacm::bench::ArgReader args(argc, argv); args.next();) {
    if (args.take("--arch", &o.arch) || args.take("--kernel", &o.kernel_file) ||
        args.take("--hits", &o.hits) || args.take("--warmup", &o.warmup) ||
        args.take("--isolation", &isolation) || args.flag("--json", &o.json))
      continue;
    throw std::runtime_error(
        "usage: hipacm-cache-bench [--arch gfx90a] [--kernel FILE.hip] [--hits N] "
        "[--warmup N] [--isolation in-process|process] [--json]\n"
        "example: hipacm-cache-bench --hits 2000 --json");
  }
  if (isolation != "in-process" && isolation != "process")
    throw std::runtime_error("--isolation is in-process or process");
  if (isolation == "process") o.isolation = hipacm::Isolation::Process;
  if (o.hits < 1 || o.warmup < 0) throw std::runtime_error("--hits must be >= 1, --warmup >= 0");
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::string source = kBuiltinKernel;
  if (!o.kernel_file.empty()) {
    std::ifstream in(o.kernel_file);
    if (!in) throw std::runtime_error("cannot read " + o.kernel_file);
    std::stringstream text;
    text << in.rdbuf();
    source = text.str();
  }
  CacheDir dir;
  std::optional<hipacm::Mode> mode;
  checked("entering the mode", [&] {
    mode.emplace(hipacm::Config()
                     .arch(o.arch)
                     .max_workers(1)
                     .isolation(o.isolation)
                     .cache_dir(dir.path())
                     .cache_policy(hipacm::CachePolicy::ReadWrite));
  });

  int from_cache = 0;
  const double cold = submit_to_result(*mode, source, "cold", &from_cache);
  if (from_cache != 0) throw std::runtime_error("the cold compile was served from the cache");
  for (int i = 0; i < o.warmup; ++i)
    submit_to_result(*mode, source, "warm" + std::to_string(i), &from_cache);
  from_cache = 0;
  std::vector<double> hits;
  hits.reserve(static_cast<std::size_t>(o.hits));
  for (int i = 0; i < o.hits; ++i)
    hits.push_back(submit_to_result(*mode, source, "hit" + std::to_string(i), &from_cache));
  checked("leaving the mode", [&] { mode->exit(); });
  if (from_cache != o.hits)
    throw std::runtime_error(std::to_string(o.hits - from_cache) + " hits were not from the cache");

  const double median = percentile(hits, 0.5);
  const double p99 = percentile(hits, 0.99);
  const double ratio = cold / median;
  if (o.json) {
    nlohmann::json out = {
        {"arch", o.arch},
        {"isolation", o.isolation == hipacm::Isolation::Process ? "process" : "in-process"},
        {"hits", o.hits},
        {"cold_compile_s", cold},
        {"hit_median_us", median * 1e6},
        {"hit_p99_us", p99 * 1e6},
        {"hit_max_us", percentile(hits, 1.0) * 1e6},
        {"cold_over_median_hit", ratio},
    };
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("hipacm persistent cache, arch %s, %d hits (submit -> result with finalize)\n",
                o.arch.c_str(), o.hits);
    std::printf("  %-26s %12.3f ms\n", "cold compile", cold * 1e3);
    std::printf("  %-26s %12.1f us\n", "cache hit, median", median * 1e6);
    std::printf("  %-26s %12.1f us\n", "cache hit, p99", p99 * 1e6);
    std::printf("  %-26s %12.0f x\n", "cold / median hit", ratio);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Pools spawn their own workers, as in the recorded figures; HIPACM_ISOLATION=service=auto
  // measures the default (workers from the compile service) instead.
  hipacm::bench::default_to_own_workers();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipacm-cache-bench: %s\n", e.what());
    return 1;
  }
}
