// cache_bench.cpp - a cold compile against persistent-cache hits, through the public C ABI.
#include <hipacm/hipacm.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/bench_args.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string arch = "gfx90a";
  std::string kernel_file;  // empty: the built-in kernel
  int hits = 2000;
  int warmup = 50;
  std::int32_t isolation = HIPACM_ISOLATION_IN_PROCESS;
  bool json = false;
};

const char* kBuiltinKernel =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

// The finalize callback a JIT host would use to take the code object.
int take_code(void* user, hipacm_future* future) {
  const hipacm_kernel* kernel = nullptr;
  if (hipacm_future_result(future, &kernel) != HIPACM_SUCCESS || kernel->code_size == 0) return 1;
  *static_cast<int*>(user) += kernel->from_cache;
  return 0;
}

void check(hipacm_status status, const char* what) {
  if (status != HIPACM_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + hipacm_last_error_message());
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

// Seconds from hipacm_submit to hipacm_future_result returning, finalize included.
double submit_to_result(hipacm_mode* mode, const std::string& source, const std::string& key,
                        int* from_cache) {
  hipacm_request req{};
  req.struct_size = sizeof req;
  req.source = source.c_str();
  req.key = key.c_str();  // a distinct key per submit: every one is a cache lookup, not a dedup
  req.finalize = take_code;
  req.user_data = from_cache;
  const auto start = Clock::now();
  hipacm_future* future = nullptr;
  check(hipacm_submit(mode, &req, &future), "hipacm_submit");
  const hipacm_kernel* kernel = nullptr;
  const hipacm_status status = hipacm_future_result(future, &kernel);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  hipacm_future_release(future);
  check(status, "hipacm_future_result");
  return seconds;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

Options parse(int argc, char** argv) {
  Options o;
  for (hipacm::bench::ArgReader args(argc, argv); args.next();) {
    const std::string& a = args.option();
    if (a == "--arch")
      o.arch = args.value();
    else if (a == "--kernel")
      o.kernel_file = args.value();
    else if (a == "--hits")
      o.hits = std::stoi(args.value());
    else if (a == "--warmup")
      o.warmup = std::stoi(args.value());
    else if (a == "--isolation") {
      const std::string v = args.value();
      if (v == "in-process")
        o.isolation = HIPACM_ISOLATION_IN_PROCESS;
      else if (v == "process")
        o.isolation = HIPACM_ISOLATION_PROCESS;
      else
        throw std::runtime_error("--isolation is in-process or process");
    } else if (a == "--json")
      o.json = true;
    else
      throw std::runtime_error(
          "usage: hipacm-cache-bench [--arch gfx90a] [--kernel FILE.hip] [--hits N] "
          "[--warmup N] [--isolation in-process|process] [--json]\n"
          "example: hipacm-cache-bench --hits 2000 --json");
  }
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
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = o.arch.c_str();
  cfg.max_workers = 1;
  cfg.isolation = o.isolation;
  cfg.cache_dir = dir.path().c_str();
  cfg.cache_policy = HIPACM_CACHE_READWRITE;
  hipacm_mode* mode = nullptr;
  check(hipacm_mode_enter(&cfg, &mode), "hipacm_mode_enter");

  int from_cache = 0;
  const double cold = submit_to_result(mode, source, "cold", &from_cache);
  if (from_cache != 0) throw std::runtime_error("the cold compile was served from the cache");
  for (int i = 0; i < o.warmup; ++i)
    submit_to_result(mode, source, "warm" + std::to_string(i), &from_cache);
  from_cache = 0;
  std::vector<double> hits;
  hits.reserve(static_cast<std::size_t>(o.hits));
  for (int i = 0; i < o.hits; ++i)
    hits.push_back(submit_to_result(mode, source, "hit" + std::to_string(i), &from_cache));
  check(hipacm_mode_exit(mode, nullptr), "hipacm_mode_exit");
  if (from_cache != o.hits)
    throw std::runtime_error(std::to_string(o.hits - from_cache) + " hits were not from the cache");

  const double median = percentile(hits, 0.5);
  const double p99 = percentile(hits, 0.99);
  const double ratio = cold / median;
  if (o.json) {
    nlohmann::json out = {
        {"arch", o.arch},
        {"isolation", o.isolation == HIPACM_ISOLATION_PROCESS ? "process" : "in-process"},
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
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipacm-cache-bench: %s\n", e.what());
    return 1;
  }
}
