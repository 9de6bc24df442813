// SPDX-License-Identifier: MIT
// source_name_policy.h - which source and header names may reach the compiler's file system.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hip_backend/compiler.h"
#include "support/failure.h"

namespace hipacm::backend {

/// The longest accepted name, and the longest accepted component of one.
inline constexpr std::size_t kMaxSourceNameBytes = 1024;
inline constexpr std::size_t kMaxSourceNameComponentBytes = 255;

/// Whether `name` may name a source or a virtual header. hipRTC (comgr)
/// writes every header to <private dir>/include/<name>, creating missing
/// directories, so a name must be a relative path that stays inside that
/// directory: not absolute, no '.' or '..' component, no empty component
/// ("a//b", a trailing '/'), at most kMaxSourceNameBytes in all and
/// kMaxSourceNameComponentBytes per component, and only letters, digits and
/// `_ - . + @ /`. Sub-directories ("detail/math.h") are fine. Otherwise the
/// failure (INVALID_ARGUMENT) says what is wrong; it quotes the name only when
/// every byte is printable.
Expected<void> source_name_allowed(std::string_view name);

/// source_name_allowed() for the request's source name and every header
/// name. The failure names the field ("source_name", "header_names[2]").
Expected<void> request_names_allowed(const CompileRequest& request);

}  // namespace hipacm::backend
