// SPDX-License-Identifier: MIT
// service_common.h - what every part of the compile service shares: its clock, how long a notice
// may take to send, and errno's text.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "hip_backend/protocol/service_wire.h"

namespace hipacm::backend::service_internal {

namespace sw = ::hipacm::backend::service_wire;
using Clock = std::chrono::steady_clock;

/// How long one message to a host or a worker may take to send (or, from a worker, to read).
constexpr int kNoticeSendMs = 1000;

inline std::string errno_text() { return std::strerror(errno); }

}  // namespace hipacm::backend::service_internal
