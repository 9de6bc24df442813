// SPDX-License-Identifier: MIT
// record_format.h - what a $HIPACM_RECORD file is: its schema name and size limits, shared by the
// plugin that writes it and the CLI that replays it.
#pragma once

#include <cstddef>

namespace hipacm {

/// Every line of a record file is one JSON object whose "schema" is this.
inline constexpr const char* kRecordSchema = "hipacm-record-1";

/// The most bytes of one record line. The C ABI accepts sources up to 256 MiB; a request whose
/// line would pass this is compiled but not recorded (one warning), so that one huge generated
/// source cannot take the whole file's budget.
inline constexpr std::size_t kMaxRecordLineBytes = std::size_t{64} << 20;

/// The most bytes of a record file: records that would take it past this are not appended (one
/// warning), and the replay refuses larger files.
inline constexpr std::size_t kMaxRecordFileBytes = std::size_t{256} << 20;

}  // namespace hipacm
