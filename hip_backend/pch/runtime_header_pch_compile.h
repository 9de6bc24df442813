// SPDX-License-Identifier: MIT
// runtime_header_pch_compile.h - a worker's compile, with hipRTC's runtime header precompiled
// where that is proven to change nothing, and the helper process that emits the PCH.
#pragma once

#include <sys/types.h>

#include <optional>

#include "hip_backend/compiler.h"
#include "hip_backend/pch/runtime_header_pch_store.h"

namespace hipacm::backend {

/// The build of a key's PCH, which waits until its first compile's result has been sent.
struct PendingPchBuild {
  CompileRequest request;  ///< the compile the PCH is checked on
  /// The plain compile's result, which the PCH's must equal; nullopt when the build makes it
  /// (a first compile with name expressions, checked on its source without them).
  std::optional<CompileResult> plain;
  RuntimeHeaderPchStore::Claim claim;
};

/// compile_for_target(request), faster where it can be and never different.
///
/// hipRTC parses its 360 KB runtime header again in every compile: about 85 % of a small
/// kernel's time on ROCm 5.2. For a gfx arch whose options a PCH may serve
/// (runtime_header_pch_applies), the compile runs with the working directory in the store's
/// directory for its key, where clang's driver loads the PCH in place of that parse. Keys cover
/// the toolchain, the arch and every option, so a PCH serves only the compiles it was built for.
/// The rules:
///  - the first compile of a key is plain. When it passes, this process claims the key and
///    *pending gets its build, to start once the result is sent (PchBuild). A compile with name
///    expressions, which hipRTC 6.4 and 7.2 lower in a changing order (two compiles of it are
///    never compared), has its PCH checked on its source without them;
///  - a compile that fails with a PCH is compiled again without one; when that passes, the PCH
///    is removed and the plain result returned. So a PCH never turns a valid program away;
///  - with HIPACM_HIPRTC_PCH=check, every compile with a PCH is made plainly too, the plain
///    result is returned, and a difference refuses the key;
///  - everything else (another arch, another option, HIPACM_HIPRTC_PCH=off, a store that cannot
///    be used, a key another process is building) is the plain compile.
/// Only for single-threaded worker processes: it changes the process's working directory for
/// the length of one compile. Never throws.
CompileResult compile_in_worker(const CompileRequest& request,
                                std::optional<PendingPchBuild>* pending);

/// One key's PCH being built and checked. The worker first shows that this hipRTC loads a PCH
/// from the working directory at all (with a decoy there its kernel must fail: quickly where the
/// PCH is loaded; some releases' comgr runs the driver elsewhere, and the key is refused). Then
/// the helper process (run_runtime_header_pch_helper) has hipRTC emit the PCH while the worker
/// goes on serving. When it is done, the worker compiles the kernel with it, between two
/// requests, and publishes the PCH only when that result equals the plain one byte for byte
/// (code, lowered names, log); otherwise the key is refused for good. The two compiles of the
/// worker's own (three for a source whose names were taken out: its plain compile too) are the
/// only time a host's next request can wait on a build.
class PchBuild {
 public:
  /// Starts the helper; a build that cannot start lets its claim go (a later compile retries).
  explicit PchBuild(PendingPchBuild build);
  PchBuild(const PchBuild&) = delete;
  PchBuild& operator=(const PchBuild&) = delete;
  /// Kills and reaps a helper still running: a worker leaves no process behind.
  ~PchBuild();

  /// True once the helper has ended and its outcome was acted on (published or refused). Never
  /// blocks, never throws.
  bool finished() noexcept;

 private:
  void conclude(int status);

  PendingPchBuild build_;
  pid_t pid_ = -1;
};

/// The helper's command line: `hipacm-worker --emit-header-pch DIR`.
inline constexpr const char* kEmitHeaderPchFlag = "--emit-header-pch";

/// The helper process, on a directory that holds the request as a wire frame (DIR/request): has
/// hipRTC emit DIR/hiprtc_runtime.h.pch for the request's arch and options, with comgr keeping
/// its files in DIR/tmp. Its own process because comgr reads AMD_COMGR_SAVE_TEMPS once, at its
/// first use, and because keeping its files changes what comgr compiles on some releases.
/// Returns the exit code: 0 when the PCH was written.
int run_runtime_header_pch_helper(int argc, char** argv);

}  // namespace hipacm::backend
