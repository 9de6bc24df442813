// SPDX-License-Identifier: MIT
// y[i] = a * x[i] + y[i] (float); grid ceil(n/256), block 256; args (int n, float a, x, y)
// hipacm: option=-O3
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
