// SPDX-License-Identifier: MIT
// nvrtc_program_name.h - a CUDA program named by a path (CuPy names each by a fresh temporary
// file's): compiled and keyed under the file's name alone, its log given the path back.
#pragma once

#include <string>

#include "hip_backend/compiler.h"

namespace hipacm {

/// The name a raw NVRTC `request` is compiled and keyed under in place of its own: the last
/// component of a name with a directory, when nothing the program compiles can see the name (no
/// __FILE__, __FILE_NAME__, __builtin_FILE, #line or assert in the source or its headers, no
/// #include of a header the program did not give, which could hold them, and no header of that
/// name). NVRTC's code is then the same under either name (its line tables hold the name, but
/// -lineinfo and -G are never served), so two processes whose programs differ only in a temporary
/// directory share a cache entry. "" when the name is to be kept.
std::string name_without_directory(const backend::CompileRequest& request);

/// `log`, written by NVRTC for a program named `compiled_name`, as NVRTC writes it for the name
/// `program_name`: "NAME(LINE): ..." at a line's start, "... at line N of NAME" at a line's end,
/// and 'compilation of "NAME".'.
std::string with_program_name(const std::string& log, const std::string& compiled_name,
                              const std::string& program_name);

}  // namespace hipacm
