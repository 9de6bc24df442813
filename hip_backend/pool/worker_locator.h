// SPDX-License-Identifier: MIT
// worker_locator.h - finds the hipacm-worker executable for this build or installation.
#pragma once

#include <string>

namespace hipacm::backend {

/// The hipacm-worker to run:
///  1. $HIPACM_WORKER when set and non-empty; it must be an executable file,
///     otherwise the answer is "" (an explicit choice is never second-guessed);
///  2. otherwise beside the binary that contains this code (found with
///     dladdr): `<dir>/hipacm-worker` (the build tree), then the installed
///     layout `<dir>/<libdir-to-libexecdir>/hipacm/hipacm-worker`.
/// Returns "" with *why naming every place it looked when none is usable.
std::string find_worker_binary(std::string* why);

/// The same search with `binary_dir` in place of this code's own directory,
/// for tools that report where a given libhipacm.so would find its worker.
std::string find_worker_binary_beside(const std::string& binary_dir, std::string* why);

}  // namespace hipacm::backend
