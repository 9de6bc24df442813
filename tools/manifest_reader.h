// manifest_reader.h - kernels listed in a JSON manifest (schema hipacm-examples-manifest-1).
#pragma once

#include <filesystem>
#include <vector>

#include "tools/kernel_input.h"

namespace hipacm::cli {

/// Reads a manifest (examples/kernels/README.md, "manifest.json"): each entry's
/// "source" and header paths are relative to the manifest's directory; its
/// options, headers and name_expressions replace the file's own directives.
/// Throws InputError for unparsable JSON, a wrong schema, a missing or
/// mistyped field, or an unreadable source or header.
std::vector<KernelInput> read_manifest(const std::filesystem::path& manifest);

}  // namespace hipacm::cli
