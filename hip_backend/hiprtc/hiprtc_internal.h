// SPDX-License-Identifier: MIT
// hiprtc_internal.h - backend-private hipRTC pieces: the uncached loader, result codes and names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/rtc/rtc_shared.h"
#include "support/libraries/lazy_library.h"

namespace hipacm::backend {

// hiprtcResult values that the backend maps to hipacm statuses: kHiprtcSuccess,
// kHiprtcErrorCompilation, ... (the list is HIPACM_RTC_RESULT_CODES).
#define HIPACM_HIPRTC_RESULT_CODE(name, value) inline constexpr hiprtc_result kHiprtc##name = value;
HIPACM_RTC_RESULT_CODES(HIPACM_HIPRTC_RESULT_CODE)
#undef HIPACM_HIPRTC_RESULT_CODE

/// A loaded hipRTC: the handle keeps the library referenced (and pinned), the
/// table holds its entry points.
using LoadedHiprtc = BoundLibrary<HiprtcApi>;

/// $HIPACM_HIPRTC_LIBRARY alone when set and non-empty, else the default list.
std::vector<std::string> hiprtc_library_candidates();

/// The uncached loader behind load_hiprtc. First reuses a candidate that the
/// process already loaded and that has every symbol (two ROCm copies in one
/// process misbehave); otherwise dlopens the candidates in order and stops at
/// the first that opens. Errors: "cannot open hipRTC ..." when none opens,
/// "... missing symbol ..." when the opened one lacks an entry point.
Expected<LoadedHiprtc> load_hiprtc_from(const std::vector<std::string>& candidates);

/// "HIPRTC_ERROR_COMPILATION" etc. from a local table: naming a result never
/// needs the library (or its lock).
std::string hiprtc_result_name(hiprtc_result result);

}  // namespace hipacm::backend
