// SPDX-License-Identifier: MIT
// nvrtc_library.cpp - binds the handful of NVRTC entry points the serial baseline calls.
#include "nvrtc_library.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "support/environment.h"

namespace hipacm::bench::nvidia {

namespace {

void bind_nvrtc(backend::SymbolBinder& binder,
                NvrtcEntryPoints* api){HIPACM_BENCH_NVRTC_SYMBOLS(HIPACM_LIBRARY_REQUIRE)}

// The override comes first but does not replace the list. Pinned, as hipacm's own loader pins it:
// NVRTC keeps compiler state for the life of the process, and once unloaded, what it keeps can no
// longer be told apart from a leak of the bench's own (LeakSanitizer's suppressions name the
// library).
backend::BoundLibrary<NvrtcEntryPoints> load() {
  const backend::LibrarySearch search = {.name = "NVRTC",
                                         .override_variable = "HIPACM_NVRTC_LIBRARY",
                                         .lifetime = backend::DynamicLibrary::Lifetime::kPinned};
  std::vector<std::string> candidates;
  if (auto path = backend::environment_value("HIPACM_NVRTC_LIBRARY")) candidates.push_back(*path);
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    candidates.emplace_back(name);
  auto loaded = backend::find_library(search, candidates, &bind_nvrtc);
  if (!loaded) throw std::runtime_error(loaded.failure().message);
  return std::move(loaded).value();
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

NvrtcLibrary::NvrtcLibrary() : library_(load()) {}

std::string NvrtcLibrary::version() const {
  int major = 0, minor = 0;
  library_.api.nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::size_t NvrtcLibrary::compile_to_cubin(const SetKernel& kernel, const std::string& arch) const {
  const NvrtcEntryPoints& a = library_.api;
  ProgramGuard guard{a.nvrtcDestroyProgram};
  if (NvrtcResult r = a.nvrtcCreateProgram(&guard.program, kernel.source.c_str(),
                                           kernel.file.c_str(), 0, nullptr, nullptr);
      r != 0)
    throw std::runtime_error(kernel.file + ": nvrtcCreateProgram: " + a.nvrtcGetErrorString(r));
  for (const auto& expr : kernel.name_expressions)
    a.nvrtcAddNameExpression(guard.program, expr.c_str());

  std::vector<std::string> options = kernel.options;
  options.push_back("--gpu-architecture=" + arch);  // a real sm_ arch makes NVRTC emit a CUBIN
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const NvrtcResult compiled =
      a.nvrtcCompileProgram(guard.program, static_cast<int>(argv.size()), argv.data());
  if (compiled != 0) {
    std::size_t size = 0;
    a.nvrtcGetProgramLogSize(guard.program, &size);
    std::string log(size, '\0');
    if (size > 0) a.nvrtcGetProgramLog(guard.program, log.data());
    throw std::runtime_error(kernel.file + ": " + a.nvrtcGetErrorString(compiled) + "\n" + log);
  }
  std::size_t size = 0;
  if (NvrtcResult r = a.nvrtcGetCUBINSize(guard.program, &size); r != 0 || size == 0)
    throw std::runtime_error(kernel.file + ": no CUBIN: " + a.nvrtcGetErrorString(r));
  std::string cubin(size, '\0');
  a.nvrtcGetCUBIN(guard.program, cubin.data());
  return size;
}

}  // namespace hipacm::bench::nvidia
