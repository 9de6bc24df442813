// SPDX-License-Identifier: MIT
// service_warmup.h - the compilers the compile service has warmed in itself, so that the workers
// it forks start with them loaded.
#pragma once

#include <set>
#include <string>
#include <utility>

namespace hipacm::backend::service_internal {

/// The compiler family an arch is compiled by: what one warm-up loads and initializes.
std::string compiler_family(const std::string& arch);

/// The compiler families loaded and run once in the service.
class WarmCompilers {
 public:
  /// Compilers write their temporary files in `temp_dir`, emptied after each warm-up.
  explicit WarmCompilers(std::string temp_dir) : temp_dir_(std::move(temp_dir)) {}

  /// Loads and runs once the compiler for `arch` (none for an empty arch), unless done before.
  void warm(const std::string& arch);
  const std::set<std::string>& families() const { return warm_; }

 private:
  const std::string temp_dir_;
  std::set<std::string> warm_;
};

}  // namespace hipacm::backend::service_internal
