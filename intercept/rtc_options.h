// SPDX-License-Identifier: MIT
// rtc_options.h - which compile options hipacm serves, per compiler, and the arch they name.
#pragma once

#include <string>

#include "intercept/real_rtc.h"

namespace hipacm::intercept {

/// Why a compile of `rtc` with these options must be the library's own ("-fgpu-rdc", "-dlto",
/// "no arch option", ...), or "" with *arch set to the one arch they name ("" for an NVRTC
/// compile that names none: NVRTC's default then).
std::string unservable_options(Rtc rtc, int num_options, const char* const* options,
                               std::string* arch);

}  // namespace hipacm::intercept
