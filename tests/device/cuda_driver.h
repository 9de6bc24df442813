// SPDX-License-Identifier: MIT
// cuda_driver.h - the few CUDA driver API calls the device checks need, loaded from libcuda.so.1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hipacm::device {

/// Opaque driver handles, declared here so the program builds without the CUDA toolkit.
using CuResult = int;
using CuDevice = int;
using CuContext = void*;
using CuModule = void*;
using CuFunction = void*;
using CuDevicePtr = std::uint64_t;

/// The driver library, opened once. Every call returns the driver's status; 0 is success.
class CudaDriver {
 public:
  /// Opens libcuda.so.1 and initialises device `ordinal`'s primary context, made current on the
  /// calling thread. `ok()` is false (and `why()` says why) when any step fails.
  explicit CudaDriver(int ordinal);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  bool ok() const { return ready_; }
  const std::string& why() const { return why_; }
  std::string device_name() const { return device_name_; }

  CuResult alloc(CuDevicePtr* out, std::size_t bytes) const;
  CuResult free(CuDevicePtr ptr) const;
  CuResult upload(CuDevicePtr dst, const void* src, std::size_t bytes) const;
  CuResult download(void* dst, CuDevicePtr src, std::size_t bytes) const;
  CuResult memset_zero(CuDevicePtr dst, std::size_t bytes) const;
  CuResult launch(CuFunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                  void** args) const;
  CuResult synchronize() const;
  CuResult load_module(CuModule* out, const void* image) const;
  CuResult unload_module(CuModule m) const;
  CuResult get_function(CuFunction* out, CuModule m, const char* name) const;
  /// "CUDA_ERROR_... (n): description" for a status.
  std::string describe(CuResult r) const;
  /// Makes the primary context current on the calling thread (the checks run on one thread).
  CuResult make_current() const;

 private:
  struct Api;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  CuDevice device_ = 0;
  CuContext context_ = nullptr;
  bool ready_ = false;
  std::string why_;
  std::string device_name_;
};

}  // namespace hipacm::device
