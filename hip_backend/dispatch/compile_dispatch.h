// SPDX-License-Identifier: MIT
// compile_dispatch.h - the in-process compile step for any arch: NVRTC or hipRTC by its prefix.
#pragma once

#include <cstdint>

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// The in-process compile step for any arch: NVRTC for sm_/compute_ archs
/// (no lock), hipRTC under its lock otherwise. What a worker process runs.
CompileResult compile_for_target(const CompileRequest& request);

/// Compiles in the calling process through compile_for_target: NVIDIA archs
/// with NVRTC, AMD archs with hipRTC, each checked before success. Each compile
/// holds a slot of the user's machine-wide budget (MachineBudget) while it runs.
class InProcessCompiler final : public Compiler {
 public:
  /// compile_timeout_ms (0: none) bounds only the wait for a machine-wide slot, which ends
  /// HIPACM_ERROR_TIMEOUT: a compile in the host cannot be interrupted.
  explicit InProcessCompiler(std::uint32_t compile_timeout_ms = 0)
      : compile_timeout_ms_(compile_timeout_ms) {}
  CompileResult compile(const CompileRequest& request) override;

 private:
  const std::uint32_t compile_timeout_ms_;
};

}  // namespace hipacm::backend
