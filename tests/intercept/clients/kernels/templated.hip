// SPDX-License-Identifier: MIT
// templated.hip - templated kernels that a client reaches only through name expressions.
// No #include <hip/hip_runtime.h>: hipRTC includes its runtime declarations itself, and hipRTC 6
// and 7 find no such header unless the program passes one.

template <typename T, int Factor>
__global__ void scale(T* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * static_cast<T>(Factor);
}

namespace blas {
template <typename T>
__global__ void axpy(T alpha, const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
}  // namespace blas

extern "C" __global__ void plain_fill(float* data, float value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}
