// SPDX-License-Identifier: MIT
// accepted_archs.cpp - lists the archs comgr and NVRTC accept here, AMD first.
#include "tools/doctor/accepted_archs.h"

#include "hip_backend/nvrtc/nvrtc_facts.h"
#include "tools/doctor/backend_probe.h"

namespace hipacm::cli {

std::vector<std::string> accepted_archs() {
  std::vector<std::string> archs;
  probe_comgr(&archs);
  // The facts' memo is left alone: a completion should not write to the runtime directory.
  if (const auto nvrtc = backend::nvrtc_facts(nullptr)) {
    for (const int number : nvrtc->archs) archs.push_back("sm_" + std::to_string(number));
    for (const int number : nvrtc->archs) archs.push_back("compute_" + std::to_string(number));
  }
  return archs;
}

}  // namespace hipacm::cli
