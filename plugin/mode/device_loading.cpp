// SPDX-License-Identifier: MIT
// device_loading.cpp - after a compile: list the code object's kernels and, with load_device, load
// it.
#include "plugin/mode/device_loading.h"

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/device/module_loader.h"
#include "support/failure.h"

namespace hipacm {

void load_into_device(backend::CompileResult* result, const ModeSettings& settings) noexcept {
  if (result->status != HIPACM_SUCCESS) return;
  try {
    result->function_names = backend::code_object_kernels(result->code, settings.arch);
    if (settings.load_device < 0) return;
    backend::ModuleLoad load = backend::load_module(result->code, settings.arch,
                                                    settings.load_device, result->function_names);
    if (load.status == HIPACM_SUCCESS) {
      result->module = std::move(load.module);
      return;
    }
    result->status = load.status;
    result->error_message = load.error.empty() ? "loading the module failed" : load.error;
  } catch (...) {
    Failure failure = failure_from_current_exception("loading the module");
    result->status = failure.status;
    result->error_message = std::move(failure.message);
  }
  result->module.reset();
}

}  // namespace hipacm
