// SPDX-License-Identifier: MIT
// broken.hip - a kernel that must fail to compile: the failure log is part of what clients compare.
// No #include <hip/hip_runtime.h>: hipRTC includes its runtime declarations itself, and hipRTC 6
// and 7 find no such header unless the program passes one.

template <typename T>
__global__ void broken_copy(T* out, const T* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + undeclared_offset;
}
