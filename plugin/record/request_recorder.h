// SPDX-License-Identifier: MIT
// request_recorder.h - appends every request the host compiles to the $HIPACM_RECORD file, one
// JSON line each, for `hipacm warmup FILE` to replay.
#pragma once

#include <string>

#include "hip_backend/compiler.h"

namespace hipacm {

/// `request` as one record line: a JSON object of schema kRecordSchema with its source, source
/// name, options, headers, name expressions and arch, ending in '\n'. Throws for text that is
/// not UTF-8 (JSON cannot carry it byte for byte, so a replay would compile something else).
std::string record_line(const backend::CompileRequest& request);

/// With $HIPACM_RECORD set, appends record_line(request) to that file unless this process has
/// already recorded the same request (source, names, options, headers, name expressions and
/// arch) there. The file is created 0600; every line goes in with one write under an exclusive
/// flock, so threads and processes appending together never tear a line. Never throws and never
/// fails the compile: a record that cannot be written logs one warning per process.
void record_request(const backend::CompileRequest& request) noexcept;

}  // namespace hipacm
