// SPDX-License-Identifier: MIT
// c_api.cpp - the exported hipacm_* entry points: argument checks and exception fencing.
#include <hipacm/hipacm.h>

#include <cstddef>
#include <cstring>

#include "plugin/abi/entry_guard.h"
#include "plugin/abi/last_error.h"
#include "plugin/abi/mode_config_reader.h"
#include "plugin/abi/request_reader.h"
#include "plugin/abi/struct_versions.h"
#include "plugin/mode/compiler_factory.h"
#include "plugin/mode/device_loading.h"
#include "plugin/mode/future_registry.h"
#include "plugin/mode/mode_registry.h"
#include "plugin/mode/mode_settings.h"
#include "plugin/record/request_recorder.h"

using namespace hipacm;

namespace {

void require_out(const void* out, const char* name) {
  if (out == nullptr)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
}

// A string getter of a future: `get` reads it from the future; "" for a bad handle. The string
// lives in the future, which the caller's reference keeps alive; the temporary reference taken
// here only guards the lookup.
template <class Get>
const char* future_string(const char* function, hipacm_future* f, Get get) noexcept {
  const char* value = "";
  guarded(function, [&] {
    value = get(acquire_future(f));
    return HIPACM_SUCCESS;
  });
  return value;
}

}  // namespace

extern "C" {

HIPACM_API void hipacm_mode_config_init_sized(hipacm_mode_config* cfg, size_t struct_size) {
  if (cfg == nullptr || struct_size < kModeConfigV1Size) return;
  hipacm_mode_config defaults{};
  defaults.struct_size = struct_size;
  defaults.max_workers = 0;
  defaults.ignore_errors = 0;
  defaults.fail_fast = 0;
  defaults.arch = nullptr;
  defaults.isolation = HIPACM_ISOLATION_AUTO;
  defaults.compile_timeout_ms = 0;
  defaults.cache_dir = nullptr;
  defaults.cache_policy = HIPACM_CACHE_DEFAULT;
  defaults.load_device = HIPACM_LOAD_NONE;
  defaults.cache_failures = 0;
  defaults.reserved_1_4 = 0;
  defaults.remote_cache = nullptr;  // $HIPACM_REMOTE_CACHE, if set
  // Never write past the caller's struct: an older host's is smaller than
  // ours, and a newer host's tail (fields we do not know) is zeroed.
  const size_t known = struct_size < sizeof defaults ? struct_size : sizeof defaults;
  std::memcpy(cfg, &defaults, known);
  if (struct_size > known)
    std::memset(reinterpret_cast<char*>(cfg) + known, 0, struct_size - known);
}

HIPACM_API void(hipacm_mode_config_init)(hipacm_mode_config* cfg) {
  hipacm_mode_config_init_sized(cfg, kModeConfigV1Size);
}

HIPACM_API hipacm_status hipacm_mode_enter(const hipacm_mode_config* cfg, hipacm_mode** out) {
  return guarded(__func__, [&] {
    require_out(out, "out");
    *out = nullptr;
    // Cheap refusal first: a busy slot must not pay for config resolution.
    if (active_mode() != nullptr)
      throw StatusError(HIPACM_ERROR_MODE_ALREADY_ACTIVE,
                        "another hipacm mode is already active in this process; exit it first");
    ModeSettings settings = resolve_mode_settings(read_mode_config(cfg));
    auto compiler = make_compiler(settings);
    auto mode = std::make_shared<Mode>(std::move(settings), std::move(compiler));
    *out = claim_slot(std::move(mode));
    return HIPACM_SUCCESS;
  });
}

HIPACM_API hipacm_mode* hipacm_active_mode(void) { return active_mode(); }

HIPACM_API hipacm_status hipacm_submit(hipacm_mode* mode, const hipacm_request* req,
                                       hipacm_future** out) {
  return guarded(__func__, [&] {
    require_out(out, "out");
    *out = nullptr;
    auto live = find_mode_for_submit(mode);
    Submission submission = read_request(req, live->settings().arch);
    *out = to_handle(live->submit(std::move(submission)).release());
    return HIPACM_SUCCESS;
  });
}

HIPACM_API hipacm_status hipacm_mode_exit(hipacm_mode* mode, hipacm_future** first_failure) {
  if (first_failure != nullptr) *first_failure = nullptr;
  const char* const function = __func__;  // __func__ in the lambda would be "operator()"
  return guarded(function, [&] {
    auto exiting = begin_exit(mode);
    ExitOutcome outcome;
    try {
      outcome = exiting->exit();
    } catch (...) {
      finish_exit(mode);
      throw;
    }
    finish_exit(mode);
    if (outcome.status == HIPACM_SUCCESS) return HIPACM_SUCCESS;
    const std::string message = "compile of '" + outcome.first_failure->key() +
                                "' failed: " + outcome.first_failure->error_message();
    if (first_failure != nullptr) *first_failure = to_handle(outcome.first_failure.release());
    return report(outcome.status, function, message);
  });
}

HIPACM_API hipacm_status hipacm_compile(const hipacm_request* req, const char* arch,
                                        hipacm_future** out) {
  const char* const function = __func__;  // __func__ in the lambda would be "operator()"
  return guarded(function, [&] {
    require_out(out, "out");
    *out = nullptr;
    const ModeSettings settings = resolve_mode_settings(compile_config(arch));
    Submission submission = read_request(req, settings.arch);
    record_request(submission.request);
    FutureRef future = make_future(submission.key, settings.arch, submission.callbacks);
    backend::CompileResult result = make_compiler(settings)->compile(submission.request);
    load_into_device(&result, settings);
    future->complete(std::move(result));
    const hipacm_status status = future->status();
    const std::string message = future->error_message();
    *out = to_handle(future.release());
    return report(status, function, message);
  });
}

HIPACM_API hipacm_status hipacm_future_retain(hipacm_future* f) {
  return guarded(__func__, [&] {
    if (!retain_future(f))
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown future handle");
    return HIPACM_SUCCESS;
  });
}

HIPACM_API hipacm_status hipacm_future_release(hipacm_future* f) {
  return guarded(__func__, [&] {
    if (!release_future(f))
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown future handle");
    return HIPACM_SUCCESS;
  });
}

HIPACM_API hipacm_status hipacm_future_wait(hipacm_future* f, int64_t timeout_ms) {
  const char* const function = __func__;  // __func__ in the lambda would be "operator()"
  return guarded(function, [&] {
    FutureRef future = acquire_future(f);
    if (future->wait_for(timeout_ms)) return HIPACM_SUCCESS;
    return report(HIPACM_ERROR_NOT_READY, function, "the compile is still running");
  });
}

HIPACM_API hipacm_status hipacm_future_status(hipacm_future* f) {
  return guarded(__func__, [&] {
    FutureRef future = acquire_future(f);
    return future->status();
  });
}

HIPACM_API hipacm_status hipacm_future_result(hipacm_future* f, const hipacm_kernel** out) {
  if (out != nullptr) *out = nullptr;
  const char* const function = __func__;  // __func__ in the lambda would be "operator()"
  return guarded(function, [&] {
    FutureRef future = acquire_future(f);
    const hipacm_status status = future->collect();
    if (status == HIPACM_SUCCESS) {
      if (out != nullptr) *out = future->kernel();
      return HIPACM_SUCCESS;
    }
    return report(status, function,
                  "compile of '" + future->key() + "' failed: " + future->error_message());
  });
}

HIPACM_API const char* hipacm_future_key(hipacm_future* f) {
  return future_string(__func__, f, [](const FutureRef& future) { return future->key().c_str(); });
}

HIPACM_API const char* hipacm_future_log(hipacm_future* f) {
  return future_string(__func__, f, [](const FutureRef& future) { return future->log(); });
}

HIPACM_API const char* hipacm_future_error_message(hipacm_future* f) {
  return future_string(__func__, f,
                       [](const FutureRef& future) { return future->error_message(); });
}

HIPACM_API const char* hipacm_last_error_message(void) { return last_error_message(); }

}  // extern "C"
