// SPDX-License-Identifier: MIT
// module_loader.h - loads a code object into a device (CUDA primary context or HIP) and resolves
// its kernels.
#pragma once

#include <hipacm/hipacm.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hipacm::backend {

/// A module loaded on a device with its kernels resolved. The destructor
/// unloads it (on NVIDIA with the device's primary context pushed, then
/// releases that context), so whoever holds the last reference decides when.
class LoadedModule {
 public:
  LoadedModule() = default;
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  virtual ~LoadedModule() = default;

  /// CUmodule or hipModule_t.
  void* module() const noexcept { return module_; }
  /// CUfunction / hipFunction_t, in the order of the names passed to load_module.
  const std::vector<void*>& functions() const noexcept { return functions_; }

  /// The driver call a failed load stopped at, e.g. cuModuleGetFunction("vadd"): the load
  /// returns the driver's own code, which the caller maps to a status, and this names the call.
  const std::string& failed_step() const noexcept { return step_; }

 protected:
  /// Resolves `names` in order with `get(void** function, const char* name)`, the driver's
  /// get-function call named `call` (the step). Returns the first failing code, or 0 (success on
  /// both platforms).
  template <class Get>
  int resolve_functions(const std::vector<std::string>& names, const char* call, Get get) {
    functions_.reserve(names.size());
    for (const std::string& name : names) {
      step_ = std::string(call) + "(\"" + name + "\")";
      void* function = nullptr;
      if (const int error = get(&function, name.c_str()); error != 0) return error;
      functions_.push_back(function);
    }
    return 0;
  }

  /// The driver call under way; failed_step() once a load has failed.
  std::string step_;
  void* module_ = nullptr;
  std::vector<void*> functions_;
};

/// The outcome of load_module: a module, or a status and a message naming the
/// driver's error.
struct ModuleLoad {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::string error;
  std::shared_ptr<const LoadedModule> module;
};

/// Loads `code` (compiled for `arch`) on `device` and resolves every name in
/// `function_names`: the CUDA driver (libcuda.so.1, the device's primary
/// context) for NVIDIA archs, the HIP runtime (libamdhip64) for AMD ones.
/// BACKEND_UNAVAILABLE when there is no driver/runtime or no such device;
/// OUT_OF_MEMORY when the device is out of memory; INTERNAL when the driver
/// refuses the module or a kernel. Never throws.
ModuleLoad load_module(const std::vector<std::uint8_t>& code, const std::string& arch, int device,
                       const std::vector<std::string>& function_names) noexcept;

/// How the two halves of load_module word their outcomes; `platform` is "CUDA" or "HIP".
ModuleLoad runtime_unavailable(const char* platform, int device, const std::string& why);
ModuleLoad no_such_device(const char* runtime, int device, int count, const std::string& detail);
ModuleLoad step_failed(hipacm_status status, const std::string& step, const char* platform,
                       int device, const std::string& error);
ModuleLoad loaded_module(std::shared_ptr<const LoadedModule> module);

/// The two halves of load_module, one per platform.
ModuleLoad load_cuda_module(const std::vector<std::uint8_t>& code, int device,
                            const std::vector<std::string>& function_names);
ModuleLoad load_hip_module(const std::vector<std::uint8_t>& code, int device,
                           const std::vector<std::string>& function_names);

}  // namespace hipacm::backend
