// SPDX-License-Identifier: MIT
// kernel_checks.h - one GPU-versus-CPU-reference check per example kernel.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cuda_driver.h"

namespace hipacm::device {

/// Finds the launchable function for a kernel: `name` is an extern "C" name, or a name expression
/// (e.g. "scale<float>") when `is_expression` is set. Throws std::runtime_error when it cannot.
using FunctionLookup =
    std::function<CuFunction(const std::string& file, const std::string& name, bool is_expression)>;

struct KernelCheck {
  std::string name;  ///< what the line prints, e.g. "saxpy"
  std::string file;  ///< the example source it needs, e.g. "saxpy.hip"
  /// Launches and compares; returns "" on a match, else what differed. Throws on driver errors.
  std::function<std::string(const CudaDriver&, const FunctionLookup&)> run;
};

/// Every check, in manifest order. Each one's inputs are fixed (seeded), so a rerun is identical.
std::vector<KernelCheck> all_kernel_checks();

}  // namespace hipacm::device
