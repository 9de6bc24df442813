// SPDX-License-Identifier: MIT
// relu_f32 / gelu_f32: out[i] = act(in[i]); grid ceil(n/256), block 256; args (in, out, n)
// hipacm: option=-O3
//
// Two elementwise activations in one module. GELU uses the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Signatures: (const float* in, float* out, int n).
extern "C" __global__ void relu_f32(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = fmaxf(in[i], 0.0f);
  }
}

extern "C" __global__ void gelu_f32(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float x = in[i];
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    out[i] = 0.5f * x * (1.0f + tanhf(inner));
  }
}
