// SPDX-License-Identifier: MIT
// manifest_reader.h - kernels listed in a JSON manifest (schema hipacm-examples-manifest-1).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tools/input/bounded_json.h"
#include "tools/input/kernel_input.h"

namespace hipacm::cli {

/// Reads a manifest (examples/kernels/README.md, "manifest.json"): each entry's
/// "source" and header paths are relative to the manifest's directory; its
/// options, headers and name_expressions replace the file's own directives.
/// The file must be a regular file of at most kMaxManifestFileBytes. Throws
/// InputError for anything read_manifest_text() refuses or an unreadable file.
std::vector<KernelInput> read_manifest(const std::filesystem::path& manifest);

/// The manifest `text`, with sources and headers read relative to `base_dir`;
/// `label` names the manifest in messages. Throws InputError (and nothing
/// else) for text that is not JSON, nests deeper than kMaxManifestDepth, has a
/// wrong schema, a missing or mistyped field, a NUL byte in a string, or names
/// an unreadable source or header, and when the sources and headers of its
/// entries pass kMaxInputBytesPerRun.
std::vector<KernelInput> read_manifest_text(std::string_view text,
                                            const std::filesystem::path& base_dir,
                                            const std::string& label);

}  // namespace hipacm::cli
