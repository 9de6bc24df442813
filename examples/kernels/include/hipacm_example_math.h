// SPDX-License-Identifier: MIT
// hipacm_example_math.h: __device__ helpers (clamp, lerp, sigmoid, GELU) for the example kernels.
// hipRTC takes this file as the virtual header "hipacm_example_math.h"; it includes nothing itself
// because hipRTC pre-includes the HIP runtime (expf, tanhf, fminf and fmaxf come from there).
#ifndef HIPACM_EXAMPLE_MATH_H
#define HIPACM_EXAMPLE_MATH_H

__device__ inline float hipacm_clampf(float x, float lo, float hi) {
  return fminf(fmaxf(x, lo), hi);
}

__device__ inline float hipacm_lerpf(float a, float b, float t) { return a + t * (b - a); }

__device__ inline float hipacm_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
__device__ inline float hipacm_gelu_tanhf(float x) {
  const float k_sqrt_2_over_pi = 0.7978845608028654f;
  const float inner = k_sqrt_2_over_pi * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

#endif  // HIPACM_EXAMPLE_MATH_H
