// SPDX-License-Identifier: MIT
// backend_probe.cpp - asks the plugin (C ABI) and the backend loaders what was found and where.
#include "tools/doctor/backend_probe.h"

#include <dlfcn.h>
#include <hipacm/hipacm.h>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/rocm_paths.h"
#include "support/libraries/dynamic_library.h"
#include "support/settings.h"

namespace hipacm::cli {
namespace {

hipacm_backend_info backend_info() {
  hipacm_backend_info info{};
  info.struct_size = sizeof info;
  hipacm_get_backend_info(&info);  // fills *out even when it reports BACKEND_UNAVAILABLE
  return info;
}

}  // namespace

PluginProbe probe_plugin() {
  PluginProbe probe;
  probe.abi_version =
      std::to_string(HIPACM_ABI_VERSION_MAJOR) + "." + std::to_string(HIPACM_ABI_VERSION_MINOR);
  const hipacm_provider* provider = hipacm_get_provider(HIPACM_ABI_VERSION);
  probe.version = provider != nullptr ? provider->version : "unknown";
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hipacm_get_provider), &info) != 0 && info.dli_fname) {
    probe.path = backend::real_file_path(info.dli_fname);
    if (probe.path.empty()) probe.path = info.dli_fname;
  }
  return probe;
}

LibraryProbe probe_hiprtc() {
  const hipacm_backend_info info = backend_info();
  LibraryProbe probe;
  probe.found = info.available != 0;
  probe.version = info.version;
  probe.path = info.library_path;
  if (!probe.found) probe.error = hipacm_last_error_message();
  return probe;
}

ToolchainProbe probe_toolchain() {
  ToolchainProbe probe;
  probe.install_trees = backend::rocm_install_trees();
  const auto loaded = backend::rocm_toolchain();
  if (!loaded) return probe;
  const backend::RocmToolchain* toolchain = loaded.value();
  probe.found = true;
  probe.release = toolchain->release;
  probe.identity = backend::toolchain_identity(*toolchain);
  probe.comgr_path = toolchain->comgr_path;
  probe.components = toolchain->components;
  probe.mixed = backend::mixed_rocm_problem(*toolchain);
  return probe;
}

LibraryProbe probe_comgr(std::vector<std::string>* processors) {
  LibraryProbe probe;
  const ToolchainProbe toolchain = probe_toolchain();
  const auto named = settings::comgr_library();
  if (named && !toolchain.comgr_path.empty() &&
      !backend::same_library(toolchain.comgr_path, *named)) {
    // Loading it next to hipRTC's comgr could abort the process (LLVM's options twice).
    probe.error = toolchain.mixed;
    return probe;
  }
  const bool follow_hiprtc = !toolchain.comgr_path.empty();
  const auto table = backend::load_amdgpu_isa_table_from(
      follow_hiprtc ? std::vector<std::string>{toolchain.comgr_path}
                    : backend::comgr_library_candidates());
  if (!table) {
    probe.error = table.failure().message;
    return probe;
  }
  probe.found = true;
  probe.path = table->library_path;
  if (processors != nullptr) *processors = table->processors;
  // The file the table came from, bound again for its version (present in every comgr release).
  const auto comgr = backend::find_comgr({table->library_path});
  if (comgr && comgr->api.amd_comgr_get_version != nullptr) {
    std::size_t major = 0, minor = 0;
    comgr->api.amd_comgr_get_version(&major, &minor);
    probe.version = std::to_string(major) + "." + std::to_string(minor);
  }
  return probe;
}

std::string default_arch() { return backend_info().default_arch; }

}  // namespace hipacm::cli
