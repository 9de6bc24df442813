// SPDX-License-Identifier: MIT
// record_reader.h - the requests a host recorded with $HIPACM_RECORD (JSON Lines, schema
// hipacm-record-1), as kernel inputs for `hipacm warmup` to replay.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tools/input/kernel_input.h"

namespace hipacm::cli {

/// True for a file named *.jsonl, or a regular file whose first line starts the way every record
/// line does ({"schema":"hipacm-record-1"), whatever its name. Reads at most a few bytes; false
/// for anything it cannot read (the caller's own read then reports why).
bool is_record_file(const std::filesystem::path& file);

/// Reads a record file: a regular file of at most kMaxRecordFileBytes. Throws InputError for
/// anything read_record_text() refuses or an unreadable file.
std::vector<KernelInput> read_record_file(const std::filesystem::path& file);

/// One kernel input per non-blank line of `text`, in order, each with the source, source name,
/// options, headers, name expressions and arch the line holds (inline: a record needs no other
/// file). `label` names the file in messages and paths ("FILE:LINE"). Throws InputError (and
/// nothing else) for a line that is not a JSON object of schema hipacm-record-1, a missing or
/// mistyped field, a NUL byte in a string, or inputs past kMaxInputBytesPerRun.
std::vector<KernelInput> read_record_text(std::string_view text, const std::string& label);

}  // namespace hipacm::cli
