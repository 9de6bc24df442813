// SPDX-License-Identifier: MIT
// 256-bin byte histogram, atomics; grid G, block 256; args (data, int n, unsigned* hist)
//
// Per-block histogram in shared memory with atomicAdd, merged into the global histogram with one
// atomicAdd per non-empty bin. hist must be zeroed before the launch; any grid size G covers n.
// Signature: (const unsigned char* data, int n, unsigned int* hist).
#define HISTOGRAM_BINS 256

extern "C" __global__ void histogram(const unsigned char* data, int n, unsigned int* hist) {
  __shared__ unsigned int local_bins[HISTOGRAM_BINS];
  for (int b = threadIdx.x; b < HISTOGRAM_BINS; b += blockDim.x) {
    local_bins[b] = 0u;
  }
  __syncthreads();

  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local_bins[data[i]], 1u);
  }
  __syncthreads();

  for (int b = threadIdx.x; b < HISTOGRAM_BINS; b += blockDim.x) {
    const unsigned int count = local_bins[b];
    if (count != 0u) {
      atomicAdd(&hist[b], count);
    }
  }
}
