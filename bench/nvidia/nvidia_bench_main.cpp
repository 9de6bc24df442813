// SPDX-License-Identifier: MIT
// nvidia_bench_main.cpp - hipacm-nvidia-bench: one generated kernel set compiled for an NVIDIA
// arch (NVRTC) or an AMD one (hipRTC) by a serial loop, by hipacm in-process and by hipacm worker
// pools of several sizes, each measurement in a fresh child process, variants alternating across
// rounds.
#include <signal.h>
#include <unistd.h>
#include <hipacm/hipacm.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/service_choice.h"
#include "hip_backend/service/service_client.h"
#include "kernel_set_dir.h"
#include "nvrtc_library.h"
#include "variant_runner.h"

namespace hipacm::bench::nvidia {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr const char* kResultPrefix = "RESULT ";

/// One column of the table: a variant at a pool size.
struct Measure {
  std::string id;       ///< e.g. "e16", the row name
  std::string variant;  ///< a, a-warm, ceiling, d, e, e-warm or cache
  unsigned threads = 1;
  std::string description;
  /// Milliseconds of host work (one busy core) between the mode's enter and its first submit.
  unsigned host_gap_ms = 0;
  /// HIPACM_PRESTART_WORKERS=on: the workers start at mode enter.
  bool prestart = false;
};

/// The environment prefix that sends a child's workers to the compile service in `runtime_dir`
/// (keeping the isolation word of this process's HIPACM_ISOLATION; the service waits ten minutes
/// idle, the workers their default). The deprecated names are unset so they cannot win.
std::string service_env(const std::string& runtime_dir) {
  return "env -u HIPACM_COMPILE_SERVICE -u HIPACM_SERVICE_IDLE_MS HIPACM_ISOLATION='" +
         isolation_with("service=on") + "' HIPACM_IDLE_MS=,600000 HIPACM_RUNTIME_DIR='" +
         runtime_dir + "' ";
}

/// The environment prefix for rows that spawn their own workers, whatever the default is.
std::string own_workers_env() {
  return "env -u HIPACM_COMPILE_SERVICE HIPACM_ISOLATION='" + isolation_with("service=off") + "' ";
}

/// The compile services listening in `runtime_dir`.
std::vector<pid_t> services_in(const std::string& runtime_dir) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runtime_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("compile-service-", 0) != 0 || entry.path().extension() != ".sock") continue;
    if (const pid_t pid = backend::compile_service_pid(entry.path().string()); pid > 0)
      pids.push_back(pid);
  }
  return pids;
}

/// Stops every compile service in `runtime_dir` and waits until each is gone.
void stop_services_in(const std::string& runtime_dir) {
  for (const pid_t pid : services_in(runtime_dir)) {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `self --single ...` under timeout(1) and parses its RESULT line; other output goes to
/// stderr so the log keeps it.
json run_child(const std::string& self, const std::string& set_dir, const std::string& arch,
               const Measure& m, const std::string& cache_dir, int timeout_s,
               const std::string& env_prefix = "") {
  // Rows without a service prefix spawn their own workers, whatever the default is.
  std::string cmd = (env_prefix.empty() ? own_workers_env() : env_prefix) +
                    (m.prestart ? "env HIPACM_PRESTART_WORKERS=on " : "") + "timeout -k 5 " +
                    std::to_string(timeout_s) + " " + quote(self) + " --single " + m.variant +
                    " --set " + quote(set_dir) + " --arch " + quote(arch) + " --threads " +
                    std::to_string(m.threads) + " --host-gap-ms " + std::to_string(m.host_gap_ms);
  if (!cache_dir.empty()) cmd += " --cache-dir " + quote(cache_dir);
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {{"error", "popen failed"}, {"seconds", nullptr}};
  json result;
  std::string line;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) {
    line += buf;
    if (line.empty() || line.back() != '\n') continue;
    if (line.rfind(kResultPrefix, 0) == 0) {
      try {
        result = json::parse(line.substr(std::char_traits<char>::length(kResultPrefix)));
      } catch (const json::exception& e) {
        result = {{"error", std::string("unparsable result: ") + e.what()}};
      }
    } else {
      std::fprintf(stderr, "  [%s] %s", m.id.c_str(), line.c_str());
    }
    line.clear();
  }
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (result.is_null()) {
    result = {
        {"seconds", nullptr},
        {"error", code == 124 ? "timed out after " + std::to_string(timeout_s) + " s"
                              : "child exited " + std::to_string(code) + " without a result"}};
  }
  return result;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int run_single(const std::string& variant, const std::string& set_dir, const std::string& arch,
               unsigned threads, const std::string& cache_dir, unsigned host_gap_ms) {
  json out;
  try {
    const auto set = load_kernel_set(set_dir);
    out = run_variant(variant, set, arch, threads, cache_dir, host_gap_ms);
  } catch (const std::exception& e) {
    out = {{"seconds", nullptr}, {"error", e.what()}};
  }
  std::printf("%s%s\n", kResultPrefix, out.dump().c_str());
  return 0;
}

void print_table(const json& results, std::size_t kernels) {
  double baseline = 0.0;
  for (const auto& r : results)
    if (r["id"] == "a" && r["median_s"].is_number()) baseline = r["median_s"].get<double>();
  std::printf("\n%-10s %-44s %4s %9s %9s %7s %8s %6s %9s %10s\n", "variant", "what", "runs",
              "median_s", "min_s", "ok", "vs_a", "cached", "host_MiB", "worker_MiB");
  for (const auto& r : results) {
    char med[32] = "-", mn[32] = "-", speed[32] = "-";
    if (r["median_s"].is_number()) {
      std::snprintf(med, sizeof med, "%.3f", r["median_s"].get<double>());
      std::snprintf(mn, sizeof mn, "%.3f", r["min_s"].get<double>());
      if (baseline > 0)
        std::snprintf(speed, sizeof speed, "%.2fx", baseline / r["median_s"].get<double>());
    }
    std::printf("%-10s %-44s %4zu %9s %9s %3d/%-3zu %8s %6d %9.1f %10.1f\n",
                r["id"].get<std::string>().c_str(), r["description"].get<std::string>().c_str(),
                r["runs"].size(), med, mn, r["min_ok"].get<int>(), kernels, speed,
                r["max_from_cache"].get<int>(), r["host_peak_kib"].get<long>() / 1024.0,
                r["worker_peak_kib"].get<long>() / 1024.0);
  }
}

int run_all(const std::string& self, const std::string& set_dir, const std::string& arch,
            int rounds, unsigned threads, const std::vector<unsigned>& scaling,
            const std::vector<std::string>& skip, const std::string& json_path, int timeout_s,
            int budget_s, unsigned host_gap_ms) {
  const auto set = load_kernel_set(set_dir);
  const bool amd = is_amd_arch(arch);
  const std::string compiler = amd ? "hipRTC" : "NVRTC";
  std::printf("hipacm-nvidia-bench: %zu kernels from %s, arch %s (%s), %d rounds, %u cores\n",
              set.size(), set_dir.c_str(), arch.c_str(), compiler.c_str(), rounds,
              std::thread::hardware_concurrency());
  json env = {{"cores", std::thread::hardware_concurrency()}};
  if (!amd) {
    try {
      const NvrtcLibrary nvrtc;
      std::printf("NVRTC %s (%s)\n", nvrtc.version().c_str(), nvrtc.path().c_str());
      env["nvrtc"] = nvrtc.version();
      env["nvrtc_library"] = nvrtc.path();
    } catch (const std::exception& e) {
      std::printf("NVRTC unavailable: %s\n", e.what());
      env["nvrtc_error"] = e.what();
    }
  }
  const hipacm::BackendInfo info = hipacm::backend_info();
  std::printf("hipacm backend: %s %s (%s)\n", info.compiler.c_str(), info.version.c_str(),
              info.library_path.c_str());
  env["hipacm_backend"] = info.compiler + " " + info.version;
  if (amd) {
    env["hiprtc"] = info.version;
    env["hiprtc_library"] = info.library_path;
  }

  std::vector<Measure> measures = {
      {"a", "a", 1,
       amd ? "serial hipRTC loop (in-process, dlopen)" : "serial NVRTC loop (dlopen libnvrtc)"},
      {"a-warm", "a-warm", 1, "a after one untimed compile (" + compiler + " initialized)"},
      {"d" + std::to_string(threads), "d", threads,
       "hipacm in-process, " + std::to_string(threads) + " pool threads"},
  };
  std::vector<unsigned> sizes = scaling;
  if (std::find(sizes.begin(), sizes.end(), threads) == sizes.end()) sizes.push_back(threads);
  for (unsigned n : sizes)
    measures.push_back(
        {"e" + std::to_string(n), "e", n, "hipacm, " + std::to_string(n) + " worker processes"});
  measures.push_back({"e" + std::to_string(threads) + "-warm", "e-warm", threads,
                      "e" + std::to_string(threads) + " with the pool started and initialized"});
  // What the machine gives at all with this many processes: hipacm's rows are read against it.
  measures.push_back({"ceiling" + std::to_string(threads), "ceiling", threads,
                      std::to_string(threads) + " warmed compiler processes, no hipacm"});
  // The compile-service rows: "warm" (a service that an untimed run started) or "cold" (the
  // measured process starts it).
  const std::string service_warm = "s" + std::to_string(threads);
  const std::string service_cold = service_warm + "-cold";
  const std::string service_host_warm = service_warm + "-warm";
  const std::map<std::string, std::string> service_of = {{service_warm, "warm"},
                                                         {service_cold, "cold"},
                                                         {service_host_warm, "warm"},
                                                         {service_warm + "-gap", "warm"}};
  measures.push_back({service_warm, "e", threads,
                      "e" + std::to_string(threads) + ", workers from a running compile service"});
  measures.push_back({service_cold, "e", threads,
                      "e" + std::to_string(threads) + ", starting the compile service"});
  measures.push_back({service_host_warm, "e-warm", threads,
                      service_warm + " after an earlier mode of the same process"});
  // Prestart against the zygote: workers that start at mode enter gain only what the host does
  // between its enter and its first submit, so the gap rows give the host that much work.
  const std::string prestarted = "p" + std::to_string(threads);
  measures.push_back({prestarted, "e", threads,
                      "e" + std::to_string(threads) + ", workers started at mode enter", 0, true});
  if (host_gap_ms > 0) {
    const std::string gap = std::to_string(host_gap_ms) + " ms of host work";
    const std::string lazy = "e" + std::to_string(threads);
    measures.push_back({lazy + "-gap", "e", threads, lazy + " after " + gap, host_gap_ms});
    measures.push_back(
        {prestarted + "-gap", "e", threads, prestarted + " after " + gap, host_gap_ms, true});
    measures.push_back(
        {service_warm + "-gap", "e", threads, service_warm + " after " + gap, host_gap_ms});
  }
  const Measure cold{"cache-cold", "cache", threads, "e with an empty cache dir (fills it)"};
  const Measure warm{"cache-warm", "cache", threads, "e again, same cache dir (from_cache)"};
  const auto skipped = [&](const std::string& id) {
    return std::find(skip.begin(), skip.end(), id) != skip.end();
  };
  measures.erase(std::remove_if(measures.begin(), measures.end(),
                                [&](const Measure& m) { return skipped(m.id); }),
                 measures.end());
  const bool cache_rows = !skipped("cache");

  std::map<std::string, json> runs;
  const auto started = std::chrono::steady_clock::now();
  const auto over_budget = [&] {
    return std::chrono::steady_clock::now() - started > std::chrono::seconds(budget_s);
  };
  const fs::path cache_root =
      fs::temp_directory_path() / ("hipacm-nvbench-" + std::to_string(getpid()));
  bool truncated = false;
  for (int round = 0; round < rounds && !truncated; ++round) {
    std::vector<Measure> order = measures;
    if (!order.empty())
      std::rotate(order.begin(), order.begin() + (round % order.size()), order.end());
    if (round % 2 == 1) std::reverse(order.begin(), order.end());
    for (const auto& m : order) {
      if (over_budget()) {
        truncated = true;
        break;
      }
      std::string env_prefix;
      std::string service_dir;
      const std::string service = service_of.count(m.id) ? service_of.at(m.id) : "";
      if (service == "warm") {
        service_dir = (cache_root / "service-warm").string();
        env_prefix = service_env(service_dir);
        if (services_in(service_dir).empty()) {
          // Untimed: the first process of the session starts the service and warms it.
          fs::create_directories(service_dir);
          run_child(self, set_dir, arch, m, "", timeout_s, env_prefix);
        }
      } else if (service == "cold") {
        service_dir = (cache_root / ("service-cold-" + std::to_string(round))).string();
        fs::create_directories(service_dir);
        env_prefix = service_env(service_dir);
      }
      json r = run_child(self, set_dir, arch, m, "", timeout_s, env_prefix);
      if (service == "cold") stop_services_in(service_dir);
      std::printf("round %d %-10s %s\n", round + 1, m.id.c_str(), r.dump().c_str());
      std::fflush(stdout);
      runs[m.id].push_back(r);
    }
    if (!cache_rows) continue;
    if (truncated || over_budget()) {
      truncated = true;
      break;
    }
    const std::string cache_dir = (cache_root / ("round" + std::to_string(round))).string();
    fs::create_directories(cache_dir);
    for (const Measure* m : {&cold, &warm}) {
      json r = run_child(self, set_dir, arch, *m, cache_dir, timeout_s);
      std::printf("round %d %-10s %s\n", round + 1, m->id.c_str(), r.dump().c_str());
      std::fflush(stdout);
      runs[m->id].push_back(r);
    }
  }
  stop_services_in((cache_root / "service-warm").string());
  std::error_code ec;
  fs::remove_all(cache_root, ec);
  if (truncated) std::printf("note: stopped early, the %d s budget was used up\n", budget_s);

  if (cache_rows) {
    measures.push_back(cold);
    measures.push_back(warm);
  }
  json results = json::array();
  for (const auto& m : measures) {
    const json& list = runs.count(m.id) ? runs[m.id] : json::array();
    std::vector<double> seconds;
    int min_ok = list.empty() ? 0 : static_cast<int>(set.size()), max_cached = 0;
    long host = 0, worker = 0;
    std::string error;
    for (const auto& r : list) {
      if (r["seconds"].is_number() && r.value("failed", 1) == 0)
        seconds.push_back(r["seconds"].get<double>());
      min_ok = std::min(min_ok, r.value("ok", 0));
      max_cached = std::max(max_cached, r.value("from_cache", 0));
      host = std::max(host, r.value("host_peak_kib", 0L));
      worker = std::max(worker, r.value("worker_peak_kib", 0L));
      if (error.empty()) error = r.value("error", "");
    }
    json row = {
        {"id", m.id},
        {"variant", m.variant},
        {"threads", m.threads},
        {"description", m.description},
        {"runs", list},
        {"min_ok", min_ok},
        {"max_from_cache", max_cached},
        {"host_peak_kib", host},
        {"worker_peak_kib", worker},
        {"first_error", error},
        {"median_s", seconds.empty() ? json(nullptr) : json(median(seconds))},
        {"min_s", seconds.empty() ? json(nullptr)
                                  : json(*std::min_element(seconds.begin(), seconds.end()))}};
    results.push_back(row);
  }
  print_table(results, set.size());
  for (const auto& r : results)
    if (!r["first_error"].get<std::string>().empty())
      std::printf("first error of %s: %.600s\n", r["id"].get<std::string>().c_str(),
                  r["first_error"].get<std::string>().c_str());
  std::printf(
      "(median_s/min_s count only runs where every kernel compiled; vs_a = a's median / "
      "this median; cached = kernels reported from_cache)\n");

  if (!json_path.empty()) {
    json doc = {{"schema", "hipacm-nvidia-bench-1"},
                {"tool", "hipacm-nvidia-bench"},
                {"arch", arch},
                {"compiler", amd ? "hiprtc" : "nvrtc"},
                {"kernels", set.size()},
                {"rounds", rounds},
                {"environment", env},
                {"truncated", truncated},
                {"results", results}};
    std::ofstream(json_path) << doc.dump(2) << "\n";
    std::printf("wrote %s\n", json_path.c_str());
  }
  return 0;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = text.find(',', at);
    if (comma != at) parts.push_back(text.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return parts;
}

std::vector<unsigned> parse_sizes(const std::string& text) {
  std::vector<unsigned> sizes;
  for (const std::string& part : split_commas(text))
    sizes.push_back(static_cast<unsigned>(std::stoul(part)));
  return sizes;
}

}  // namespace
}  // namespace hipacm::bench::nvidia

int main(int argc, char** argv) {
  namespace nv = hipacm::bench::nvidia;
  CLI::App app{
      "Compile-time benchmark for NVIDIA archs (NVRTC) and AMD ones (hipRTC): a serial loop vs "
      "hipacm in-process vs hipacm worker pools (1..N workers) vs a cached re-run."};
  std::string generate_dir, set_dir, arch = "sm_90", json_path, single, cache_dir,
                                     scaling = "1,2,4,8,16", skip, examples = HIPACM_EXAMPLES_DIR;
  std::size_t count = 64;
  int rounds = 3, timeout_s = 120, budget_s = 300;
  unsigned threads = 16, host_gap_ms = 0;
  // A later option wins, so a wrapper's defaults can be overridden by appending options.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--generate", generate_dir, "write the kernel set into this directory and exit");
  app.add_option("--examples", examples, "example kernels to generate the set from");
  app.add_option("--count", count, "kernels to generate (default 64)");
  app.add_option("--set", set_dir, "the generated kernel set to compile");
  app.add_option("--arch", arch,
                 "target arch (default sm_90); an AMD one (gfx90a) compiles the serial rows with "
                 "hipRTC");
  app.add_option("--rounds", rounds, "rounds; variants alternate order across rounds");
  app.add_option("--threads", threads, "pool size of d, e and the cache runs (default 16)");
  app.add_option("--scaling", scaling, "worker counts for e (default 1,2,4,8,16)");
  app.add_option("--skip", skip,
                 "rows to leave out, comma-separated (e.g. a-warm,d16; cache drops both cache "
                 "rows)");
  app.add_option("--json", json_path, "write the results as JSON here");
  app.add_option("--timeout", timeout_s, "seconds one measurement may take (default 120)");
  app.add_option("--budget", budget_s, "stop starting measurements after this many seconds");
  app.add_option(
      "--single", single,
      "internal: run one variant (a, a-warm, ceiling, d, e, e-warm, cache) and print it");
  app.add_option("--cache-dir", cache_dir, "internal: the cache directory of --single cache");
  app.add_option("--host-gap-ms", host_gap_ms,
                 "add rows (e, p and s) whose host works this long (one busy core) between its "
                 "mode enter and its first submit, as a JIT that traces before it compiles")
      ->check(CLI::Range(0u, 60000u));
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    if (!generate_dir.empty()) {
      nv::generate_kernel_set(examples, generate_dir, count);
      std::printf("wrote %zu kernels and manifest.json to %s\n", count, generate_dir.c_str());
      return 0;
    }
    if (set_dir.empty()) {
      std::fprintf(stderr, "hipacm-nvidia-bench: give --set DIR (make one with --generate DIR)\n");
      return 2;
    }
    if (!single.empty())
      return nv::run_single(single, set_dir, arch, threads, cache_dir, host_gap_ms);
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    return nv::run_all(self, set_dir, arch, rounds, threads, nv::parse_sizes(scaling),
                       nv::split_commas(skip), json_path, timeout_s, budget_s, host_gap_ms);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipacm-nvidia-bench: %s\n", e.what());
    return 1;
  }
}
