// SPDX-License-Identifier: MIT
// compiler.h - the one-method compile interface and its request/result types.
#pragma once

#include <hipacm/hipacm.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

class LoadedModule;

/// Everything that determines a code object. Owned copies: a request can
/// outlive the caller's buffers and cross a process boundary.
struct CompileRequest {
  std::string source;
  std::string source_name = "kernel.hip";
  std::vector<std::string> options;
  /// (name, contents) of each virtual header, in the caller's order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> name_expressions;
  /// Validated target, e.g. "gfx90a" or "gfx90a:xnack-".
  std::string arch;
  /// The compiler variables of the host when it submitted (capture_compiler_environment() in
  /// compiler_environment.h): part of the key, and set in the worker before it compiles, so a
  /// worker started under other values compiles what the key says. Empty: the compiling
  /// process's own environment, unkeyed.
  std::vector<std::string> environment;
};

/// The outcome of one compile. `status` is HIPACM_SUCCESS or the failure.
struct CompileResult {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::string error_message;  ///< one line for humans; empty on success
  std::string log;            ///< the compiler's log, possibly empty
  std::vector<std::uint8_t> code;
  std::vector<std::string> lowered_names;  ///< request.name_expressions order
  double compile_seconds = 0.0;
  /// Filled in the host after the compile step (never sent to or from a
  /// worker): every kernel in `code`, sorted, and with load_device the
  /// module, whose last reference unloads it.
  std::vector<std::string> function_names;
  std::shared_ptr<const LoadedModule> module;
  /// Served by the persistent cache; no compiler ran.
  bool from_cache = false;
  /// Set in the host by a compile that may have read a file its request does not name (one in
  /// the working directory of an in-process compile that the compiler's driver reads on its own):
  /// why this result, success or failure, must not be stored in the cache. Never sent to or from
  /// a worker, which compiles in an empty directory of its own.
  std::string not_cacheable_why;
  /// Set by the step that ran check_compile_result on `code` and `lowered_names` against their
  /// request in this process (an in-process compile, or the host's check of a worker's reply),
  /// so a later step (the cache's store) does not check the same bytes again. Never sent to or
  /// from a worker: the host does not take a worker's word for its own result.
  bool code_checked = false;
};

/// What a compile step learned about a request while looking for a ready result (try_ready) and
/// did not serve: handed to compile_with_plan, so the request is not examined twice (the
/// persistent cache's key and include scan). Opaque: only the step that made it reads it.
class CompilePlan {
 public:
  virtual ~CompilePlan() = default;
};

/// A compile step: request in, result out. Implementations: in-process
/// hipRTC, a worker process, and test fault injectors. compile() must not
/// throw for compiler failures; it reports them in the result.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual CompileResult compile(const CompileRequest& request) = 0;

  /// Serves `request` without compiling when a ready result exists (the
  /// persistent cache): true with *out filled. Must be cheap and must not
  /// throw; the default has nothing ready.
  virtual bool try_ready(const CompileRequest& request, CompileResult* out) noexcept {
    (void)request;
    (void)out;
    return false;
  }

  /// try_ready, keeping in *plan what compile_with_plan may reuse when nothing was ready (null
  /// when there is nothing to keep). The default keeps nothing.
  virtual bool look_up(const CompileRequest& request, CompileResult* out,
                       std::shared_ptr<const CompilePlan>* plan) noexcept {
    plan->reset();
    return try_ready(request, out);
  }

  /// compile(request), given the plan look_up left for the same request (or null). The default
  /// has no use for one.
  virtual CompileResult compile_with_plan(const CompileRequest& request, const CompilePlan* plan) {
    (void)plan;
    return compile(request);
  }

  /// Starts, in the background, what `workers` compiles for `arch` at once will need, so that
  /// the first ones do not wait for it. Returns at once and never throws; the default has
  /// nothing to start.
  virtual void prestart(const std::string& arch, unsigned workers) noexcept {
    (void)arch;
    (void)workers;
  }
};

/// A result that carries only `failure`: how both ends of a worker report an exception that
/// escaped a compile.
inline CompileResult failed_compile(Failure failure) {
  CompileResult result;
  result.status = failure.status;
  result.error_message = std::move(failure.message);
  return result;
}

}  // namespace hipacm::backend
