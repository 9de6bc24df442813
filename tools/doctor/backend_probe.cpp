// SPDX-License-Identifier: MIT
// backend_probe.cpp - asks the plugin (C ABI) and the backend loaders what was found and where.
#include "tools/doctor/backend_probe.h"

#include <dlfcn.h>
#include <hipacm/hipacm.h>

#include "hip_backend/hiprtc/comgr_isa.h"
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
  // Follow hipRTC's own comgr where hipRTC loaded one.
  const auto comgr = backend::report_comgr(toolchain.comgr_path.empty()
                                               ? std::vector<std::string>{}
                                               : std::vector<std::string>{toolchain.comgr_path});
  if (!comgr) {
    probe.error = comgr.failure().message;
    return probe;
  }
  probe.found = true;
  probe.path = comgr->library_path;
  probe.version = comgr->version;
  if (processors != nullptr) *processors = comgr->processors;
  return probe;
}

std::string default_arch() { return backend_info().default_arch; }

}  // namespace hipacm::cli
