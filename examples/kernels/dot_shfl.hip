// SPDX-License-Identifier: MIT
// *result += dot(x, y) via warp shuffles; grid G, block 256; args (x, y, result, n)
// hipacm: option=-O3
//
// Grid-stride partial products, reduced inside each warp with __shfl_down, then across the
// block's warps through shared memory, then one atomicAdd per block. Works for warpSize 32
// (gfx10+, NVIDIA) and 64 (gfx9): nothing assumes a width. blockDim.x must be a multiple of 64,
// at most 1024. *result must be zeroed first. Signature: (const float* x, const float* y,
// float* result, int n).
extern "C" __global__ void dot_shfl(const float* x, const float* y, float* result, int n) {
  __shared__ float warp_sums[32];  // 1024 threads / 32 lanes at most

  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    sum += x[i] * y[i];
  }
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    sum += __shfl_down(sum, offset);
  }

  const int lane = threadIdx.x % warpSize;
  const int warp = threadIdx.x / warpSize;
  if (lane == 0) {
    warp_sums[warp] = sum;
  }
  __syncthreads();

  if (warp == 0) {
    const int num_warps = (blockDim.x + warpSize - 1) / warpSize;
    sum = (lane < num_warps) ? warp_sums[lane] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      sum += __shfl_down(sum, offset);
    }
    if (lane == 0) {
      atomicAdd(result, sum);
    }
  }
}
