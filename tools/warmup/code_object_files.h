// SPDX-License-Identifier: MIT
// code_object_files.h - writes warmed code objects to a directory as <stem>.<arch>.co files.
#pragma once

#include <string>
#include <vector>

#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {

/// Writes every successful outcome's code object into `dir` (created if
/// needed) as "<source stem>.<arch>.co", with ':' in the arch replaced by '_'
/// and "-2", "-3"... added when two sources share a stem. Returns the paths
/// in outcome order. Throws InputError when the directory cannot be written.
std::vector<std::string> write_code_objects(const WarmupResult& result, const std::string& dir);

}  // namespace hipacm::cli
