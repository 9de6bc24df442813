// SPDX-License-Identifier: MIT
// exit_codes.h - the documented exit statuses of the hipacm tool and the error that maps to 2.
#pragma once

#include <stdexcept>
#include <string>

namespace hipacm::cli {

/// Fixed: scripts and CI test them (docs/CLI.md lists them).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailures = 1,   ///< some kernel failed (warmup), or the setup is not usable (doctor)
  kExitUsage = 2,      ///< bad arguments or input: missing path, unknown arch, bad manifest
  kExitNoBackend = 3,  ///< no compiler backend here (hipRTC or comgr cannot be loaded)
};

/// Bad user input found before any work starts; main() prints it and exits with kExitUsage.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

/// The compiler backend cannot be loaded; main() prints it and exits with kExitNoBackend.
class BackendUnavailable : public std::runtime_error {
 public:
  explicit BackendUnavailable(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace hipacm::cli
