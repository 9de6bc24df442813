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

/// comgr (hipRTC's compiler engine, also the list of valid archs), with the
/// number of processors it knows in *processor_count.
LibraryProbe probe_comgr(std::vector<std::string>* processors);

/// The arch a mode gets when none is given ($HIPACM_ARCH or the device's); "" if none.
std::string default_arch();

}  // namespace hipacm::cli
