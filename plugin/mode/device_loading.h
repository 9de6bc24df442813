// SPDX-License-Identifier: MIT
// device_loading.h - after a compile: list the code object's kernels and, with load_device, load
// it.
#pragma once

#include "hip_backend/compiler.h"
#include "plugin/mode/mode_settings.h"

namespace hipacm {

/// For a successful result: fills result->function_names (every kernel in
/// the code object, sorted) and, when settings.load_device >= 0, loads the
/// code object on that device with every kernel resolved (result->module).
/// A failed load turns the result into that failure (docs/ABI.md lists the
/// statuses). Failed results are left alone. Never throws.
void load_into_device(backend::CompileResult* result, const ModeSettings& settings) noexcept;

}  // namespace hipacm
