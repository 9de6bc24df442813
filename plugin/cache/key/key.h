// SPDX-License-Identifier: MIT
// key.h - what names a compile: the request's content digest and the persistent-cache key, both
// SHA-256 over the request's fields.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/dispatch/compiler_identity.h"

namespace hipacm {

/// "sha256:" and the hex SHA-256 over every field that affects the code object: source, source
/// name, options, headers (names and contents), name expressions and arch. The key of a request
/// whose host gives none. Length-prefixed fields: distinct requests never share a byte stream.
std::string content_digest(const backend::CompileRequest& request);

namespace cache {

/// Hex SHA-256 over: the schema version, the source, the source name, the
/// headers (names and contents), the name expressions, the options
/// exactly as the compiler receives them, the arch with its feature flags, and the compiler's
/// backend name and exact version. Length-prefixed fields: distinct inputs never share a byte
/// stream.
std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler, int schema_version);
/// The same with the current kSchemaVersion.
std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler);

}  // namespace cache
}  // namespace hipacm
