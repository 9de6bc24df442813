// SPDX-License-Identifier: MIT
// compile_bench.cpp - wall time of one kernel set compiled four ways: serial hipRTC, hipcc, hipacm
// in-process, hipacm workers.
#include <hipacm/hipacm.hpp>

#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/bench_args.h"
#include "bench/common/example_kernels.h"
#include "bench/common/kernel_request.h"
#include "bench/common/service_choice.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"

extern char** environ;

namespace hipacm::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string kernels_dir = HIPACM_EXAMPLES_DIR;
  std::string arch = "gfx90a";
  std::size_t count = 34;
  unsigned workers = 0;  // 0 = nproc
  int rounds = 3;
  bool hipcc = true;
  std::string json_path;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// (a) What rocFFT- and CuPy-style callers do: one hipRTC compile after another.
double run_serial_hiprtc(const std::vector<KernelSource>& set, const Options& o) {
  const auto start = Clock::now();
  for (const auto& k : set) {
    const auto result = backend::compile_with_hiprtc(to_backend_request(k, o.arch));
    if (result.status != HIPACM_SUCCESS)
      throw std::runtime_error(k.file + ": " + result.error_message + "\n" + result.log);
  }
  return seconds_since(start);
}

// The machine's own ceiling for process parallelism: `jobs` forked copies
// of (a), each compiling every jobs-th kernel, sharing nothing. hipacm's
// workers cannot beat this; it shows how far a 2-core VM is from 2.0x.
double run_forked_ceiling(const std::vector<KernelSource>& set, const Options& o, unsigned jobs) {
  const auto start = Clock::now();
  std::vector<pid_t> children;
  for (unsigned j = 0; j < jobs; ++j) {
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int failed = 0;
      for (std::size_t i = j; i < set.size(); i += jobs)
        if (backend::compile_with_hiprtc(to_backend_request(set[i], o.arch)).status !=
            HIPACM_SUCCESS)
          ++failed;
      _exit(failed == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      ++failures;
  }
  const double elapsed = seconds_since(start);
  if (failures > 0) throw std::runtime_error("a forked compile process failed");
  return elapsed;
}

// (b) One hipcc --genco process per kernel, `jobs` at a time.
double run_hipcc(const std::vector<KernelSource>& set, const Options& o, unsigned jobs) {
  const fs::path dir = fs::temp_directory_path() / ("hipacm-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::vector<std::string>> commands;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const fs::path src = dir / ("k" + std::to_string(i) + ".hip");
    std::ofstream(src) << "#include <hip/hip_runtime.h>\n" << set[i].source;
    std::vector<std::string> argv = {"hipcc", "--genco", "--offload-arch=" + o.arch};
    for (const auto& opt : set[i].options) argv.push_back(opt);
    for (const auto& inc : set[i].header_dirs) argv.push_back("-I" + inc);
    argv.insert(argv.end(),
                {"-o", (dir / ("k" + std::to_string(i) + ".co")).string(), src.string()});
    commands.push_back(std::move(argv));
  }
  const auto start = Clock::now();
  // Reap only our own hipcc pids: wait(-1) would also reap (and so steal)
  // the warm hipacm-worker children of this process.
  std::vector<pid_t> running;
  std::size_t next = 0, failed = 0;
  while (next < commands.size() || !running.empty()) {
    while (running.size() < jobs && next < commands.size()) {
      std::vector<char*> argv;
      for (auto& a : commands[next]) argv.push_back(a.data());
      argv.push_back(nullptr);
      pid_t pid = 0;
      if (posix_spawnp(&pid, "hipcc", nullptr, nullptr, argv.data(), environ) != 0)
        throw std::runtime_error("cannot start hipcc");
      running.push_back(pid);
      ++next;
    }
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      if (waitpid(*it, &status, WNOHANG) == *it) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    usleep(2000);
  }
  const double elapsed = seconds_since(start);
  fs::remove_all(dir);
  if (failed > 0) throw std::runtime_error(std::to_string(failed) + " hipcc compiles failed");
  return elapsed;
}

// (c)/(d) hipacm through its C++ wrapper, the way a host uses it.
double run_hipacm(const std::vector<KernelSource>& set, const Options& o, unsigned workers,
                  hipacm::Isolation isolation) {
  const auto start = Clock::now();
  hipacm::Mode mode(hipacm::Config().max_workers(workers).arch(o.arch).isolation(isolation));
  for (const auto& k : set) mode.submit(to_request(k));  // the future is dropped: exit collects it
  mode.exit();  // throws hipacm::CompileError when a compile failed
  return seconds_since(start);
}

// Peak RSS (VmHWM) of this process's hipacm-worker children, in MiB.
std::vector<double> worker_peak_rss_mib() {
  std::vector<double> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line, name;
    long ppid = -1;
    double hwm = -1;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(line.find_first_not_of(" \t", 5));
      if (line.rfind("PPid:", 0) == 0) ppid = std::stol(line.substr(5));
      if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024.0;
    }
    if (ppid == getpid() && name.rfind("hipacm-worker", 0) == 0 && hwm >= 0) out.push_back(hwm);
  }
  return out;
}

double self_peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Options parse(int argc, char** argv) {
  Options o;
  for (ArgReader args(argc, argv); args.next();) {
    const std::string& a = args.option();
    if (args.take("--kernels-dir", &o.kernels_dir) || args.take("--arch", &o.arch) ||
        args.take("--count", &o.count) || args.take("--workers", &o.workers) ||
        args.take("--rounds", &o.rounds) || args.flag("--no-hipcc", &o.hipcc, false) ||
        args.take("--json", &o.json_path))
      continue;
    if (a != "--help" && a != "-h")
      throw std::runtime_error("unknown option " + a + " (see --help)");
    std::puts(
        "usage: hipacm-compile-bench [--count N] [--rounds R] [--workers W] [--arch gfx90a]\n"
        "                            [--kernels-dir DIR] [--no-hipcc] [--json FILE]\n"
        "Compiles N distinct kernels four ways and prints wall times and speedups.\n"
        "example: hipacm-compile-bench --count 34 --rounds 3 --json bench.json");
    std::exit(0);
  }
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const unsigned jobs =
      o.workers ? o.workers : std::max(1u, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
  const auto set = make_distinct_set(load_example_kernels(o.kernels_dir), o.count);
  std::printf(
      "hipacm compile benchmark: %zu distinct kernels, arch %s, %u-way parallel, %d rounds\n",
      set.size(), o.arch.c_str(), jobs, o.rounds);

  struct Variant {
    std::string id, label;
    std::function<double()> run;
    std::vector<double> times;
  };
  std::vector<Variant> variants = {
      {"a", "serial in-process hipRTC loop", [&] { return run_serial_hiprtc(set, o); }, {}},
      {"b",
       "hipcc --genco per kernel, " + std::to_string(jobs) + " at a time",
       [&] { return run_hipcc(set, o, jobs); },
       {}},
      {"c",
       "hipacm in-process (serialized hipRTC)",
       [&] { return run_hipacm(set, o, jobs, hipacm::Isolation::InProcess); },
       {}},
      {"d",
       "hipacm, " + std::to_string(jobs) + " worker processes",
       [&] { return run_hipacm(set, o, jobs, hipacm::Isolation::Process); },
       {}},
      {"e",
       "ceiling: " + std::to_string(jobs) + " forked copies of (a), static split",
       [&] { return run_forked_ceiling(set, o, jobs); },
       {}},
  };
  if (!o.hipcc) variants.erase(variants.begin() + 1);

  // Each process pays hipRTC's one-time start-up once; pay it before timing
  // (a), so that the baseline is the warm per-kernel cost.
  run_serial_hiprtc({set.front()}, o);
  double cold_pool = -1;
  for (int r = 0; r < o.rounds; ++r) {
    // Alternate the order so slow drift on a shared machine cancels out.
    std::vector<std::size_t> order(variants.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = r % 2 ? order.size() - 1 - i : i;
    for (std::size_t i : order) {
      const double t = variants[i].run();
      if (variants[i].id == "d" && cold_pool < 0) cold_pool = t;
      variants[i].times.push_back(t);
      std::printf("  round %d  (%s) %-45s %7.3f s\n", r + 1, variants[i].id.c_str(),
                  variants[i].label.c_str(), t);
      std::fflush(stdout);
    }
  }

  const double base = median(variants[0].times);
  std::printf("\n| variant | median wall (s) | speedup vs (a) |\n|---|---:|---:|\n");
  for (auto& v : variants)
    std::printf("| (%s) %s | %.3f | %.2fx |\n", v.id.c_str(), v.label.c_str(), median(v.times),
                base / median(v.times));
  const auto rss = worker_peak_rss_mib();
  double max_rss = 0;
  for (double m : rss) max_rss = std::max(max_rss, m);
  std::printf("\n(d) first round with a cold worker pool: %.3f s (%.2fx vs (a))\n", cold_pool,
              base / cold_pool);
  std::printf("peak RSS: host %.0f MiB; %zu warm workers, max %.0f MiB each\n", self_peak_rss_mib(),
              rss.size(), max_rss);

  if (!o.json_path.empty()) {
    std::ofstream json(o.json_path);
    json << "{\n  \"kernels\": " << set.size() << ",\n  \"arch\": \"" << o.arch
         << "\",\n  \"parallelism\": " << jobs << ",\n  \"rounds\": " << o.rounds
         << ",\n  \"variants\": [\n";
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const auto& v = variants[i];
      json << "    {\"id\": \"" << v.id << "\", \"label\": \"" << v.label
           << "\", \"median_s\": " << median(v.times)
           << ", \"speedup_vs_a\": " << base / median(v.times) << ", \"times_s\": [";
      for (std::size_t t = 0; t < v.times.size(); ++t) json << (t ? ", " : "") << v.times[t];
      json << "]}" << (i + 1 < variants.size() ? "," : "") << "\n";
    }
    json << "  ],\n  \"cold_pool_s\": " << cold_pool << ",\n  \"worker_peak_rss_mib\": [";
    for (std::size_t i = 0; i < rss.size(); ++i) json << (i ? ", " : "") << rss[i];
    json << "],\n  \"host_peak_rss_mib\": " << self_peak_rss_mib() << "\n}\n";
  }
  return 0;
}

}  // namespace
}  // namespace hipacm::bench

int main(int argc, char** argv) {
  // Pools spawn their own workers, as in the recorded figures; HIPACM_ISOLATION=service=auto
  // measures the default (workers from the compile service) instead.
  hipacm::bench::default_to_own_workers();
  try {
    return hipacm::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipacm-compile-bench: %s\n", e.what());
    return 1;
  }
}
