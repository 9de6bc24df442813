// SPDX-License-Identifier: MIT
// last_error.h - the thread-local message behind hipacm_last_error_message().
#pragma once

#include <string_view>

namespace hipacm {

/// Records the message of a failing call on this thread. Never throws: if
/// the message cannot be stored, a fixed out-of-memory text is kept instead.
void set_last_error(std::string_view message) noexcept;

/// The last failing call's message on this thread; "" before any failure.
const char* last_error_message() noexcept;

}  // namespace hipacm
