// nvrtc_library.cpp - binds the handful of NVRTC entry points the serial baseline calls.
#include "nvrtc_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace hipacm::bench::nvidia {

// NVRTC's C API, declared here so the benchmark builds without the CUDA toolkit.
using NvrtcResult = int;
using NvrtcProgram = void*;

struct NvrtcLibrary::Api {
  NvrtcResult (*version)(int*, int*) = nullptr;
  NvrtcResult (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                        const char* const*) = nullptr;
  NvrtcResult (*destroy)(NvrtcProgram*) = nullptr;
  NvrtcResult (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*cubin_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*cubin)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*log_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*log)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*add_name_expression)(NvrtcProgram, const char*) = nullptr;
  const char* (*error_string)(NvrtcResult) = nullptr;
};

namespace {

template <typename Fn>
void bind(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (out == nullptr) throw std::runtime_error(std::string("NVRTC lacks ") + name);
}

/// Destroys the program however the compile ends.
struct ProgramGuard {
  NvrtcResult (*destroy)(NvrtcProgram*);
  NvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program != nullptr) destroy(&program);
  }
};

}  // namespace

NvrtcLibrary::NvrtcLibrary() : api_(std::make_unique<Api>()) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("HIPACM_NVRTC_LIBRARY"); env && *env)
    candidates.emplace_back(env);
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    candidates.emplace_back(name);
  std::string tried;
  for (const auto& candidate : candidates) {
    handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = candidate;
      break;
    }
    const char* err = dlerror();
    tried += "\n  " + candidate + ": " + (err ? err : "not loadable");
  }
  if (handle_ == nullptr) throw std::runtime_error("cannot load NVRTC; tried:" + tried);
  Api& a = *api_;
  bind(handle_, "nvrtcVersion", a.version);
  bind(handle_, "nvrtcCreateProgram", a.create);
  bind(handle_, "nvrtcDestroyProgram", a.destroy);
  bind(handle_, "nvrtcCompileProgram", a.compile);
  bind(handle_, "nvrtcGetCUBINSize", a.cubin_size);
  bind(handle_, "nvrtcGetCUBIN", a.cubin);
  bind(handle_, "nvrtcGetProgramLogSize", a.log_size);
  bind(handle_, "nvrtcGetProgramLog", a.log);
  bind(handle_, "nvrtcAddNameExpression", a.add_name_expression);
  bind(handle_, "nvrtcGetErrorString", a.error_string);
}

NvrtcLibrary::~NvrtcLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NvrtcLibrary::version() const {
  int major = 0, minor = 0;
  api_->version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::size_t NvrtcLibrary::compile_to_cubin(const SetKernel& kernel, const std::string& arch) const {
  const Api& a = *api_;
  ProgramGuard guard{a.destroy};
  if (NvrtcResult r =
          a.create(&guard.program, kernel.source.c_str(), kernel.file.c_str(), 0, nullptr, nullptr);
      r != 0)
    throw std::runtime_error(kernel.file + ": nvrtcCreateProgram: " + a.error_string(r));
  for (const auto& expr : kernel.name_expressions)
    a.add_name_expression(guard.program, expr.c_str());

  std::vector<std::string> options = kernel.options;
  options.push_back("--gpu-architecture=" + arch);  // a real sm_ arch makes NVRTC emit a CUBIN
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const NvrtcResult compiled = a.compile(guard.program, static_cast<int>(argv.size()), argv.data());
  if (compiled != 0) {
    std::size_t size = 0;
    a.log_size(guard.program, &size);
    std::string log(size, '\0');
    if (size > 0) a.log(guard.program, log.data());
    throw std::runtime_error(kernel.file + ": " + a.error_string(compiled) + "\n" + log);
  }
  std::size_t size = 0;
  if (NvrtcResult r = a.cubin_size(guard.program, &size); r != 0 || size == 0)
    throw std::runtime_error(kernel.file + ": no CUBIN: " + a.error_string(r));
  std::string cubin(size, '\0');
  a.cubin(guard.program, cubin.data());
  return size;
}

}  // namespace hipacm::bench::nvidia
