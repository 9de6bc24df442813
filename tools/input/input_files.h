// SPDX-License-Identifier: MIT
// input_files.h - bounded reads of the files the CLI is given: regular files only, with size
// limits.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace hipacm::cli {

/// The most bytes of one source or header: the C ABI's own limit for a source.
inline constexpr std::size_t kMaxSourceFileBytes = std::size_t{256} << 20;
/// The most bytes of one manifest: thousands of entries fit in a fraction of it.
inline constexpr std::size_t kMaxManifestFileBytes = std::size_t{16} << 20;
/// The most bytes of one code object given to `inspect`.
inline constexpr std::size_t kMaxCodeObjectFileBytes = std::size_t{256} << 20;
/// The most source and header bytes of one run, over every kernel; a small
/// manifest that names one large file many times must not exhaust memory.
inline constexpr std::size_t kMaxInputBytesPerRun = std::size_t{2} << 30;

/// The whole of `file`, which must be a regular file (not a FIFO, device,
/// socket or directory) of at most `max_bytes`. It is opened without
/// blocking, so a FIFO cannot hang the read. Throws InputError naming the
/// path and the reason.
std::string read_input_file(const std::filesystem::path& file, std::size_t max_bytes);

/// read_input_file() for a source or header: text the compiler gets as a C
/// string, so a NUL byte (which would silently cut it short) is an InputError.
std::string read_source_file(const std::filesystem::path& file);

/// Adds `bytes` to the run's `*total`; throws InputError once the total
/// passes kMaxInputBytesPerRun. `where` names what was being read.
void count_input_bytes(std::size_t bytes, std::size_t* total, const std::string& where);

}  // namespace hipacm::cli
