// SPDX-License-Identifier: MIT
// client_common.cpp - the test clients' jobs (manifests), compile loop, threads and canonical dump.
#include "client_common.h"

#include <nettle/sha2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace client {
namespace {

// Every job compiles for this target, the way an application names the one GPU it runs on.
constexpr const char* kArchOption = "--offload-arch=gfx90a";

struct Job {
  std::string label;
  std::string source_name;
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< include name, contents
  std::vector<std::string> name_expressions;
};

bool read_text(const std::filesystem::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream out;
  out << in.rdbuf();
  text = out.str();
  return true;
}

// The jobs of one manifest (the schema `hipacm warmup` reads), labelled by the manifest's folder
// and the source so that the dump names no absolute path.
bool read_manifest(const std::string& manifest, const Options& options, std::vector<Job>& jobs) {
  const std::filesystem::path path(manifest);
  const std::filesystem::path dir = path.parent_path();
  std::string text;
  if (!read_text(path, text)) {
    std::fprintf(stderr, "client: cannot read %s\n", manifest.c_str());
    return false;
  }
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.contains("kernels")) {
    std::fprintf(stderr, "client: %s is not a kernel manifest\n", manifest.c_str());
    return false;
  }
  for (const nlohmann::json& kernel : parsed.at("kernels")) {
    Job job;
    job.source_name = kernel.at("source").get<std::string>();
    if (!read_text(dir / job.source_name, job.source)) {
      std::fprintf(stderr, "client: cannot read %s\n", (dir / job.source_name).c_str());
      return false;
    }
    job.options = kernel.at("options").get<std::vector<std::string>>();
    job.options.push_back(kArchOption);
    for (const std::string& option : options.extra_options) job.options.push_back(option);
    // nlohmann's objects iterate in name order: the same order the Python client sorts into.
    const nlohmann::json& headers = kernel.at("headers");
    for (const auto& [name, header] : headers.items()) {
      std::string contents;
      if (!read_text(dir / header.get<std::string>(), contents)) {
        std::fprintf(stderr, "client: cannot read header %s\n", header.get<std::string>().c_str());
        return false;
      }
      job.headers.emplace_back(name, std::move(contents));
    }
    job.name_expressions = kernel.at("name_expressions").get<std::vector<std::string>>();
    job.label = dir.filename().string() + "/" + job.source_name;
    for (const std::string& option : job.options) job.label += " " + option;
    bool keep = options.only.empty();
    for (const std::string& wanted : options.only)
      keep = keep || job.label.find(wanted) != std::string::npos;
    if (keep) jobs.push_back(std::move(job));
  }
  return true;
}

std::string sha256_hex(const char* data, std::size_t size) {
  sha256_ctx context;
  sha256_init(&context);
  sha256_update(&context, size, reinterpret_cast<const std::uint8_t*>(data));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context, sizeof digest, digest);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const std::uint8_t byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

std::string result_text(const Api& api, Result result) {
  const char* name = api.get_error_string(result);
  return std::string(name != nullptr ? name : "(null)") + "(" + std::to_string(result) + ")";
}

// A log as the program would print it: the text up to its first NUL, each line marked, and the
// size hipRTC reported (which may or may not count the NUL).
void dump_log(const Api& api, Program program, std::string& out) {
  std::size_t size = 0;
  const Result size_result = api.get_program_log_size(program, &size);
  out += "  log_size " + result_text(api, size_result) + " " + std::to_string(size) + "\n";
  if (size_result != 0 || size == 0) return;
  std::string log(size + 1, '\0');
  out += "  log " + result_text(api, api.get_program_log(program, log.data())) + "\n";
  log.resize(std::strlen(log.c_str()));
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) out += "  | " + line + "\n";
}

void dump_blob(const Api& api, const char* what, Result (*get_size)(Program, std::size_t*),
               Result (*get)(Program, char*), Program program, std::string& out) {
  std::size_t size = 0;
  const Result size_result = get_size(program, &size);
  out += std::string("  ") + what + "_size " + result_text(api, size_result) + " " +
         std::to_string(size_result == 0 ? size : 0) + "\n";
  if (size_result != 0 || size == 0) return;
  std::vector<char> bytes(size);
  const Result result = get(program, bytes.data());
  out += std::string("  ") + what + " " + result_text(api, result);
  if (result == 0) out += " sha256 " + sha256_hex(bytes.data(), bytes.size());
  out += "\n";
}

// One job, every call an application makes, in the order it makes them; what each returned goes
// into the dump.
std::string run_job(const Api& api, const Job& job, bool bitcode) {
  std::string out = job.label + "\n";
  std::vector<const char*> names, contents;
  for (const auto& [name, text] : job.headers) {
    names.push_back(name.c_str());
    contents.push_back(text.c_str());
  }
  Program program = nullptr;
  const Result created =
      api.create_program(&program, job.source.c_str(), job.source_name.c_str(),
                         static_cast<int>(names.size()), contents.data(), names.data());
  out += "  create " + result_text(api, created) + "\n";
  if (created != 0) return out;
  for (const std::string& expression : job.name_expressions)
    out += "  add_name_expression " + expression + " " +
           result_text(api, api.add_name_expression(program, expression.c_str())) + "\n";
  std::vector<const char*> argv;
  for (const std::string& option : job.options) argv.push_back(option.c_str());
  const Result compiled = api.compile_program(program, static_cast<int>(argv.size()), argv.data());
  out += "  compile " + result_text(api, compiled) + "\n";
  dump_log(api, program, out);
  if (compiled == 0) {
    dump_blob(api, "code", api.get_code_size, api.get_code, program, out);
    for (const std::string& expression : job.name_expressions) {
      const char* lowered = nullptr;
      const Result result = api.get_lowered_name(program, expression.c_str(), &lowered);
      out += "  lowered " + expression + " " + result_text(api, result) + " " +
             (result == 0 && lowered != nullptr ? lowered : "-") + "\n";
    }
    if (bitcode) {
      if (api.get_bitcode_size != nullptr && api.get_bitcode != nullptr)
        dump_blob(api, "bitcode", api.get_bitcode_size, api.get_bitcode, program, out);
      else
        out += "  bitcode not in this library\n";
    }
  }
  out += "  destroy " + result_text(api, api.destroy_program(&program)) + "\n";
  return out;
}

// Runs every job over the option's threads and prints the dump. Threads take the next job as they
// finish one, as a program's compile pool does; the dump is printed in job order afterwards so
// that it is the same for any thread count.
void print_jobs(const Api& api, const std::vector<Job>& jobs, const Options& options) {
  std::vector<std::string> dumps(jobs.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++)
      dumps[i] = run_job(api, jobs[i], options.bitcode);
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 1; t < options.threads; ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  // --time: the compile loop alone (a bench's figure), on stderr so that the dump is unchanged.
  if (options.time)
    std::fprintf(stderr, "client: %zu jobs in %.6f s\n", jobs.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  for (std::size_t i = 0; i < jobs.size(); ++i) std::printf("job %zu %s", i, dumps[i].c_str());
  std::printf("jobs %zu\n", jobs.size());
}

void usage() {
  std::fprintf(stderr,
               "usage: client [--threads N] [--only TEXT]... [--option OPT]... [--bitcode] "
               "[--fork] [--time] [--library SONAME] MANIFEST...\n");
  std::exit(2);
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (word == "--threads") {
      options.threads = std::atoi(value().c_str());
      if (options.threads < 1) usage();
    } else if (word == "--only") {
      options.only.push_back(value());
    } else if (word == "--option") {
      options.extra_options.push_back(value());
    } else if (word == "--bitcode") {
      options.bitcode = true;
    } else if (word == "--time") {
      options.time = true;
    } else if (word == "--fork") {
      options.fork = true;
    } else if (word == "--library") {
      options.library = value();
    } else if (word.starts_with("--")) {
      usage();
    } else {
      options.manifests.push_back(word);
    }
  }
  if (options.manifests.empty()) usage();
  return options;
}

int run_client(const Api& api, const Options& options) {
  std::vector<Job> jobs;
  for (const std::string& manifest : options.manifests)
    if (!read_manifest(manifest, options, jobs)) return 1;

  int major = 0, minor = 0;
  const Result version = api.version(&major, &minor);
  std::printf("version %s %d.%d\n", result_text(api, version).c_str(), major, minor);

  print_jobs(api, jobs, options);
  if (!options.fork) return 0;
  // A program that forks after compiling, and compiles again in the child: the child's dump
  // follows the parent's.
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    std::perror("client: fork");
    return 1;
  }
  if (child == 0) {
    std::printf("forked child\n");
    print_jobs(api, jobs, options);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "client: the forked child failed (wait status %d)\n", status);
    return 1;
  }
  return 0;
}

}  // namespace client
