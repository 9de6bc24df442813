// SPDX-License-Identifier: MIT
// nvrtc_api.cpp - finds and binds NVRTC at run time, once per process.
#include "hip_backend/nvrtc/nvrtc_api.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <mutex>

#include "support/environment.h"
#include "support/no_destructor.h"
#include "support/pid_lock.h"
#include "support/settings.h"

namespace hipacm::backend {

namespace {

constexpr std::array<const char*, 3> kSonames = {"libnvrtc.so.13", "libnvrtc.so.12",
                                                 "libnvrtc.so.11"};

// The sonames on the default search path, then in each CUDA installation's lib64.
std::vector<std::string> nvrtc_default_candidates() {
  std::vector<std::string> candidates(kSonames.begin(), kSonames.end());
  std::vector<std::string> directories;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto root = environment_value(variable)) directories.push_back(*root + "/lib64");
  }
  directories.emplace_back("/usr/local/cuda/lib64");
  for (const std::string& directory : directories) {
    for (const char* soname : kSonames) candidates.push_back(directory + "/" + soname);
  }
  return candidates;
}

// Pinned (the default): NVRTC keeps its builtins library and threads alive past a close.
LibrarySearch nvrtc_search() {
  return {.name = "NVRTC",
          .override_variable = settings::name(settings::Id::kNvrtcLibrary),
          .defaults = nvrtc_default_candidates()};
}

void bind_nvrtc(SymbolBinder& binder, NvrtcApi* api) {
  HIPACM_NVRTC_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
}

void fill_identity(NvrtcApi* api) {
  int major = 0;
  int minor = 0;
  if (api->nvrtcVersion(&major, &minor) == kNvrtcSuccess) {
    api->version = std::to_string(major) + "." + std::to_string(minor);
  }
  int count = 0;
  if (api->nvrtcGetNumSupportedArchs(&count) == kNvrtcSuccess && count > 0 && count < 4096) {
    api->supported_archs.resize(static_cast<std::size_t>(count));
    if (api->nvrtcGetSupportedArchs(api->supported_archs.data()) != kNvrtcSuccess) {
      api->supported_archs.clear();
    }
  }
}

constexpr LibrarySpec<NvrtcApi> kNvrtc = {&nvrtc_search, &bind_nvrtc, &fill_identity};

}  // namespace

std::vector<std::string> nvrtc_library_candidates() { return kNvrtc.candidates(); }

Expected<LoadedNvrtc> load_nvrtc_from(const std::vector<std::string>& candidates) {
  return kNvrtc.find(candidates);
}

Expected<const NvrtcApi*> load_nvrtc() {
  static NoDestructor<LazyLibrary<NvrtcApi>> library("cannot load NVRTC", kNvrtc);
  Expected<const NvrtcApi*> api = library->api();
  if (api) return api;
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(api).failure().message};
}

namespace {

// The NVRTC files a process has loaded besides load_nvrtc()'s. Entries live until exit: their
// tables are handed out.
struct LoadedFiles {
  static constexpr std::size_t kMaxFiles = 8;
  PidLock lock;  // held for lookups and inserts only, never while a library loads
  std::vector<std::unique_ptr<LoadedNvrtc>> files;

  const NvrtcApi* find(const std::string& file) {
    std::lock_guard<PidLock> guard(lock);
    for (const auto& loaded : files)
      if (loaded->api.library_path == file) return &loaded->api;
    return nullptr;
  }
};

// Why a worker must not run the code in `file`, or "" when it may: a regular file that only this
// user or root can change.
std::string untrusted_library(const std::string& file) {
  struct stat st {};
  if (file.empty() || file.front() != '/' || ::stat(file.c_str(), &st) != 0)
    return "'" + file + "' is not a file";
  if (!S_ISREG(st.st_mode)) return "'" + file + "' is not a regular file";
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return "'" + file + "' belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "'" + file + "' is writable by others";
  return "";
}

}  // namespace

Expected<const NvrtcApi*> load_nvrtc_file(const std::string& file) {
  // Not load_nvrtc()'s table even where it is the same file: the program's process would load
  // a second NVRTC just to compare. dlopen of a file already loaded is cheap.
  static NoDestructor<LoadedFiles> loaded_files;
  if (const NvrtcApi* found = loaded_files->find(file)) return found;
  if (std::string why = untrusted_library(file); !why.empty())
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, "cannot load NVRTC: " + why};
  Expected<LoadedNvrtc> opened = load_nvrtc_from({file});
  if (!opened)
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(opened).failure().message};
  auto entry = std::make_unique<LoadedNvrtc>(std::move(opened).value());
  entry->api.library_path = file;  // as the request names it, which find() compares
  std::lock_guard<PidLock> guard(loaded_files->lock);
  for (const auto& loaded : loaded_files->files)
    if (loaded->api.library_path == file) return &loaded->api;  // another thread was first
  if (loaded_files->files.size() >= LoadedFiles::kMaxFiles)
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "cannot load NVRTC from '" + file + "': this process already loaded " +
                       std::to_string(LoadedFiles::kMaxFiles) + " other NVRTC files"};
  loaded_files->files.push_back(std::move(entry));
  return &loaded_files->files.back()->api;
}

std::string nvrtc_version_string() {
  const Expected<const NvrtcApi*> loaded = load_nvrtc();
  if (!loaded) return "nvrtc unavailable";
  const NvrtcApi* api = loaded.value();
  return "nvrtc " + api->version + " (" + api->library_path + ")";
}

std::string nvrtc_result_name(nvrtc_result result) {
  return rtc_result_name("NVRTC", "nvrtcResult", result, 18);
}

}  // namespace hipacm::backend
