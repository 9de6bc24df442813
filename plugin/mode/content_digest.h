// content_digest.h - the SHA-256 digest that names a request when the host gives no key.
#pragma once

#include <string>

#include "hip_backend/compiler.h"

namespace hipacm {

/// Hex SHA-256 over every field that affects the code object: source, source
/// name, options, headers (names and contents), name expressions and arch.
/// Each field is length-prefixed, so no two different requests can produce
/// the same byte stream.
std::string content_digest(const backend::CompileRequest& request);

}  // namespace hipacm
