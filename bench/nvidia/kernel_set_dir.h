// SPDX-License-Identifier: MIT
// kernel_set_dir.h - the NVIDIA benchmark's kernel set: generated once into a directory with a
// manifest, then read by every variant (C++ and Python) so all of them compile the same sources.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/common/example_kernels.h"

namespace hipacm::bench::nvidia {

/// One self-contained source (headers inlined) and the NVRTC options it needs; `file` is its name
/// in the set's directory, e.g. "k007_histogram.cu".
using SetKernel = KernelSource;

/// Writes `count` distinct kernels made from the examples in `examples_dir` (each example
/// repeated with a -DHIPACM_BENCH_VARIANT=<n> define) into `out_dir`, plus manifest.json
/// (schema hipacm-nvidia-bench-set-1). Throws std::runtime_error on I/O errors.
void generate_kernel_set(const std::string& examples_dir, const std::string& out_dir,
                         std::size_t count);

/// Reads a directory written by generate_kernel_set. Throws std::runtime_error when it cannot.
std::vector<SetKernel> load_kernel_set(const std::string& dir);

}  // namespace hipacm::bench::nvidia
