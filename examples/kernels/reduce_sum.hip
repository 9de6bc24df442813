// SPDX-License-Identifier: MIT
// block_sums[b] = partial sums of in (float); grid G, block 256; args (in, block_sums, int n)
// hipacm: option=-O3
// hipacm: option=-DBLOCK_SIZE=256
//
// Classic shared-memory tree reduction. blockDim.x must equal BLOCK_SIZE (a power of two). Each
// block accumulates in[i] for i = blockIdx.x * BLOCK_SIZE + threadIdx.x + k * BLOCK_SIZE * G, so
// the G partial sums add up to the sum of all n elements whatever G is (G = 1 gives the total).
// Signature: (const float* in, float* block_sums, int n).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

extern "C" __global__ void reduce_sum(const float* in, float* block_sums, int n) {
  __shared__ float partial[BLOCK_SIZE];
  const unsigned int tid = threadIdx.x;

  float sum = 0.0f;
  for (int i = blockIdx.x * BLOCK_SIZE + tid; i < n; i += BLOCK_SIZE * gridDim.x) {
    sum += in[i];
  }
  partial[tid] = sum;
  __syncthreads();

  for (unsigned int stride = BLOCK_SIZE / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      partial[tid] += partial[tid + stride];
    }
    __syncthreads();
  }
  if (tid == 0) {
    block_sums[blockIdx.x] = partial[0];
  }
}
