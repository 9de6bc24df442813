// SPDX-License-Identifier: MIT
// cuda_driver.cpp - loads libcuda.so.1 with dlopen and wraps the driver calls the checks use.
#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>

namespace hipacm::device {

// The _v2 entry points are the ones cuda.h maps the plain names to since CUDA 4.0.
struct CudaDriver::Api {
  CuResult (*init)(unsigned) = nullptr;
  CuResult (*device_get)(CuDevice*, int) = nullptr;
  CuResult (*device_get_name)(char*, int, CuDevice) = nullptr;
  CuResult (*primary_retain)(CuContext*, CuDevice) = nullptr;
  CuResult (*primary_release)(CuDevice) = nullptr;
  CuResult (*ctx_set_current)(CuContext) = nullptr;
  CuResult (*ctx_synchronize)() = nullptr;
  CuResult (*mem_alloc)(CuDevicePtr*, std::size_t) = nullptr;
  CuResult (*mem_free)(CuDevicePtr) = nullptr;
  CuResult (*htod)(CuDevicePtr, const void*, std::size_t) = nullptr;
  CuResult (*dtoh)(void*, CuDevicePtr, std::size_t) = nullptr;
  CuResult (*memset_d8)(CuDevicePtr, unsigned char, std::size_t) = nullptr;
  CuResult (*launch)(CuFunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, void*, void**, void**) = nullptr;
  CuResult (*module_load_data)(CuModule*, const void*) = nullptr;
  CuResult (*module_unload)(CuModule) = nullptr;
  CuResult (*module_get_function)(CuFunction*, CuModule, const char*) = nullptr;
  CuResult (*get_error_name)(CuResult, const char**) = nullptr;
  CuResult (*get_error_string)(CuResult, const char**) = nullptr;
};

namespace {

template <typename Fn>
bool bind(void* handle, const char* name, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (out == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  return out != nullptr;
}

}  // namespace

CudaDriver::CudaDriver(int ordinal) : api_(std::make_unique<Api>()) {
  handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* err = dlerror();
    why_ = std::string("cannot load the CUDA driver libcuda.so.1: ") + (err ? err : "unknown");
    return;
  }
  std::string missing;
  Api& a = *api_;
  bind(handle_, "cuInit", a.init, missing);
  bind(handle_, "cuDeviceGet", a.device_get, missing);
  bind(handle_, "cuDeviceGetName", a.device_get_name, missing);
  bind(handle_, "cuDevicePrimaryCtxRetain", a.primary_retain, missing);
  bind(handle_, "cuDevicePrimaryCtxRelease_v2", a.primary_release, missing);
  bind(handle_, "cuCtxSetCurrent", a.ctx_set_current, missing);
  bind(handle_, "cuCtxSynchronize", a.ctx_synchronize, missing);
  bind(handle_, "cuMemAlloc_v2", a.mem_alloc, missing);
  bind(handle_, "cuMemFree_v2", a.mem_free, missing);
  bind(handle_, "cuMemcpyHtoD_v2", a.htod, missing);
  bind(handle_, "cuMemcpyDtoH_v2", a.dtoh, missing);
  bind(handle_, "cuMemsetD8_v2", a.memset_d8, missing);
  bind(handle_, "cuLaunchKernel", a.launch, missing);
  bind(handle_, "cuModuleLoadData", a.module_load_data, missing);
  bind(handle_, "cuModuleUnload", a.module_unload, missing);
  bind(handle_, "cuModuleGetFunction", a.module_get_function, missing);
  bind(handle_, "cuGetErrorName", a.get_error_name, missing);
  bind(handle_, "cuGetErrorString", a.get_error_string, missing);
  if (!missing.empty()) {
    why_ = "libcuda.so.1 lacks " + missing;
    return;
  }
  if (CuResult r = a.init(0); r != 0) {
    why_ = "cuInit failed: " + describe(r);
    return;
  }
  if (CuResult r = a.device_get(&device_, ordinal); r != 0) {
    why_ = "no CUDA device " + std::to_string(ordinal) + ": " + describe(r);
    return;
  }
  char name[256] = {};
  if (a.device_get_name(name, sizeof name - 1, device_) == 0) device_name_ = name;
  if (CuResult r = a.primary_retain(&context_, device_); r != 0) {
    why_ = "cuDevicePrimaryCtxRetain failed: " + describe(r);
    context_ = nullptr;
    return;
  }
  if (CuResult r = a.ctx_set_current(context_); r != 0) {
    why_ = "cuCtxSetCurrent failed: " + describe(r);
    return;
  }
  ready_ = true;
}

CudaDriver::~CudaDriver() {
  if (context_ != nullptr) api_->primary_release(device_);
  // libcuda stays loaded: hipacm and its modules may still hold the same driver instance.
}

CuResult CudaDriver::alloc(CuDevicePtr* out, std::size_t bytes) const {
  return api_->mem_alloc(out, bytes);
}
CuResult CudaDriver::free(CuDevicePtr ptr) const { return api_->mem_free(ptr); }
CuResult CudaDriver::upload(CuDevicePtr dst, const void* src, std::size_t bytes) const {
  return api_->htod(dst, src, bytes);
}
CuResult CudaDriver::download(void* dst, CuDevicePtr src, std::size_t bytes) const {
  return api_->dtoh(dst, src, bytes);
}
CuResult CudaDriver::memset_zero(CuDevicePtr dst, std::size_t bytes) const {
  return api_->memset_d8(dst, 0, bytes);
}
CuResult CudaDriver::launch(CuFunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                            void** args) const {
  return api_->launch(f, gx, gy, 1, bx, by, 1, 0, nullptr, args, nullptr);
}
CuResult CudaDriver::synchronize() const { return api_->ctx_synchronize(); }
CuResult CudaDriver::load_module(CuModule* out, const void* image) const {
  return api_->module_load_data(out, image);
}
CuResult CudaDriver::unload_module(CuModule m) const { return api_->module_unload(m); }
CuResult CudaDriver::get_function(CuFunction* out, CuModule m, const char* name) const {
  return api_->module_get_function(out, m, name);
}
CuResult CudaDriver::make_current() const { return api_->ctx_set_current(context_); }

std::string CudaDriver::describe(CuResult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_->get_error_name != nullptr) api_->get_error_name(r, &name);
  if (api_->get_error_string != nullptr) api_->get_error_string(r, &text);
  return std::string(name ? name : "CUDA_ERROR") + " (" + std::to_string(r) +
         "): " + (text ? text : "unknown");
}

}  // namespace hipacm::device
