// SPDX-License-Identifier: MIT
// nvrtc_client.cpp - an ordinary NVRTC client with no hipacm code: the CUDA kernels of a manifest
// (nvrtc_kernels/) compiled one program at a time, printed as a canonical dump (results, PTX/CUBIN
// sizes and SHA-256, lowered names, failure logs), the same as nvrtc_ctypes_client.py prints. Built
// twice: linked against libnvrtc (calls by name) and with NVRTC_CLIENT_DLOPEN (dlopen by soname and
// dlsym, as CuPy and PyTorch do).
#include <dlfcn.h>
#include <nettle/sha2.h>
#include <nvrtc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

// The NVRTC calls the client makes, by name or from the dlopened library.
struct Nvrtc {
  decltype(&nvrtcCreateProgram) create;
  decltype(&nvrtcAddNameExpression) add_name_expression;
  decltype(&nvrtcCompileProgram) compile;
  decltype(&nvrtcGetProgramLogSize) log_size;
  decltype(&nvrtcGetProgramLog) log;
  decltype(&nvrtcGetPTXSize) ptx_size;
  decltype(&nvrtcGetPTX) ptx;
  decltype(&nvrtcGetCUBINSize) cubin_size;
  decltype(&nvrtcGetCUBIN) cubin;
  decltype(&nvrtcGetLTOIRSize) ltoir_size;
  decltype(&nvrtcGetLTOIR) ltoir;
  decltype(&nvrtcGetLoweredName) lowered_name;
  decltype(&nvrtcDestroyProgram) destroy;
  decltype(&nvrtcGetErrorString) error_string;
  decltype(&nvrtcVersion) version;
  void* handle;  // where the program looks calls up that it may lack (RTLD_DEFAULT when linked)
};

Nvrtc load(const char* soname) {
#ifdef NVRTC_CLIENT_DLOPEN
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", soname, dlerror());
    std::exit(2);
  }
  auto get = [&](auto* field, const char* name) {
    *field = reinterpret_cast<std::remove_reference_t<decltype(*field)>>(dlsym(handle, name));
    if (*field == nullptr) {
      std::fprintf(stderr, "%s has no %s\n", soname, name);
      std::exit(2);
    }
  };
  Nvrtc n{};
  get(&n.create, "nvrtcCreateProgram");
  get(&n.add_name_expression, "nvrtcAddNameExpression");
  get(&n.compile, "nvrtcCompileProgram");
  get(&n.log_size, "nvrtcGetProgramLogSize");
  get(&n.log, "nvrtcGetProgramLog");
  get(&n.ptx_size, "nvrtcGetPTXSize");
  get(&n.ptx, "nvrtcGetPTX");
  get(&n.cubin_size, "nvrtcGetCUBINSize");
  get(&n.cubin, "nvrtcGetCUBIN");
  get(&n.ltoir_size, "nvrtcGetLTOIRSize");
  get(&n.ltoir, "nvrtcGetLTOIR");
  get(&n.lowered_name, "nvrtcGetLoweredName");
  get(&n.destroy, "nvrtcDestroyProgram");
  get(&n.error_string, "nvrtcGetErrorString");
  get(&n.version, "nvrtcVersion");
  n.handle = handle;
  return n;
#else
  (void)soname;
  return {
      &nvrtcCreateProgram,  &nvrtcAddNameExpression, &nvrtcCompileProgram, &nvrtcGetProgramLogSize,
      &nvrtcGetProgramLog,  &nvrtcGetPTXSize,        &nvrtcGetPTX,         &nvrtcGetCUBINSize,
      &nvrtcGetCUBIN,       &nvrtcGetLTOIRSize,      &nvrtcGetLTOIR,       &nvrtcGetLoweredName,
      &nvrtcDestroyProgram, &nvrtcGetErrorString,    &nvrtcVersion,        RTLD_DEFAULT};
#endif
}

struct Job {
  std::string name;
  std::string program_name;  // the source file's name
  std::string source;
  std::vector<std::string> header_names, header_sources;
  std::vector<std::string> options;
  std::vector<std::string> expressions;
  std::vector<std::string> outputs;  // read after a successful compile: ptx, cubin, ltoir
  bool unnamed = false;              // created with a null program name
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The jobs of manifest.json (nvrtc_kernels/), with their files read.
std::vector<Job> read_jobs(const std::filesystem::path& manifest) {
  const nlohmann::json doc = nlohmann::json::parse(read_file(manifest));
  const std::filesystem::path folder = manifest.parent_path();
  std::vector<Job> jobs;
  for (const nlohmann::json& entry : doc.at("jobs")) {
    Job job;
    job.name = entry.at("name").get<std::string>();
    const std::string file = entry.at("source").get<std::string>();
    job.source = read_file(folder / file);
    // The program's name: the file's, or another one (CuPy names programs by temporary paths).
    job.program_name = entry.value("program_name", file);
    for (const auto& header : entry.value("headers", nlohmann::json::array())) {
      job.header_names.push_back(header.get<std::string>());
      job.header_sources.push_back(read_file(folder / job.header_names.back()));
    }
    job.options = entry.at("options").get<std::vector<std::string>>();
    job.expressions = entry.value("expressions", std::vector<std::string>());
    job.outputs = entry.at("outputs").get<std::vector<std::string>>();
    job.unnamed = entry.value("unnamed", false);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

std::string sha256(const std::string& bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  std::string hex;
  char two[3];
  for (uint8_t b : digest) {
    std::snprintf(two, sizeof two, "%02x", b);
    hex += two;
  }
  return hex;
}

std::string result_text(const Nvrtc& n, nvrtcResult r) {
  return std::string(n.error_string(r)) + "(" + std::to_string(static_cast<int>(r)) + ")";
}

// One output (PTX, CUBIN, LTO IR): its call's result, size and digest.
template <class Size, class Get>
std::string output(const Nvrtc& n, nvrtcProgram prog, const char* what, Size size_call,
                   Get get_call) {
  std::size_t size = 0;
  const nvrtcResult r = size_call(prog, &size);
  std::string out = std::string("  ") + what + " " + result_text(n, r);
  if (r != NVRTC_SUCCESS) return out + "\n";
  std::string bytes(size, '\0');
  const nvrtcResult got = size > 0 ? get_call(prog, bytes.data()) : NVRTC_SUCCESS;
  return out + " " + std::to_string(size) + " " + result_text(n, got) + " " + sha256(bytes) + "\n";
}

std::string run_job(const Nvrtc& n, const Job& job) {
  std::string out = "job " + job.name + "\n";
  const std::vector<const char*> sources = c_strings(job.header_sources);
  const std::vector<const char*> names = c_strings(job.header_names);
  nvrtcProgram prog = nullptr;
  nvrtcResult r =
      n.create(&prog, job.source.c_str(), job.unnamed ? nullptr : job.program_name.c_str(),
               static_cast<int>(sources.size()), sources.empty() ? nullptr : sources.data(),
               names.empty() ? nullptr : names.data());
  out += "  create " + result_text(n, r) + "\n";
  if (r != NVRTC_SUCCESS) return out;
  for (const std::string& expression : job.expressions)
    out += "  add " + expression + " " +
           result_text(n, n.add_name_expression(prog, expression.c_str())) + "\n";
  const std::vector<const char*> options = c_strings(job.options);
  r = n.compile(prog, static_cast<int>(options.size()), options.data());
  out += "  compile " + result_text(n, r) + "\n";
  std::size_t log_size = 0;
  const nvrtcResult sized = n.log_size(prog, &log_size);
  out += "  log_size " + result_text(n, sized) + " " + std::to_string(log_size) + "\n";
  std::string log(log_size, '\0');
  if (log_size > 0) n.log(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    std::size_t start = 0;
    const std::string text = log.c_str();
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      out += "  | " + text.substr(start, end - start) + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    n.destroy(&prog);
    return out;
  }
  for (const std::string& what : job.outputs) {
    if (what == "ptx") out += output(n, prog, "ptx", n.ptx_size, n.ptx);
    if (what == "cubin") out += output(n, prog, "cubin", n.cubin_size, n.cubin);
    if (what == "ltoir") out += output(n, prog, "ltoir", n.ltoir_size, n.ltoir);
  }
  for (const std::string& expression : job.expressions) {
    const char* lowered = nullptr;
    const nvrtcResult got = n.lowered_name(prog, expression.c_str(), &lowered);
    out += "  lowered " + expression + " " + result_text(n, got) + " " +
           (lowered != nullptr ? lowered : "(null)") + "\n";
  }
  r = n.destroy(&prog);
  out += "  destroy " + result_text(n, r) + (prog == nullptr ? " cleared" : " kept") + "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* soname = "libnvrtc.so.13";
  const char* manifest = nullptr;
  int threads = 1;
  bool time_loop = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--time") == 0) {
      time_loop = true;
    } else if (std::strcmp(argv[i], "--library") == 0 && i + 1 < argc) {
      soname = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (argv[i][0] != '-' && manifest == nullptr) {
      manifest = argv[i];
    } else {
      manifest = nullptr;
      break;
    }
  }
  if (manifest == nullptr || threads < 1) {
    std::fprintf(stderr, "usage: %s [--library SONAME] [--threads N] [--time] MANIFEST\n", argv[0]);
    return 2;
  }
  const Nvrtc n = load(soname);
  int major = 0, minor = 0;
  n.version(&major, &minor);
  std::printf("nvrtc %d.%d\n", major, minor);
  // Probes for calls a release may lack, as programs written for several releases make them.
  for (const char* name : {"nvrtcGetNVVM", "nvrtcGetLTOIR", "nvrtcGetPCHCreateStatus"})
    std::printf("has %s %s\n", name, dlsym(n.handle, name) != nullptr ? "yes" : "no");
  const std::vector<Job> all = read_jobs(manifest);
  // Each job's text lands in its own slot: the dump is in job order whatever the threads did.
  // Threads take the next job as they finish one, as a program's compile pool does.
  std::vector<std::string> dumps(all.size());
  std::atomic<std::size_t> next{0};
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t j = next++; j < all.size(); j = next++) dumps[j] = run_job(n, all[j]);
    });
  for (std::thread& thread : pool) thread.join();
  // --time: the compile loop alone (a bench's figure), on stderr so that the dump is unchanged.
  if (time_loop)
    std::fprintf(stderr, "client: %zu jobs in %.6f s\n", all.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  for (const std::string& dump : dumps) std::fputs(dump.c_str(), stdout);
  std::printf("jobs %zu\n", all.size());
  return 0;
}
