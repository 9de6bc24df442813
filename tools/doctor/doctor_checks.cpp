// SPDX-License-Identifier: MIT
// doctor_checks.cpp - inspects the plugin, hipRTC, comgr, the worker, the cache, archs, devices and
// whether programs started here would be intercepted (`hipacm run`).
#include "tools/doctor/doctor_checks.h"

#include <fmt/core.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <utility>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/hiprtc_release.h"
#include "hip_backend/machine/machine_budget.h"
#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/pch/runtime_header_pch_store.h"
#include "hip_backend/pool/prestart_setting.h"
#include "hip_backend/pool/worker_locator.h"
#include "hip_backend/pool/worker_process.h"
#include "hip_backend/service/service_client.h"
#include "support/environment.h"
#include "support/libraries/dynamic_library.h"
#include "support/settings.h"
#include "tools/common/intercept_library.h"
#include "tools/doctor/backend_probe.h"
#include "tools/doctor/cache_location.h"
#include "tools/doctor/remote_check.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

using settings::Id;

// A variable's name, for the summaries and hints that say what to set.
const char* var(Id id) { return settings::name(id); }

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

// Makes `check` a problem: its level, what was found, what to do, and the error in the details.
void flag(Check& check, CheckLevel level, std::string summary, std::string hint,
          const std::string& error) {
  check.level = level;
  check.summary = std::move(summary);
  check.hint = std::move(hint);
  check.details["error"] = error;
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

// A compiler library: found, or an error saying what to install. `more` goes into the details
// after what every library reports (found, version, path).
Check library_check(const char* name, const LibraryProbe& probe, nlohmann::ordered_json more,
                    std::string found_summary, const std::string& missing, std::string hint) {
  Check check = named(name);
  check.details = {{"found", probe.found}, {"version", probe.version}, {"path", probe.path}};
  check.details.update(more);
  if (probe.found)
    check.summary = std::move(found_summary);
  else
    flag(check, CheckLevel::kError, missing + ": " + probe.error, hint, probe.error);
  return check;
}

// Package names differ by ROCm generation; a runtime-only install has no -dev symlinks, which
// hipacm does not need.
std::string hiprtc_hint() {
  return fmt::format(
      "install hipRTC: Debian 13+/Ubuntu 25.04+: apt install libhiprtc6 (ROCm 6.4) or libhiprtc7 "
      "(ROCm 7); Debian 12: apt install libamdhip64-5 libhiprtc-builtins5 (ROCm 5.2); AMD's "
      "packages install under /opt/rocm. Or set ROCM_PATH to a ROCm install, or {} to the "
      "library's path",
      var(Id::kHiprtcLibrary));
}

std::string where(const ToolchainProbe& toolchain) {
  return toolchain.release.empty() ? "" : " (" + toolchain.release + ")";
}

Check hiprtc_check(const ToolchainProbe& toolchain) {
  const LibraryProbe hiprtc = probe_hiprtc();
  Check check =
      library_check("hiprtc", hiprtc,
                    {{"release", toolchain.release},
                     {"identity", toolchain.identity},
                     {"toolchain", toolchain.components},
                     {"rocm_install_trees", toolchain.install_trees}},
                    fmt::format("hipRTC {}{} at {}", hiprtc.version, where(toolchain), hiprtc.path),
                    "hipRTC not found", hiprtc_hint());
  if (hiprtc.found && !toolchain.mixed.empty())
    flag(check, CheckLevel::kError, toolchain.mixed,
         "use one ROCm install: its hipRTC loads its own comgr", toolchain.mixed);
  return check;
}

Check comgr_check(const ToolchainProbe& toolchain) {
  std::vector<std::string> processors;
  const LibraryProbe comgr = probe_comgr(&processors);
  const bool hiprtc_loads_it =
      !toolchain.comgr_path.empty() &&
      backend::real_file_path(toolchain.comgr_path) == backend::real_file_path(comgr.path);
  return library_check(
      "comgr", comgr, {{"processors", processors}, {"loaded_by_hiprtc", hiprtc_loads_it}},
      fmt::format("comgr {} at {} ({}{} archs known)", comgr.version, comgr.path,
                  hiprtc_loads_it ? "the one hipRTC loads; " : "", processors.size()),
      "comgr not found (archs cannot be validated)",
      fmt::format("comgr comes with hipRTC's ROCm: libamd-comgr3 (ROCm 6.4+) or libamd-comgr2 "
                  "(ROCm 5); or set {} to the path of the comgr that hipRTC uses",
                  var(Id::kComgrLibrary)));
}

Check worker_check() {
  const PluginProbe plugin = probe_plugin();
  const std::string plugin_dir = fs::path(plugin.path).parent_path().string();
  const Expected<std::string> found = backend::find_worker_binary_beside(plugin_dir);
  const std::string why = found ? std::string() : found.failure().message;
  const std::string worker = found ? found.value() : std::string();
  const std::string isolation = settings::isolation_word().value_or("");
  Check check = named("worker");
  check.details = {{"found", !worker.empty()},
                   {"path", worker},
                   {"isolation", isolation.empty() ? "auto" : isolation}};
  const backend::MachineBudget& budget = backend::MachineBudget::instance();
  const std::optional<unsigned> in_use = budget.slots_in_use();
  check.details["machine_jobs"] = budget.limit();
  check.details["machine_jobs_in_use"] = in_use ? nlohmann::ordered_json(*in_use) : nullptr;
  check.details["machine_slot_file"] = budget.slot_file();
  if (!budget.disabled_reason().empty())
    check.details["machine_jobs_off_because"] = budget.disabled_reason();
  std::string prestart_error;  // only whether the value parses: any mode size will do
  const std::optional<unsigned> prestart =
      backend::prestart_workers_from_environment(1, &prestart_error);
  check.details["prestart_workers"] = settings::text(Id::kPrestartWorkers).value_or("off");
  std::string service_problem;
  const backend::CompileServiceSetting service_setting =
      backend::compile_service_setting(&service_problem);
  const bool service = backend::compile_service_requested();
  check.details["compile_service"] =
      service_setting == backend::CompileServiceSetting::kAuto ? "auto"
      : service_setting == backend::CompileServiceSetting::kOn ? "on"
                                                               : "off";
  check.details["compile_service_used"] = service;
  if (!service_problem.empty()) check.details["compile_service_problem"] = service_problem;
  std::string service_text;
  if (service_setting == backend::CompileServiceSetting::kAuto && !service) {
    const std::string declined = backend::compile_service_auto_declined();
    check.details["compile_service_declined_because"] =
        declined.empty() ? std::string("this process is privileged") : declined;
  }
  if (!service) service_text = "; no compile service";
  if (service && !worker.empty()) {
    const Expected<std::string> named =
        backend::compile_service_socket(worker, backend::WorkerProcess::environment_for("/"));
    const std::string service_why = named ? std::string() : named.failure().message;
    const std::string socket = named ? named.value() : std::string();
    const pid_t pid = backend::compile_service_pid(socket);
    check.details["compile_service_socket"] = socket;
    check.details["compile_service_pid"] = pid > 0 ? nlohmann::ordered_json(pid) : nullptr;
    if (socket.empty()) {
      check.details["compile_service_unusable_because"] = service_why;
      service_text = "; compile service unusable (" + service_why + ")";
    } else {
      service_text = pid > 0 ? fmt::format("; compile service running (pid {})", pid)
                             : std::string("; compile service starts on the first compile");
    }
  }
  // The directory the service, the budget, the PCH store and the facts live in: a default
  // that another user made first, or a named one that is not hipacm's, turns them off.
  const backend::RuntimeDirChoice runtime = backend::choose_runtime_dir();
  const Expected<void> runtime_made = backend::make_runtime_directory(runtime.path);
  const bool runtime_usable = runtime_made.has_value();
  const std::string runtime_problem = runtime_made.failure().message;
  check.details["runtime_dir"] = runtime.path;
  check.details["runtime_dir_usable"] = runtime_usable;
  if (!runtime_usable) check.details["runtime_dir_unusable_because"] = runtime_problem;
  if (!runtime.passed_over.empty()) {
    check.details["runtime_dir_passed_over"] = runtime.passed_over;
    check.details["runtime_dir_passed_over_because"] = runtime.passed_over_because;
  }
  std::string pch_problem;
  const backend::RuntimeHeaderPchSetting pch_setting =
      backend::runtime_header_pch_setting(&pch_problem);
  const bool pch = pch_setting != backend::RuntimeHeaderPchSetting::kOff;
  const backend::RuntimeHeaderPchStore pch_store = backend::RuntimeHeaderPchStore::in_runtime_dir();
  const backend::RuntimeHeaderPchStore::Counts pch_counts = pch_store.counts();
  check.details["hiprtc_pch"] = pch_setting == backend::RuntimeHeaderPchSetting::kCheck ? "check"
                                : pch                                                   ? "on"
                                                                                        : "off";
  check.details["hiprtc_pch_dir"] = pch_store.root();
  check.details["hiprtc_pch_ready"] = pch_counts.ready;
  check.details["hiprtc_pch_refused"] = pch_counts.refused;
  const std::string pch_text = pch ? fmt::format("; {} runtime-header PCHs ready", pch_counts.ready)
                                   : std::string("; runtime-header PCH off");
  const std::string budget_text =
      budget.limit() == 0
          ? std::string("no machine-wide worker budget") +
                (budget.disabled_reason().empty() ? "" : " (" + budget.disabled_reason() + ")")
          : fmt::format("machine-wide budget {} compiling workers ({} in use now)", budget.limit(),
                        in_use ? std::to_string(*in_use) : "?");
  if (!prestart)
    flag(check, CheckLevel::kError, prestart_error + ": every mode enter fails",
         fmt::format("set {} to off, on or a number, or unset it", var(Id::kPrestartWorkers)),
         prestart_error);
  else if (!pch_problem.empty())
    flag(check, CheckLevel::kWarning, pch_problem + ": workers read it as on",
         fmt::format("set {} to on, off or check, or unset it", var(Id::kHiprtcPch)), pch_problem);
  else if (!service_problem.empty())
    flag(check, CheckLevel::kWarning, service_problem,
         settings::text(Id::kCompileService)
             ? fmt::format("set {} to auto, on or off, or unset it", var(Id::kCompileService))
             : fmt::format("give service= in {} as auto, on or off, or leave it out",
                           var(Id::kIsolation)),
         service_problem);
  else if (!runtime.passed_over.empty())
    flag(check, CheckLevel::kWarning,
         "the runtime directory " + runtime.passed_over + " cannot be used (" +
             runtime.passed_over_because + "); " +
             (runtime_usable ? "using " + runtime.path + " instead"
                             : std::string("the compile service, the machine-wide budget, the "
                                           "runtime-header PCHs and the library facts are off")),
         fmt::format("another user may have made it before you: remove it (or ask its owner to), "
                     "or set XDG_RUNTIME_DIR or {} to a private directory",
                     var(Id::kRuntimeDir)),
         runtime.passed_over_because);
  else if (!runtime_usable)
    flag(check, CheckLevel::kWarning,
         "the runtime directory cannot be used: " + runtime_problem +
             "; the compile service, the machine-wide budget, the runtime-header PCHs and the "
             "library facts are off",
         fmt::format("set {} to an empty directory of mode 0700 (or one hipacm made), or unset it",
                     var(Id::kRuntimeDir)),
         runtime_problem);
  else if (!worker.empty())
    check.summary = "hipacm-worker at " + worker + "; " + budget_text + service_text + pch_text;
  else
    flag(check, CheckLevel::kWarning,
         "no hipacm-worker: compiles run one at a time, in-process; " + why,
         fmt::format("install hipacm-worker into <prefix>/libexec/hipacm/ (cmake --install), or "
                     "set {} to its path",
                     var(Id::kWorker)),
         why);
  return check;
}

Check cache_check() {
  const CacheLocation cache = resolve_cache_location("");
  const std::string policy = settings::text(Id::kCache).value_or("");
  const std::string system_cache = settings::system_cache().value_or("");
  Check check = named("cache");
  check.details = {{"path", cache.path},          {"database", cache.database},
                   {"source", cache.source},      {"exists", cache.exists},
                   {"writable", cache.writable},  {"policy", policy.empty() ? "readwrite" : policy},
                   {"system_cache", system_cache}};
  if (policy == "off") {
    check.level = CheckLevel::kInfo;
    check.summary = fmt::format("cache turned off by {}=off", var(Id::kCache));
  } else if (cache.writable) {
    check.summary = fmt::format("cache at {} (from {}{})", cache.path, cache.source,
                                cache.exists ? "" : ", created on first use");
  } else {
    flag(check, CheckLevel::kWarning,
         cache.path.empty()
             ? "no cache directory: " + cache.problem
             : fmt::format("cache at {} is not writable: {}", cache.path, cache.problem),
         fmt::format("set {} to a writable directory (or pass --cache-dir to warmup)",
                     var(Id::kCacheDir)),
         cache.problem);
  }
  if (!system_cache.empty()) check.summary += "; read-only layer " + system_cache;
  if (!cache.network_fs.empty() && policy != "off") {
    // SQLite's locking is only as good as the network file system's; the
    // cache then uses a rollback journal instead of WAL (docs/CACHE.md).
    check.level = CheckLevel::kWarning;
    check.summary += fmt::format("; on a network file system ({})", cache.network_fs);
    check.hint = fmt::format(
        "prefer a local cache directory ({}) and ship shared kernels with 'hipacm cache export' "
        "/ {}",
        var(Id::kCacheDir), var(Id::kSystemCache));
    check.details["network_fs"] = cache.network_fs;
  }
  return check;
}

Check arch_check() {
  const std::string arch = default_arch();
  const std::string from_env = settings::arch().value_or("");
  Check check = named("arch");
  check.details = {{"default_arch", arch},
                   {"source", !from_env.empty() ? var(Id::kArch) : (arch.empty() ? "" : "device")}};
  if (arch.empty()) {
    check.level = CheckLevel::kWarning;
    check.summary =
        fmt::format("no default arch ({} is unset and no GPU was found)", var(Id::kArch));
    check.hint =
        fmt::format("set {0} (e.g. export {0}=gfx90a) or pass --arch to warmup", var(Id::kArch));
    return check;
  }
  // The hipRTC that would compile decides too: generic targets, amdgcnspirv, release names.
  const backend::HiprtcFacts hiprtc = backend::loaded_hiprtc_facts();
  if (const auto valid = backend::validate_amdgpu_arch(arch, nullptr, &hiprtc); !valid) {
    const std::string& error = valid.failure().message;
    flag(check, CheckLevel::kWarning,
         fmt::format("default arch '{}' is not usable: {}", arch, error),
         fmt::format("set {} to one of comgr's archs (hipacm doctor --json lists them)",
                     var(Id::kArch)),
         error);
    return check;
  }
  check.summary =
      fmt::format("default arch {} (from {})", arch, from_env.empty() ? "the GPU" : var(Id::kArch));
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

// The intercept libraries the dynamic linker mapped into this process: what LD_PRELOAD really
// did, which a list naming a missing file or one the linker ignores (set-user-ID) does not show.
std::vector<std::string> loaded_intercept_libraries() {
  std::vector<std::string> loaded;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        if (info->dlpi_name != nullptr &&
            fs::path(info->dlpi_name).filename() == kInterceptLibraryName)
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &loaded);
  return loaded;
}

// The entries of LD_PRELOAD that name an intercept library (the dynamic linker splits the list at
// colons and spaces).
std::vector<std::string> preloaded_intercept_entries(const std::string& preload) {
  std::vector<std::string> entries;
  std::string entry;
  for (std::size_t i = 0; i <= preload.size(); ++i) {
    if (i < preload.size() && preload[i] != ':' && preload[i] != ' ') {
      entry += preload[i];
      continue;
    }
    if (!entry.empty() && fs::path(entry).filename() == kInterceptLibraryName)
      entries.push_back(entry);
    entry.clear();
  }
  return entries;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || fs::equivalent(a, b, ec);
}

// Whether a program started from this environment would have its hipRTC calls served through
// hipacm: this hipacm's intercept library (the one `hipacm run` preloads), and whether this
// process's LD_PRELOAD carries it, which it does under `hipacm run` and after
// `eval "$(hipacm run --print-env)"`. The doctor process itself is such a program, so what the
// dynamic linker loaded into it is the proof.
Check intercept_check() {
  const InterceptLibrary library = find_intercept_library();
  const std::optional<std::string> preload = backend::environment_value("LD_PRELOAD");
  const std::vector<std::string> entries = preloaded_intercept_entries(preload.value_or(""));
  const std::vector<std::string> loaded = loaded_intercept_libraries();
  const std::string path = library.path.value_or("");
  const bool carries_this =
      !path.empty() && std::any_of(entries.begin(), entries.end(), [&](const std::string& entry) {
        return same_file(entry, path);
      });
  const bool loaded_this =
      !path.empty() && std::any_of(loaded.begin(), loaded.end(),
                                   [&](const std::string& file) { return same_file(file, path); });
  Check check = named("intercept");
  check.details = {{"found", library.path.has_value()},
                   {"path", library.path ? nlohmann::ordered_json(path) : nullptr},
                   {"searched", library.searched},
                   {"ld_preload", preload ? nlohmann::ordered_json(*preload) : nullptr},
                   {"preloaded", carries_this},
                   {"preload_entries", entries},
                   {"loaded", loaded},
                   {"intercepted", !loaded.empty()}};
  const std::string how =
      "start them with 'hipacm run -- COMMAND', or set this shell's "
      "environment with eval \"$(hipacm run --print-env)\"";
  if (!library.path) {
    std::string searched;
    for (const std::string& dir : library.searched)
      searched += (searched.empty() ? "" : ", ") + dir;
    flag(check, CheckLevel::kWarning,
         fmt::format("no {} beside this hipacm (searched {}): 'hipacm run' cannot intercept",
                     kInterceptLibraryName, searched),
         "build the hipacm_intercept target, or install hipacm (cmake --install): the library "
         "goes beside libhipacm.so.1",
         "not found");
  } else if (loaded_this) {
    check.summary = fmt::format(
        "{} at {}, preloaded here: hipRTC programs started from this environment are "
        "intercepted",
        kInterceptLibraryName, path);
  } else if (!loaded.empty()) {
    check.level = CheckLevel::kInfo;
    check.summary = fmt::format(
        "programs started here are intercepted by another {} ({}), not this hipacm's ({})",
        kInterceptLibraryName, loaded.front(), path);
    check.hint = "to use this hipacm's, " + how + ": they put this hipacm's library first";
  } else if (!entries.empty()) {
    flag(check, CheckLevel::kWarning,
         fmt::format("LD_PRELOAD names {}, but the dynamic linker did not load it: programs "
                     "started here are not intercepted",
                     entries.front()),
         "check that the file exists and is readable, or " + how,
         "named in LD_PRELOAD, not loaded");
  } else {
    check.level = CheckLevel::kInfo;
    check.summary = fmt::format(
        "{} at {}; not in LD_PRELOAD: programs started from this environment are not "
        "intercepted",
        kInterceptLibraryName, path);
    check.hint = "to serve an unchanged hipRTC program's compiles through hipacm, " + how;
  }
  return check;
}

}  // namespace

std::vector<Check> run_doctor_checks() {
  const ToolchainProbe toolchain = probe_toolchain();
  std::vector<Check> checks = {plugin_check(),  hiprtc_check(toolchain), comgr_check(toolchain),
                               worker_check(),  cache_check(),           arch_check(),
                               devices_check(), intercept_check()};
  // Only where one is named: most machines have no remote cache, and need no line about it.
  if (std::optional<Check> remote = remote_cache_check()) checks.push_back(std::move(*remote));
  return checks;
}

bool usable(const std::vector<Check>& checks) {
  return std::none_of(checks.begin(), checks.end(),
                      [](const Check& c) { return c.level == CheckLevel::kError; });
}

const char* level_name(CheckLevel level) {
  // In the order of CheckLevel; anything past it reads as an error.
  constexpr const char* kNames[] = {"ok", "info", "warning", "error"};
  const auto index = static_cast<std::size_t>(level);
  return index < std::size(kNames) ? kNames[index] : "error";
}

}  // namespace hipacm::cli
