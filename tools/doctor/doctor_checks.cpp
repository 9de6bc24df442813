// doctor_checks.cpp - inspects the plugin, hipRTC, comgr, the worker, the cache, archs and devices.
#include "tools/doctor/doctor_checks.h"

#include <fmt/core.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/worker/worker_locator.h"
#include "tools/doctor/backend_probe.h"
#include "tools/cache_location.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::vector<std::string> glob_paths(const char* pattern) {
  std::vector<std::string> paths;
  glob_t matches{};
  if (::glob(pattern, 0, nullptr, &matches) == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  return paths;
}

Check named(const char* name) {
  Check check;
  check.name = name;
  return check;
}

Check plugin_check() {
  const PluginProbe plugin = probe_plugin();
  Check check = named("plugin");
  check.summary = fmt::format("libhipacm {} (ABI {}) at {}", plugin.version, plugin.abi_version,
                              plugin.path.empty() ? "?" : plugin.path);
  check.details = {
      {"version", plugin.version}, {"abi_version", plugin.abi_version}, {"path", plugin.path}};
  return check;
}

Check hiprtc_check() {
  const LibraryProbe hiprtc = probe_hiprtc();
  Check check = named("hiprtc");
  check.details = {{"found", hiprtc.found}, {"version", hiprtc.version}, {"path", hiprtc.path}};
  if (hiprtc.found) {
    check.summary = fmt::format("hipRTC {} at {}", hiprtc.version, hiprtc.path);
  } else {
    check.level = CheckLevel::kError;
    check.summary = "hipRTC not found: " + hiprtc.error;
    check.hint =
        "install libamdhip64-dev (Debian/Ubuntu: apt install libamdhip64-dev "
        "libhiprtc-builtins5), or set HIPACM_HIPRTC_LIBRARY to the library's path";
    check.details["error"] = hiprtc.error;
  }
  return check;
}

Check comgr_check() {
  std::vector<std::string> processors;
  const LibraryProbe comgr = probe_comgr(&processors);
  Check check = named("comgr");
  check.details = {{"found", comgr.found},
                   {"version", comgr.version},
                   {"path", comgr.path},
                   {"processors", processors}};
  if (comgr.found) {
    check.summary = fmt::format("comgr {} at {} ({} archs known)", comgr.version, comgr.path,
                                processors.size());
  } else {
    check.level = CheckLevel::kError;
    check.summary = "comgr not found (archs cannot be validated): " + comgr.error;
    check.hint =
        "install libamd-comgr2 (apt install libamd-comgr2), or set HIPACM_COMGR_LIBRARY to "
        "libamd_comgr.so's path";
    check.details["error"] = comgr.error;
  }
  return check;
}

Check worker_check() {
  const PluginProbe plugin = probe_plugin();
  const std::string plugin_dir = fs::path(plugin.path).parent_path().string();
  std::string why;
  const std::string worker = backend::find_worker_binary_beside(plugin_dir, &why);
  const std::string isolation = env("HIPACM_ISOLATION");
  Check check = named("worker");
  check.details = {{"found", !worker.empty()},
                   {"path", worker},
                   {"isolation", isolation.empty() ? "auto" : isolation}};
  if (!worker.empty()) {
    check.summary = "hipacm-worker at " + worker;
  } else {
    check.level = CheckLevel::kWarning;
    check.summary = "no hipacm-worker: compiles run one at a time, in-process; " + why;
    check.hint =
        "install hipacm-worker into <prefix>/libexec/hipacm/ (cmake --install), or set "
        "HIPACM_WORKER to its path";
    check.details["error"] = why;
  }
  return check;
}

Check cache_check() {
  const CacheLocation cache = resolve_cache_location("");
  const std::string policy = env("HIPACM_CACHE");
  const std::string system_cache = env("HIPACM_SYSTEM_CACHE");
  Check check = named("cache");
  check.details = {{"path", cache.path},          {"database", cache.database},
                   {"source", cache.source},      {"exists", cache.exists},
                   {"writable", cache.writable},  {"policy", policy.empty() ? "readwrite" : policy},
                   {"system_cache", system_cache}};
  if (policy == "off") {
    check.level = CheckLevel::kInfo;
    check.summary = "cache turned off by HIPACM_CACHE=off";
  } else if (cache.writable) {
    check.summary = fmt::format("cache at {} (from {}{})", cache.path, cache.source,
                                cache.exists ? "" : ", created on first use");
  } else {
    check.level = CheckLevel::kWarning;
    check.summary = cache.path.empty()
                        ? "no cache directory: " + cache.problem
                        : fmt::format("cache at {} is not writable: {}", cache.path, cache.problem);
    check.hint = "set HIPACM_CACHE_DIR to a writable directory (or pass --cache-dir to warmup)";
    check.details["error"] = cache.problem;
  }
  if (!system_cache.empty()) check.summary += "; read-only layer " + system_cache;
  if (!cache.network_fs.empty() && policy != "off") {
    // SQLite's locking is only as good as the network file system's; the
    // cache then uses a rollback journal instead of WAL (docs/CACHE.md).
    check.level = CheckLevel::kWarning;
    check.summary += fmt::format("; on a network file system ({})", cache.network_fs);
    check.hint =
        "prefer a local cache directory (HIPACM_CACHE_DIR) and ship shared kernels "
        "with 'hipacm cache export' / HIPACM_SYSTEM_CACHE";
    check.details["network_fs"] = cache.network_fs;
  }
  return check;
}

Check arch_check() {
  const std::string arch = default_arch();
  const std::string from_env = env("HIPACM_ARCH");
  Check check = named("arch");
  check.details = {{"default_arch", arch},
                   {"source", !from_env.empty() ? "HIPACM_ARCH" : (arch.empty() ? "" : "device")}};
  if (arch.empty()) {
    check.level = CheckLevel::kWarning;
    check.summary = "no default arch (HIPACM_ARCH is unset and no GPU was found)";
    check.hint = "set HIPACM_ARCH (e.g. export HIPACM_ARCH=gfx90a) or pass --arch to warmup";
    return check;
  }
  std::string error;
  if (!backend::validate_amdgpu_arch(arch, &error)) {
    check.level = CheckLevel::kWarning;
    check.summary = fmt::format("default arch '{}' is not usable: {}", arch, error);
    check.hint = "set HIPACM_ARCH to one of comgr's archs (hipacm doctor --json lists them)";
    check.details["error"] = error;
    return check;
  }
  check.summary =
      fmt::format("default arch {} (from {})", arch, from_env.empty() ? "the GPU" : "HIPACM_ARCH");
  return check;
}

Check devices_check() {
  std::vector<std::string> devices;
  if (fs::exists("/dev/kfd")) devices.emplace_back("/dev/kfd");
  for (const char* pattern : {"/dev/dri/renderD*", "/dev/nvidia[0-9]*"})
    for (std::string& path : glob_paths(pattern)) devices.push_back(std::move(path));
  Check check = named("devices");
  check.details = {{"devices", devices}};
  if (devices.empty()) {
    check.level = CheckLevel::kInfo;
    check.summary = "GPU devices: none (compiling needs none; loading modules does)";
    check.hint =
        "to load code objects, install the amdgpu kernel driver (/dev/kfd) and add "
        "this user to the 'render' and 'video' groups";
  } else {
    std::string list;
    for (const std::string& device : devices) list += (list.empty() ? "" : ", ") + device;
    check.summary = "GPU devices: " + list;
  }
  return check;
}

}  // namespace

std::vector<Check> run_doctor_checks() {
  return {plugin_check(), hiprtc_check(), comgr_check(),  worker_check(),
          cache_check(),  arch_check(),   devices_check()};
}

bool usable(const std::vector<Check>& checks) {
  return std::none_of(checks.begin(), checks.end(),
                      [](const Check& c) { return c.level == CheckLevel::kError; });
}

const char* level_name(CheckLevel level) {
  switch (level) {
    case CheckLevel::kOk:
      return "ok";
    case CheckLevel::kInfo:
      return "info";
    case CheckLevel::kWarning:
      return "warning";
    case CheckLevel::kError:
      return "error";
  }
  return "error";
}

}  // namespace hipacm::cli
