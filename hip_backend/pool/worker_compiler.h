// SPDX-License-Identifier: MIT
// worker_compiler.h - the Compiler that runs each compile in a pooled hipacm-worker process.
#pragma once

#include <cstdint>
#include <string>

#include "hip_backend/compiler.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Compiles in worker processes from the process-wide WorkerPool: parallel
/// across processes (hipRTC is not, within one) and crash-proof for the host.
/// compile() is thread-safe and never throws. A crash or timeout fails only
/// the request that caused it (COMPILER_CRASHED / TIMEOUT); the next compile
/// gets a fresh worker. Spawn failures are BACKEND_UNAVAILABLE. A SUCCESS from
/// a worker is re-checked with check_compile_result() in this process (the host's one check of
/// it: the result says so in code_checked); a code object that fails it is COMPILATION, with a
/// message that says hipacm, not the compiler, rejected it.
class WorkerCompiler final : public Compiler {
 public:
  /// worker_path: from find_worker_binary(). max_workers: at most this many
  /// compiles of this compiler run at once (0 counts as 1).
  /// compile_timeout_ms: per compile, from the request reaching the worker
  /// (including a fresh worker's start-up) to its result; 0 = no limit.
  WorkerCompiler(std::string worker_path, unsigned max_workers, std::uint32_t compile_timeout_ms);

  CompileResult compile(const CompileRequest& request) override;
  /// Up to `workers` (at most max_workers) warm workers from the pool's prestart().
  void prestart(const std::string& arch, unsigned workers) noexcept override;

  const std::string& worker_path() const { return worker_path_; }

 private:
  const std::string worker_path_;
  const unsigned max_workers_;
  const std::uint32_t compile_timeout_ms_;
};

}  // namespace hipacm::backend
