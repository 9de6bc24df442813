// hiprtc_internal.h - backend-private hipRTC pieces: the uncached loader, the global lock, result
// names.
#pragma once

#include <boost/thread/mutex.hpp>

#include <optional>
#include <string>
#include <vector>

#include "support/dynamic_library.h"
#include "hip_backend/hiprtc/hiprtc_api.h"

namespace hipacm::backend {

// hiprtcResult values that the backend maps to hipacm statuses.
inline constexpr hiprtc_result kHiprtcSuccess = 0;
inline constexpr hiprtc_result kHiprtcErrorOutOfMemory = 1;
inline constexpr hiprtc_result kHiprtcErrorInvalidInput = 3;
inline constexpr hiprtc_result kHiprtcErrorInvalidOption = 5;
inline constexpr hiprtc_result kHiprtcErrorCompilation = 6;
inline constexpr hiprtc_result kHiprtcErrorBuiltinOperationFailure = 7;
inline constexpr hiprtc_result kHiprtcErrorNameExpressionNotValid = 10;

/// A loaded hipRTC: the handle keeps the library referenced (and pinned), the
/// table holds its entry points.
struct LoadedHiprtc {
  DynamicLibrary library;
  HiprtcApi api;
};

/// The one lock around every call into hipRTC, comgr and the HIP runtime:
/// hipRTC 5.2.3 aborts the process on overlapping compiles. Never destroyed,
/// so a compile still running during exit() does not meet a dead mutex.
/// Lock order: finish any once-only loader (load_hiprtc, the comgr table)
/// before taking this lock; those loaders take it themselves.
boost::mutex& hiprtc_mutex();

/// $HIPACM_HIPRTC_LIBRARY alone when set and non-empty, else the default list.
std::vector<std::string> hiprtc_library_candidates();

/// The uncached loader behind load_hiprtc. First reuses a candidate that the
/// process already loaded and that has every symbol (two ROCm copies in one
/// process misbehave); otherwise dlopens the candidates in order and stops at
/// the first that opens. Errors: "cannot open hipRTC ..." when none opens,
/// "... missing symbol ..." when the opened one lacks an entry point.
std::optional<LoadedHiprtc> load_hiprtc_from(const std::vector<std::string>& candidates,
                                             std::string* error);

/// "HIPRTC_ERROR_COMPILATION" etc. from a local table: naming a result never
/// needs the library (or its lock).
std::string hiprtc_result_name(hiprtc_result result);

}  // namespace hipacm::backend
