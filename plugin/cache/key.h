// key.h - the persistent-cache key: SHA-256 over everything that determines a code object.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/compiler_identity.h"

namespace hipacm::cache {

/// Options as they enter the key: surrounding whitespace trimmed and empty
/// options dropped (neither changes what the compiler does). Order is kept:
/// later options can override earlier ones.
std::vector<std::string> normalized_options(const std::vector<std::string>& options);

/// Hex SHA-256 over: the schema version, the source, the source name, the
/// headers (names and contents), the name expressions, the normalized
/// options, the arch with its feature flags, and the compiler's backend name
/// and exact version. Length-prefixed fields: distinct inputs never share a
/// byte stream.
std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler, int schema_version);
/// The same with the current kSchemaVersion.
std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler);

}  // namespace hipacm::cache
