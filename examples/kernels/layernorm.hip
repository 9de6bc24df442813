// SPDX-License-Identifier: MIT
// row-wise layer norm (float); grid rows, block 256; args (in,out,gamma,beta,rows,cols,eps)
// hipacm: option=-O3
//
// Layer normalisation over the last dimension of a row-major rows x cols matrix. One block per
// row; mean and (biased) variance come from two shared-memory tree reductions. blockDim.x must be
// 256. Signature: (const float* in, float* out, const float* gamma, const float* beta, int rows,
// int cols, float eps).
#define LAYERNORM_BLOCK 256

__device__ static float layernorm_block_sum(float v, float* scratch) {
  const unsigned int tid = threadIdx.x;
  scratch[tid] = v;
  __syncthreads();
  for (unsigned int stride = LAYERNORM_BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      scratch[tid] += scratch[tid + stride];
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();
  return result;
}

extern "C" __global__ void layernorm(const float* in, float* out, const float* gamma,
                                     const float* beta, int rows, int cols, float eps) {
  __shared__ float scratch[LAYERNORM_BLOCK];
  const int row = blockIdx.x;
  if (row >= rows) {
    return;
  }
  const float* x = in + (size_t)row * cols;
  float* y = out + (size_t)row * cols;

  float local = 0.0f;
  for (int c = threadIdx.x; c < cols; c += LAYERNORM_BLOCK) {
    local += x[c];
  }
  const float mean = layernorm_block_sum(local, scratch) / (float)cols;

  local = 0.0f;
  for (int c = threadIdx.x; c < cols; c += LAYERNORM_BLOCK) {
    const float d = x[c] - mean;
    local += d * d;
  }
  const float variance = layernorm_block_sum(local, scratch) / (float)cols;
  const float inv_std = rsqrtf(variance + eps);

  for (int c = threadIdx.x; c < cols; c += LAYERNORM_BLOCK) {
    y[c] = (x[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}
