// device_loading.cpp - after a compile: list the code object's kernels and, with load_device, load
// it.
#include "plugin/mode/device_loading.h"

#include <new>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/device/module_loader.h"

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
  } catch (const std::bad_alloc&) {
    result->status = HIPACM_ERROR_OUT_OF_MEMORY;
    result->error_message = "out of memory while loading the module";
  } catch (...) {
    result->status = HIPACM_ERROR_INTERNAL;
    result->error_message = "unknown error while loading the module";
  }
  result->module.reset();
}

}  // namespace hipacm
