// SPDX-License-Identifier: MIT
// inclusive int scan (n <= 65536): grid ceil(n/256), block 256; 3 launches and args listed below
// hipacm: option=-O3
//
// Full scan of n <= 256 * 256 ints:
//   1. scan_blocks<<<ceil(n/256), 256>>>(in, out, block_sums, n): per-block Hillis-Steele scan
//      (double-buffered in shared memory); block b's total goes to block_sums[b].
//   2. scan_blocks<<<1, 256>>>(block_sums, block_sums, NULL, ceil(n/256)): scans the totals.
//   3. scan_add_offsets<<<ceil(n/256), 256>>>(out, block_sums, n): adds the preceding total.
// Signatures: scan_blocks(const int* in, int* out, int* block_sums, int n) (block_sums may be NULL)
// and scan_add_offsets(int* out, const int* scanned_block_sums, int n). blockDim.x must be 256.
#define SCAN_BLOCK 256

extern "C" __global__ void scan_blocks(const int* in, int* out, int* block_sums, int n) {
  __shared__ int buffer[2][SCAN_BLOCK];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * SCAN_BLOCK + tid;

  int src = 0;
  buffer[src][tid] = (i < n) ? in[i] : 0;
  __syncthreads();
  for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
    const int dst = 1 - src;
    int v = buffer[src][tid];
    if (tid >= offset) {
      v += buffer[src][tid - offset];
    }
    buffer[dst][tid] = v;
    __syncthreads();
    src = dst;
  }

  if (i < n) {
    out[i] = buffer[src][tid];
  }
  if (block_sums != 0 && tid == SCAN_BLOCK - 1) {
    block_sums[blockIdx.x] = buffer[src][tid];
  }
}

extern "C" __global__ void scan_add_offsets(int* out, const int* scanned_block_sums, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < n) {
    out[i] += scanned_block_sums[blockIdx.x - 1];
  }
}
