// key.h - the persistent-cache key: SHA-256 over everything that determines a code object.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/compiler_identity.h"

namespace hipacm::cache {

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

}  // namespace hipacm::cache
