// SPDX-License-Identifier: MIT
// runtime_header_pch_file.h - the file a precompiled hipRTC runtime header lives in, and the check
// every such file passes before hipacm reads or uses it.
#pragma once

#include <cstddef>
#include <string>

namespace hipacm::backend {

/// What clang's driver looks for in the working directory before it includes hipRTC's runtime
/// header: where `<dir>/hiprtc_runtime.h.pch` exists and the compile runs in <dir>, the driver
/// loads it in place of the `-include hiprtc_runtime.h` that hipRTC adds to every compile.
inline constexpr const char* kRuntimeHeaderPchName = "hiprtc_runtime.h.pch";
/// Larger than any PCH of the runtime header (about 2.2 MiB on ROCm 5.2); anything bigger is not
/// one of ours.
inline constexpr std::size_t kMaxRuntimeHeaderPchBytes = std::size_t{64} << 20;
/// The first bytes of every clang PCH.
inline constexpr char kPchMagic[] = {'C', 'P', 'C', 'H'};

/// Opens `path` when it is a plausible PCH: a regular file of this user, never a link, of at most
/// kMaxRuntimeHeaderPchBytes, that begins with kPchMagic. Returns the open descriptor (read
/// position at 0) and its size, or -1. Nothing else about the file is trusted; clang itself
/// rejects a PCH built for other options.
int open_plausible_pch(const std::string& path, std::size_t* size);

}  // namespace hipacm::backend
