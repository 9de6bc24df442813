// SPDX-License-Identifier: MIT
// out[r][c] = gelu(in[r][c]+bias[c]); grid ceil(rows*cols/256), block 256; (in,bias,out,rows,cols)
// hipacm: option=-O3
// hipacm: header=include/hipacm_example_math.h
//
// Fused bias add + GELU (tanh approximation from hipacm_example_math.h), the epilogue of a
// transformer MLP layer. Signature: (const float* in, const float* bias, float* out, int rows,
// int cols), row-major.
#include "hipacm_example_math.h"

extern "C" __global__ void bias_gelu(const float* in, const float* bias, float* out, int rows,
                                     int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    out[i] = hipacm_gelu_tanhf(in[i] + bias[i % cols]);
  }
}
