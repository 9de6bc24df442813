// SPDX-License-Identifier: MIT
// nvrtc_prelude.cpp - the text of the HIP-on-NVIDIA device prelude.
#include "hip_backend/nvrtc/nvrtc_prelude.h"

namespace hipacm::backend {

const char* hip_prelude_source() {
  // HIP's shuffles and votes take no mask and act on the whole warp, so they
  // map to the *_sync forms with every lane set; the pre-Volta mask-less CUDA
  // versions are gone on every arch that NVRTC still supports.
  return R"hip(// hip/hip_runtime.h - HIP's device-side names on the NVIDIA platform (hipacm prelude).
#ifndef HIPACM_HIP_NVIDIA_PRELUDE_H
#define HIPACM_HIP_NVIDIA_PRELUDE_H

#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define __HIPCC_RTC__ 1
#if defined(__CUDA_ARCH__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_SYMBOL(symbol) symbol
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

#define HIPACM_FULL_WARP_MASK 0xffffffffu

template <typename T>
__device__ inline T __shfl(T var, int src_lane, int width = warpSize) {
  return __shfl_sync(HIPACM_FULL_WARP_MASK, var, src_lane, width);
}
template <typename T>
__device__ inline T __shfl_up(T var, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(HIPACM_FULL_WARP_MASK, var, delta, width);
}
template <typename T>
__device__ inline T __shfl_down(T var, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(HIPACM_FULL_WARP_MASK, var, delta, width);
}
template <typename T>
__device__ inline T __shfl_xor(T var, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(HIPACM_FULL_WARP_MASK, var, lane_mask, width);
}

// CUDA still declares the pre-Volta mask-less votes (with a 32-bit ballot), so
// HIP's forms (a 64-bit ballot) go through macros rather than overloads.
__device__ inline int hipacm_any_(int predicate) {
  return __any_sync(HIPACM_FULL_WARP_MASK, predicate);
}
__device__ inline int hipacm_all_(int predicate) {
  return __all_sync(HIPACM_FULL_WARP_MASK, predicate);
}
__device__ inline unsigned long long hipacm_ballot_(int predicate) {
  return __ballot_sync(HIPACM_FULL_WARP_MASK, predicate);
}
#define __any(predicate) hipacm_any_(predicate)
#define __all(predicate) hipacm_all_(predicate)
#define __ballot(predicate) hipacm_ballot_(predicate)
__device__ inline unsigned int __lane_id() {
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

#endif  // HIPACM_HIP_NVIDIA_PRELUDE_H
)hip";
}

}  // namespace hipacm::backend
