// SPDX-License-Identifier: MIT
// out = in^T, in rows x cols; grid (ceil(cols/32), ceil(rows/32)), block (32,8); (in,out,rows,cols)
// hipacm: option=-O3
//
// Tiled transpose through a 32x33 shared tile: the extra column keeps the column-wise reads free
// of shared-memory bank conflicts. Each thread moves 4 elements (32 / 8 rows per block).
// Signature: (const float* in, float* out, int rows, int cols); out is cols x rows.
#define TRANSPOSE_TILE 32
#define TRANSPOSE_BLOCK_ROWS 8

extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];

  int x = blockIdx.x * TRANSPOSE_TILE + threadIdx.x;  // input column
  int y = blockIdx.y * TRANSPOSE_TILE + threadIdx.y;  // input row
  for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_BLOCK_ROWS) {
    if (x < cols && y + j < rows) {
      tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    }
  }
  __syncthreads();

  x = blockIdx.y * TRANSPOSE_TILE + threadIdx.x;  // output column = input row
  y = blockIdx.x * TRANSPOSE_TILE + threadIdx.y;  // output row = input column
  for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_BLOCK_ROWS) {
    if (x < rows && y + j < cols) {
      out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
  }
}
