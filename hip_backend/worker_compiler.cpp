// worker_compiler.cpp - one compile: check out a worker, run the request, give the worker back.
#include "hip_backend/worker_compiler.h"

#include <exception>
#include <new>
#include <utility>

#include "hip_backend/worker_pool.h"

namespace hipacm::backend {

WorkerCompiler::WorkerCompiler(std::string worker_path, unsigned max_workers,
                               std::uint32_t compile_timeout_ms)
    : worker_path_(std::move(worker_path)),
      max_workers_(max_workers == 0 ? 1 : max_workers),
      compile_timeout_ms_(compile_timeout_ms) {}

CompileResult WorkerCompiler::compile(const CompileRequest& request) {
  CompileResult result;
  try {
    std::string why;
    // The lease gives the worker back on every path, exceptions included; a
    // worker left mid-request is marked unusable and is killed, not reused.
    WorkerPool::Lease worker = WorkerPool::instance().checkout(worker_path_, max_workers_, &why);
    if (!worker) {
      result.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
      result.error_message = std::move(why);
      return result;
    }
    return worker->compile(request, compile_timeout_ms_);
  } catch (const std::bad_alloc&) {
    result.status = HIPACM_ERROR_OUT_OF_MEMORY;
    result.error_message = "out of memory while talking to hipacm-worker";
  } catch (const std::exception& e) {
    result.status = HIPACM_ERROR_INTERNAL;
    result.error_message = std::string("hipacm-worker transport: ") + e.what();
  } catch (...) {
    result.status = HIPACM_ERROR_INTERNAL;
    result.error_message = "hipacm-worker transport: unknown exception";
  }
  return result;
}

}  // namespace hipacm::backend
