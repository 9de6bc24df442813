// SPDX-License-Identifier: MIT
// nvrtc_client.cpp - an ordinary NVRTC client with no hipacm code: a few CUDA kernels compiled
// one program at a time, printed as a canonical dump (results, PTX/CUBIN sizes and SHA-256,
// lowered names, failure logs). Built twice: linked against libnvrtc (calls by name) and with
// NVRTC_CLIENT_DLOPEN (dlopen by soname and dlsym, as CuPy and PyTorch do).
#include <dlfcn.h>
#include <nettle/sha2.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  return n;
#else
  (void)soname;
  return {
      &nvrtcCreateProgram,  &nvrtcAddNameExpression, &nvrtcCompileProgram, &nvrtcGetProgramLogSize,
      &nvrtcGetProgramLog,  &nvrtcGetPTXSize,        &nvrtcGetPTX,         &nvrtcGetCUBINSize,
      &nvrtcGetCUBIN,       &nvrtcGetLTOIRSize,      &nvrtcGetLTOIR,       &nvrtcGetLoweredName,
      &nvrtcDestroyProgram, &nvrtcGetErrorString,    &nvrtcVersion};
#endif
}

constexpr const char* kSaxpy =
    R"(extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

constexpr const char* kTemplated = R"(#include "scale.cuh"
namespace blas {
template <class T, int N>
__global__ void scale(T* data, T factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) data[i] = scaled(data[i], factor) * SCALE;
}
template <class T>
__global__ void fill(T* data, T value) { data[threadIdx.x] = value; }
}  // namespace blas
)";
constexpr const char* kScaleHeader =
    "template <class T> __device__ T scaled(T v, T f) { return v * f; }\n";

constexpr const char* kReduce = R"(__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
extern "C" __global__ void reduce(const float* in, float* out) {
  float v = warp_sum(in[threadIdx.x]);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, __expf(v));
}
)";

constexpr const char* kBroken = R"(extern "C" __global__ void broken(float* p) {
  p[threadIdx.x] = undefined_function(p);
}
)";

struct Job {
  const char* name;
  const char* program_name;
  const char* source;
  std::vector<const char*> headers;  // (source, name) pairs
  std::vector<const char*> options;
  std::vector<const char*> expressions;
  bool both_outputs = false;  // also read the output the arch does not call for
  bool ltoir = false;
};

std::vector<Job> jobs() {
  return {
      {"saxpy sm_90", "saxpy.cu", kSaxpy, {}, {"-arch=sm_90"}, {}},
      {"saxpy compute_90", "saxpy.cu", kSaxpy, {}, {"--gpu-architecture=compute_90"}, {}},
      {"saxpy default arch", "saxpy.cu", kSaxpy, {}, {}, {}},
      {"templated",
       "templated.cu",
       kTemplated,
       {kScaleHeader, "scale.cuh"},
       {"--gpu-architecture=sm_90", "-std=c++17", "-DSCALE=3", "-default-device"},
       {"blas::scale<float, 256>", "&blas::fill<int>", "blas::scale<double, 64>"}},
      {"reduce fast math",
       "reduce.cu",
       kReduce,
       {},
       {"-arch=sm_80", "--use_fast_math", "-lineinfo"},
       {}},
      {"reduce both outputs", "reduce.cu", kReduce, {}, {"-arch=sm_90"}, {}, true},
      {"broken", "broken.cu", kBroken, {}, {"-arch=sm_90"}, {}},
      {"unknown option", "saxpy.cu", kSaxpy, {}, {"-arch=sm_90", "--no-such-option"}, {}},
      {"ltoir", "saxpy.cu", kSaxpy, {}, {"-arch=sm_90", "-dlto"}, {}, false, true},
  };
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
  std::string out = std::string("job ") + job.name + "\n";
  std::vector<const char*> sources, names;
  for (std::size_t i = 0; i + 1 < job.headers.size(); i += 2) {
    sources.push_back(job.headers[i]);
    names.push_back(job.headers[i + 1]);
  }
  nvrtcProgram prog = nullptr;
  nvrtcResult r =
      n.create(&prog, job.source, job.program_name, static_cast<int>(sources.size()),
               sources.empty() ? nullptr : sources.data(), names.empty() ? nullptr : names.data());
  out += "  create " + result_text(n, r) + "\n";
  if (r != NVRTC_SUCCESS) return out;
  for (const char* expression : job.expressions)
    out += std::string("  add ") + expression + " " +
           result_text(n, n.add_name_expression(prog, expression)) + "\n";
  r = n.compile(prog, static_cast<int>(job.options.size()), job.options.data());
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
  bool real_arch = false;
  for (const char* option : job.options) real_arch = real_arch || std::strstr(option, "sm_");
  if (job.ltoir) {
    out += output(n, prog, "ltoir", n.ltoir_size, n.ltoir);
  } else {
    if (!real_arch || job.both_outputs) out += output(n, prog, "ptx", n.ptx_size, n.ptx);
    if (real_arch || job.both_outputs) out += output(n, prog, "cubin", n.cubin_size, n.cubin);
  }
  for (const char* expression : job.expressions) {
    const char* lowered = nullptr;
    const nvrtcResult got = n.lowered_name(prog, expression, &lowered);
    out += std::string("  lowered ") + expression + " " + result_text(n, got) + " " +
           (lowered != nullptr ? lowered : "(null)") + "\n";
  }
  r = n.destroy(&prog);
  out += "  destroy " + result_text(n, r) + (prog == nullptr ? " cleared" : " kept") + "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* soname = "libnvrtc.so.13";
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--library") == 0 && i + 1 < argc) {
      soname = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--library SONAME] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  const Nvrtc n = load(soname);
  int major = 0, minor = 0;
  n.version(&major, &minor);
  std::printf("nvrtc %d.%d\n", major, minor);
  const std::vector<Job> all = jobs();
  // Each job's text lands in its own slot: the dump is in job order whatever the threads did.
  std::vector<std::string> dumps(all.size());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t j = static_cast<std::size_t>(t); j < all.size();
           j += static_cast<std::size_t>(threads))
        dumps[j] = run_job(n, all[j]);
    });
  for (std::thread& thread : pool) thread.join();
  for (const std::string& dump : dumps) std::fputs(dump.c_str(), stdout);
  std::printf("jobs %zu\n", all.size());
  return 0;
}
