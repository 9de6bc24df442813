// SPDX-License-Identifier: MIT
// compiler_factory.h - picks the compile step (in-process or worker processes) for a mode.
#pragma once

#include <functional>
#include <memory>

#include "hip_backend/compiler.h"
#include "plugin/mode/mode_settings.h"

namespace hipacm {

/// The compiler a mode's pool threads share: in-process or in worker processes, behind the
/// persistent cache that settings.cache asks for (with settings.remote_cache beneath it). Throws
/// hipacm::StatusError (BACKEND_UNAVAILABLE) when the isolation policy cannot be met.
std::shared_ptr<backend::Compiler> make_compiler(const ModeSettings& settings);

using CompilerFactory = std::function<std::shared_ptr<backend::Compiler>(const ModeSettings&)>;

/// Test hook, not exported from the plugin: modes entered afterwards compile with what
/// `factory` makes (to inject faults and timing), still behind the persistent cache; an empty
/// factory restores the real one.
void set_compiler_factory_for_testing(CompilerFactory factory);

}  // namespace hipacm
