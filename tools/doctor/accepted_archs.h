// SPDX-License-Identifier: MIT
// accepted_archs.h - the archs the compilers found here accept, for `hipacm doctor --archs`.
#pragma once

#include <string>
#include <vector>

namespace hipacm::cli {

/// What `--arch` may name on this machine: comgr's processors (gfx..., as hipRTC compiles them),
/// then, where NVRTC loads, sm_NN and compute_NN for each arch it supports. Empty when neither
/// compiler is found. Shell completions read it, so it prints nothing but the names.
std::vector<std::string> accepted_archs();

}  // namespace hipacm::cli
