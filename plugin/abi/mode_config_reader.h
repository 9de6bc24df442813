// SPDX-License-Identifier: MIT
// mode_config_reader.h - reads a caller's hipacm_mode_config into the mode's plain ModeConfig.
#pragma once

#include <hipacm/hipacm.h>

#include "plugin/mode/mode_settings.h"

namespace hipacm {

/// The fields inside cfg->struct_size (the rest keep their defaults); NULL reads as the
/// defaults. Throws hipacm::StatusError (ABI_MISMATCH) for a struct smaller than version 1.
ModeConfig read_mode_config(const hipacm_mode_config* cfg);

/// hipacm_compile's configuration: the defaults, with `arch` (NULL: $HIPACM_ARCH or the
/// device's).
ModeConfig compile_config(const char* arch);

}  // namespace hipacm
