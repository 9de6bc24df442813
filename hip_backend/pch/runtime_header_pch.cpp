// SPDX-License-Identifier: MIT
// runtime_header_pch.cpp - the options a runtime-header PCH may serve, its key, and the PCH that
// hipRTC's own first step emits.
#include "hip_backend/pch/runtime_header_pch.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string_view>

#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "support/bytes/sha256.h"
#include "support/files/unique_fd.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"

namespace hipacm::backend {
namespace {

bool option_in(std::string_view option, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), option) != list.end();
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool pch_safe_option(std::string_view o) {
  if (o.size() > 2 && (starts_with(o, "-D") || starts_with(o, "-U"))) return true;
  if (option_in(o, {"-O", "-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-w"})) return true;
  if (starts_with(o, "-std=") || starts_with(o, "--std=") || starts_with(o, "-ffp-contract=") ||
      starts_with(o, "--gpu-architecture=") || starts_with(o, "--offload-arch="))
    return true;
  return option_in(
      o, {"-ffast-math", "-fno-fast-math", "-funsafe-math-optimizations",
          "-fno-unsafe-math-optimizations", "-ffinite-math-only", "-fno-finite-math-only",
          "-fgpu-flush-denormals-to-zero", "-fno-gpu-flush-denormals-to-zero",
          "-fhip-fp32-correctly-rounded-divide-sqrt", "-fno-hip-fp32-correctly-rounded-divide-sqrt",
          "-mcumode", "-mno-cumode", "-mwavefrontsize64", "-mno-wavefrontsize64",
          "-munsafe-fp-atomics", "-mno-unsafe-fp-atomics"});
}

/// The whole of a plausible PCH file (open_plausible_pch).
bool read_plausible_pch(const std::string& path, std::string* bytes) {
  std::size_t size = 0;
  UniqueFd fd(open_plausible_pch(path, &size));
  if (!fd.valid()) return false;
  bytes->assign(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd.get(), bytes->data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

/// The names in `dir`, or none when it cannot be read.
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
  }
  return names;
}

/// The one PCH among the outputs comgr kept in `temp_dir` (comgr-*/output/*).
Expected<std::string> find_kept_pch(const std::string& temp_dir) {
  std::string pch;
  int found = 0;
  for (const std::string& action : entries_of(temp_dir)) {
    if (action.rfind("comgr-", 0) != 0) continue;
    const std::string outputs = temp_dir + "/" + action + "/output";
    for (const std::string& name : entries_of(outputs)) {
      std::string bytes;
      if (read_plausible_pch(outputs + "/" + name, &bytes)) {
        ++found;
        pch = std::move(bytes);
      }
    }
  }
  if (found == 1) return pch;
  return Failure{HIPACM_ERROR_INTERNAL,
                 found == 0 ? "hipRTC's first step left no PCH in " + temp_dir
                            : "hipRTC's first step left more than one PCH in " + temp_dir};
}

Expected<void> write_file(const std::string& path, const std::string& bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  std::size_t done = 0;
  while (fd.valid() && done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (fd.valid() && done == bytes.size()) return {};
  return Failure{HIPACM_ERROR_INTERNAL, "cannot write " + path + ": " + std::strerror(errno)};
}

}  // namespace

Expected<void> runtime_header_pch_supported() {
  const Expected<const RocmToolchain*> toolchain = rocm_toolchain();
  if (!toolchain) return toolchain.failure();
  const std::string& hiprtc_path = toolchain.value()->hiprtc_path;
  if (file_base_name(real_file_path(hiprtc_path)).rfind("libamdhip64.so.5", 0) == 0) return {};
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, "no runtime-header PCH with " + hiprtc_path};
}

Expected<void> runtime_header_pch_applies(const std::vector<std::string>& hiprtc_options) {
  for (const std::string& option : hiprtc_options) {
    if (!pch_safe_option(option))
      return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                     "option '" + option + "' keeps the plain compile"};
  }
  return {};
}

std::optional<std::string> runtime_header_pch_key(const std::string& arch,
                                                  const std::vector<std::string>& hiprtc_options) {
  const Expected<const RocmToolchain*> loaded = rocm_toolchain();
  if (!loaded || loaded.value()->fingerprint.empty()) return std::nullopt;
  const RocmToolchain* toolchain = loaded.value();
  Sha256 key;
  key.add_field("hipacm-runtime-header-pch-1");
  for (const std::string& component : toolchain->components) key.add_field(component);
  key.add_field(arch);
  key.add_count(hiprtc_options.size());
  for (const std::string& option : hiprtc_options) key.add_field(option);
  return key.hex();
}

Expected<void> emit_runtime_header_pch(const CompileRequest& request, const std::string& temp_dir,
                                       const std::string& out_path) {
  const Expected<const HiprtcApi*> loaded = load_hiprtc();
  if (!loaded) return loaded.failure();
  const HiprtcApi* api = loaded.value();
  static constexpr const char* kSource = "// hipacm: the runtime header alone\n";
  CompileRequest alone;
  alone.source = kSource;
  alone.source_name = "pch.hip";
  alone.arch = request.arch;
  alone.options = request.options;
  std::vector<std::string> options = hiprtc_compile_options(alone);
  // -emit-pch overrides the first step's -emit-llvm-bc; the embedded input and the missing
  // timestamp make the PCH independent of comgr's temporary files and of when it was built.
  for (const char* flag : {"-emit-pch", "-fmodules-embed-all-files", "-fno-pch-timestamp"}) {
    options.push_back("-Xclang");
    options.push_back(flag);
  }
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  {
    const RocmBackendLock lock;
    hiprtc_program program = nullptr;
    if (api->hiprtcCreateProgram(&program, kSource, "pch.hip", 0, nullptr, nullptr) != 0) {
      return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                     "hipRTC could not create the program that precompiles its header"};
    }
    // Fails by design once the steps after the first meet a PCH instead of bitcode.
    api->hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    api->hiprtcDestroyProgram(&program);
  }
  const Expected<std::string> pch = find_kept_pch(temp_dir);
  if (!pch) return pch.failure();
  return write_file(out_path, pch.value());
}

}  // namespace hipacm::backend
