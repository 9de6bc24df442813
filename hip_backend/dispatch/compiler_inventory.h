// SPDX-License-Identifier: MIT
// compiler_inventory.h - every compiler hipacm can use here (hipRTC, NVRTC), for tools and backend
// info.
#pragma once

#include <string>
#include <vector>

namespace hipacm::backend {

struct CompilerDescription {
  std::string name;          ///< "hiprtc" or "nvrtc"
  bool available = false;    ///< the library loaded
  std::string version;       ///< "5.2" / "13.0"; empty when unavailable
  std::string library_path;  ///< the file that was loaded; empty when unavailable
  std::string error;         ///< why it is unavailable; empty otherwise
  std::string platform;      ///< "amd" (gfx* archs) or "nvidia" (sm_/compute_ archs)
};

/// The compiler that serves `arch` (NVRTC for sm_/compute_, else hipRTC).
CompilerDescription describe_compiler_for(const std::string& arch);

/// hipRTC and NVRTC, in that order, each loaded (once per process) to see.
std::vector<CompilerDescription> describe_compilers();

}  // namespace hipacm::backend
