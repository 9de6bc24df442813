// SPDX-License-Identifier: MIT
// out[r][:] = softmax(in[r][:]) (float); grid rows, block 256; args (in, out, rows, cols)
// hipacm: option=-O3
//
// One block per row. The row maximum and the sum of exp(x - max) are each found with a
// shared-memory tree reduction, so the result is numerically stable for large inputs.
// blockDim.x must be 256. Signature: (const float* in, float* out, int rows, int cols).
#define SOFTMAX_BLOCK 256

// Reduces v over the block into every thread's return value; op 0 = max, 1 = sum.
__device__ static float softmax_block_reduce(float v, float* scratch, int op) {
  const unsigned int tid = threadIdx.x;
  scratch[tid] = v;
  __syncthreads();
  for (unsigned int stride = SOFTMAX_BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      const float other = scratch[tid + stride];
      scratch[tid] = (op == 0) ? fmaxf(scratch[tid], other) : scratch[tid] + other;
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

extern "C" __global__ void softmax_rows(const float* in, float* out, int rows, int cols) {
  __shared__ float scratch[SOFTMAX_BLOCK];
  const int row = blockIdx.x;
  if (row >= rows) {
    return;  // uniform for the whole block
  }
  const float* x = in + (size_t)row * cols;
  float* y = out + (size_t)row * cols;

  float local_max = -3.402823466e+38f;  // -FLT_MAX
  for (int c = threadIdx.x; c < cols; c += SOFTMAX_BLOCK) {
    local_max = fmaxf(local_max, x[c]);
  }
  const float row_max = softmax_block_reduce(local_max, scratch, 0);

  float local_sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += SOFTMAX_BLOCK) {
    local_sum += expf(x[c] - row_max);
  }
  const float row_sum = softmax_block_reduce(local_sum, scratch, 1);

  const float inv_sum = 1.0f / row_sum;
  for (int c = threadIdx.x; c < cols; c += SOFTMAX_BLOCK) {
    y[c] = expf(x[c] - row_max) * inv_sum;
  }
}
