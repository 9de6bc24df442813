// SPDX-License-Identifier: MIT
// C = A*B, MxK * KxN floats; grid (ceil(N/16), ceil(M/16)), block (16,16); args (A,B,C,M,N,K)
// hipacm: option=-O3
//
// Tiled SGEMM: each 16x16 block stages one tile of A and one of B in shared memory per step along
// K. Out-of-range tile entries are zero, so M, N and K need not be multiples of 16.
// Signature: (const float* A, const float* B, float* C, int M, int N, int K).
#define GEMM_TILE 16

extern "C" __global__ void gemm_tiled(const float* A, const float* B, float* C, int M, int N,
                                      int K) {
  __shared__ float a_tile[GEMM_TILE][GEMM_TILE];
  __shared__ float b_tile[GEMM_TILE][GEMM_TILE];

  const int row = blockIdx.y * GEMM_TILE + threadIdx.y;
  const int col = blockIdx.x * GEMM_TILE + threadIdx.x;
  float acc = 0.0f;

  for (int t = 0; t < K; t += GEMM_TILE) {
    const int a_col = t + threadIdx.x;
    const int b_row = t + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < GEMM_TILE; ++k) {
      acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    C[row * N + col] = acc;
  }
}
