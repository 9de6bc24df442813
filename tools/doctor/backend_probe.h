// SPDX-License-Identifier: MIT
// backend_probe.h - what the plugin and its compiler backend are: versions and library paths.
#pragma once

#include <string>
#include <vector>

namespace hipacm::cli {

/// One dynamically loaded library as found (or not) on this machine.
struct LibraryProbe {
  bool found = false;
  std::string version;  ///< "major.minor"; empty when unknown
  std::string path;     ///< the file that was loaded
  std::string error;    ///< why it was not found
};

/// The libhipacm.so this process uses: its file, release and ABI versions.
struct PluginProbe {
  std::string path;
  std::string version;      ///< HIPACM_VERSION_STRING of the loaded plugin
  std::string abi_version;  ///< "major.minor" of the header this tool was built with
};

PluginProbe probe_plugin();

/// hipRTC, through hipacm_get_backend_info (the plugin's own loader).
LibraryProbe probe_hiprtc();

/// The ROCm toolchain that hipRTC compiles with (hip_backend/hiprtc/rocm_toolchain.h).
struct ToolchainProbe {
  bool found = false;
  std::string release;                     ///< "ROCm 6.4"; empty when the files do not say
  std::string identity;                    ///< what cache keys carry
  std::string comgr_path;                  ///< the comgr hipRTC loaded
  std::vector<std::string> components;     ///< "libLLVM.so.21.1 build-id ...", one per library
  std::string mixed;                       ///< why hipRTC and comgr mix two ROCm installs, or ""
  std::vector<std::string> install_trees;  ///< $ROCM_PATH, $HIP_PATH, /opt/rocm* that exist
};
ToolchainProbe probe_toolchain();

/// comgr (hipRTC's compiler engine, also the list of valid archs): the one hipRTC loads, or
/// the first on comgr's search list when hipRTC cannot be loaded, or $HIPACM_COMGR_LIBRARY; its
/// processors in *processors.
LibraryProbe probe_comgr(std::vector<std::string>* processors);

/// The arch a mode gets when none is given ($HIPACM_ARCH or the device's); "" if none.
std::string default_arch();

}  // namespace hipacm::cli
