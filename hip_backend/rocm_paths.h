// SPDX-License-Identifier: MIT
// rocm_paths.h - where ROCm's libraries are looked for: the dynamic linker's own search, the
// install trees that ROCM_PATH and HIP_PATH name, and AMD's /opt/rocm layout.
#pragma once

#include <string>
#include <vector>

namespace hipacm::backend {

/// ROCm install trees to search besides the dynamic linker's path, in order: $ROCM_PATH,
/// $HIP_PATH, then `opt_dir`/rocm and `opt_dir`/rocm-X.Y.Z, newest version first. Only trees
/// that exist, each once (a ROCM_PATH that is /opt/rocm is not searched twice).
std::vector<std::string> rocm_install_trees(const std::string& opt_dir = "/opt");

/// Candidates for a library that a ROCm release ships under `sonames` (newest ROCm first):
///  - `sonames` inside $ROCM_PATH and $HIP_PATH (their lib/ folders): a user who names an install
///    means it;
///  - the bare `sonames`, for the dynamic linker's search (LD_LIBRARY_PATH, the system's
///    directories: distribution packages and an ldconfig'd /opt/rocm);
///  - `sonames` inside /opt/rocm and /opt/rocm-X.Y.Z, newest first, for an install that is not on
///    the linker's path.
std::vector<std::string> rocm_library_candidates(const std::vector<std::string>& sonames,
                                                 const std::string& opt_dir = "/opt");

/// "ROCm 6.4.1" when `library_path` lies inside an /opt/rocm-6.4.1 tree, or "ROCm 6.4" from a
/// versioned file name such as libhiprtc.so.6.4.43484 or libamdhip64.so.5.2.50203; empty when
/// neither says.
std::string rocm_release_of(const std::string& library_path);

/// The install tree (".../rocm-6.4.1" or ".../rocm") that `library_path` lies in; empty for a
/// library outside any such tree (a distribution's /usr/lib).
std::string rocm_tree_of(const std::string& library_path);

}  // namespace hipacm::backend
