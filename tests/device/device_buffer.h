// SPDX-License-Identifier: MIT
// device_buffer.h - a device allocation that frees itself, with typed upload and download.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_driver.h"

namespace hipacm::device {

/// Throws std::runtime_error naming `what` when a driver call failed.
inline void check_cu(const CudaDriver& cu, CuResult r, const std::string& what) {
  if (r != 0) throw std::runtime_error(what + ": " + cu.describe(r));
}

class DeviceBuffer {
 public:
  DeviceBuffer(const CudaDriver& cu, std::size_t bytes) : cu_(cu), bytes_(bytes) {
    check_cu(cu_, cu_.alloc(&ptr_, bytes_ == 0 ? 1 : bytes_), "cuMemAlloc");
  }
  template <typename T>
  DeviceBuffer(const CudaDriver& cu, const std::vector<T>& host)
      : DeviceBuffer(cu, host.size() * sizeof(T)) {
    check_cu(cu_, cu_.upload(ptr_, host.data(), bytes_), "cuMemcpyHtoD");
  }
  ~DeviceBuffer() { cu_.free(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// The kernel argument slot: cuLaunchKernel takes the address of the pointer value.
  CuDevicePtr* arg() { return &ptr_; }
  void zero() { check_cu(cu_, cu_.memset_zero(ptr_, bytes_), "cuMemsetD8"); }

  template <typename T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    check_cu(cu_, cu_.download(host.data(), ptr_, host.size() * sizeof(T)), "cuMemcpyDtoH");
    return host;
  }

 private:
  const CudaDriver& cu_;
  std::size_t bytes_;
  CuDevicePtr ptr_ = 0;
};

}  // namespace hipacm::device
