// SPDX-License-Identifier: MIT
// rocm_facts.cpp - reads comgr's target list and hipRTC's identity straight from the libraries.
#include "tests/hip_backend/rocm_facts.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>

namespace hipacm::rocm_facts {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIsaPrefix = "amdgcn-amd-amdhsa--";

// Processors that ROCm releases after 5.2 added. The ones a comgr lacks (not added yet, or dropped
// again, as gfx940 and gfx941 were by ROCm 6.4) are real archs that its hipRTC would abort on.
constexpr const char* kLaterProcessors[] = {
    "gfx940",  "gfx941",  "gfx942",  "gfx950",  "gfx1100", "gfx1101", "gfx1102", "gfx1103",
    "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201", "gfx1250", "gfx1251"};

// Shaped like processors, known to no release.
constexpr const char* kFictionalProcessors[] = {"gfx9999", "gfx1999", "gfx8999"};

std::vector<std::string> mapped_files() {
  std::vector<std::string> files;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &files);
  return files;
}

bool base_name_starts_with(const std::string& path, std::string_view prefix) {
  return fs::path(path).filename().string().rfind(prefix, 0) == 0;
}

std::string resolved(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  return ec ? path : canonical.string();
}

std::string mapped_comgr_file() {
  for (const std::string& file : mapped_files())
    if (base_name_starts_with(file, "libamd_comgr.so")) return file;
  return "";
}

std::vector<std::string> comgr_candidates() {
  if (const std::string mapped = mapped_comgr_file(); !mapped.empty()) return {mapped};
  const char* chosen = std::getenv("HIPACM_COMGR_LIBRARY");
  if (chosen != nullptr && chosen[0] != '\0') return {chosen};
  return {"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"};
}

using IsaCount = int (*)(std::size_t*);
using IsaName = int (*)(std::size_t, const char**);
using Version = void (*)(std::size_t*, std::size_t*);

void read_processors(void* library, ComgrFacts* facts) {
  const auto count = reinterpret_cast<IsaCount>(dlsym(library, "amd_comgr_get_isa_count"));
  const auto name = reinterpret_cast<IsaName>(dlsym(library, "amd_comgr_get_isa_name"));
  if (count == nullptr || name == nullptr) {
    facts->error = facts->file + " lacks comgr's ISA entry points";
    return;
  }
  std::size_t total = 0;
  if (count(&total) != 0) {
    facts->error = "amd_comgr_get_isa_count failed in " + facts->file;
    return;
  }
  for (std::size_t i = 0; i < total; ++i) {
    const char* isa = nullptr;
    if (name(i, &isa) != 0 || isa == nullptr) continue;
    const std::string_view text(isa);
    if (text.substr(0, kIsaPrefix.size()) != kIsaPrefix) continue;
    std::string processor(text.substr(kIsaPrefix.size()));
    processor = processor.substr(0, processor.find(':'));
    const auto& known = facts->processors;
    if (!processor.empty() && std::find(known.begin(), known.end(), processor) == known.end())
      facts->processors.push_back(std::move(processor));
  }
  if (facts->processors.empty()) facts->error = facts->file + " lists no amdgcn-amd-amdhsa ISA";
}

// "libhiprtc.so.6.4.43484" -> 6, 4: the numbers after ".so.".
void read_release(const std::string& file, HiprtcFacts* facts) {
  const std::string name = fs::path(file).filename().string();
  const std::size_t so = name.find(".so.");
  if (so == std::string::npos) return;
  int major = 0, minor = 0;
  if (std::sscanf(name.c_str() + so + 4, "%d.%d", &major, &minor) == 2) {
    facts->release_major = major;
    facts->release_minor = minor;
  }
}

}  // namespace

ComgrFacts comgr() {
  ComgrFacts facts;
  for (const std::string& candidate : comgr_candidates()) {
    // RTLD_NODELETE: comgr carries LLVM, whose static state does not survive an unload.
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == nullptr) {
      const char* why = dlerror();
      facts.error += (facts.error.empty() ? "" : "; ") + std::string(why ? why : candidate);
      continue;
    }
    facts.error.clear();
    Dl_info info{};
    const void* symbol = dlsym(library, "amd_comgr_get_isa_count");
    facts.file =
        resolved(symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname ? info.dli_fname
                                                                                   : candidate);
    if (const auto version = reinterpret_cast<Version>(dlsym(library, "amd_comgr_get_version"))) {
      std::size_t major = 0, minor = 0;
      version(&major, &minor);
      facts.version = std::to_string(major) + "." + std::to_string(minor);
    }
    read_processors(library, &facts);
    dlclose(library);
    break;
  }
  return facts;
}

bool comgr_lists(std::string_view processor) {
  const std::vector<std::string> processors = comgr().processors;
  return std::find(processors.begin(), processors.end(), processor) != processors.end();
}

std::vector<std::string> later_processors() {
  return {std::begin(kLaterProcessors), std::end(kLaterProcessors)};
}

std::vector<std::string> unlisted_real_processors() {
  const std::vector<std::string> listed = comgr().processors;
  std::vector<std::string> unlisted;
  for (const char* processor : kLaterProcessors)
    if (std::find(listed.begin(), listed.end(), processor) == listed.end())
      unlisted.emplace_back(processor);
  return unlisted;
}

std::string unknown_processor() {
  const std::vector<std::string> listed = comgr().processors;
  for (const char* processor : kFictionalProcessors)
    if (std::find(listed.begin(), listed.end(), processor) == listed.end()) return processor;
  return "gfx99999";
}

bool comgr_mapped() { return !mapped_comgr_file().empty(); }

HiprtcFacts mapped_hiprtc() {
  using HiprtcVersion = int (*)(int*, int*);
  for (const std::string& file : mapped_files()) {
    if (!base_name_starts_with(file, "libhiprtc.so") &&
        !base_name_starts_with(file, "libamdhip64.so"))
      continue;
    void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) continue;
    void* symbol = dlsym(library, "hiprtcVersion");
    Dl_info info{};
    HiprtcFacts facts;
    // ROCm 6's libamdhip64 sits beside libhiprtc without defining hiprtcVersion itself.
    if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr &&
        resolved(info.dli_fname) == resolved(file)) {
      int major = 0, minor = 0;
      reinterpret_cast<HiprtcVersion>(symbol)(&major, &minor);
      facts.file = resolved(file);
      facts.version = std::to_string(major) + "." + std::to_string(minor);
      read_release(facts.file, &facts);
    }
    dlclose(library);
    if (!facts.file.empty()) return facts;
  }
  return {};
}

bool hip_runtime_header_installed() {
  std::vector<fs::path> include_dirs = {"/usr/include", "/usr/local/include", "/opt/rocm/include"};
  if (const char* rocm = std::getenv("ROCM_PATH"); rocm != nullptr && rocm[0] != '\0')
    include_dirs.push_back(fs::path(rocm) / "include");
  std::error_code ec;
  return std::any_of(include_dirs.begin(), include_dirs.end(), [&](const fs::path& dir) {
    return fs::exists(dir / "hip" / "hip_runtime.h", ec);
  });
}

}  // namespace hipacm::rocm_facts
