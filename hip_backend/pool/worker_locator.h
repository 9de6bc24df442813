// SPDX-License-Identifier: MIT
// worker_locator.h - finds the hipacm-worker executable for this build or installation.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// The hipacm-worker to run:
///  1. $HIPACM_WORKER when set and non-empty; it must be an executable file,
///     otherwise there is none (an explicit choice is never second-guessed);
///  2. otherwise beside the binary that contains this code (found with
///     dladdr): `<dir>/hipacm-worker` (the build tree), then the installed
///     layout `<dir>/<libdir-to-libexecdir>/hipacm/hipacm-worker`.
/// The Failure (BACKEND_UNAVAILABLE) names every place it looked when none is usable.
Expected<std::string> find_worker_binary();

/// The same search with `binary_dir` in place of this code's own directory,
/// for tools that report where a given libhipacm.so would find its worker.
Expected<std::string> find_worker_binary_beside(const std::string& binary_dir);

}  // namespace hipacm::backend
