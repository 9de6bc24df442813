// SPDX-License-Identifier: MIT
// out[i] = lerp(a[i], b[i], sigmoid(t[i])); grid ceil(n/256), block 256; args (a, b, t, out, n)
// hipacm: header=include/hipacm_example_math.h
//
// Uses __device__ helpers from a user header passed to hipRTC as the virtual header
// "hipacm_example_math.h". Signature: (const float* a, const float* b, const float* t, float* out,
// int n).
#include "hipacm_example_math.h"

extern "C" __global__ void sigmoid_blend(const float* a, const float* b, const float* t, float* out,
                                         int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = hipacm_lerpf(a[i], b[i], hipacm_sigmoidf(t[i]));
  }
}
