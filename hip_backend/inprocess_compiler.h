// inprocess_compiler.h - hipRTC in this process, serialized by one process-wide lock.
#pragma once

#include "compiler.h"

namespace hipacm::backend {

/// Compiles with the dlopen'd hipRTC in the calling process. hipRTC 5.2.3 is
/// not thread-safe (overlapping compiles abort the process, and first use
/// races), so every instance shares one process-wide lock and a once-only
/// initialization. Checks the code object before reporting success.
class InProcessCompiler final : public Compiler {
 public:
  CompileResult compile(const CompileRequest& request) override;
};

/// The same compile, as a free function: what a worker process runs.
CompileResult compile_with_hiprtc(const CompileRequest& request);

}  // namespace hipacm::backend
