// SPDX-License-Identifier: MIT
// y = A * x, A row-major rows x cols; grid ceil(rows/256), block 256; args (A, x, y, rows, cols)
// hipacm: option=-O3
//
// One thread per output row (SGEMV, no transpose). Signature: (const float* A, const float* x,
// float* y, int rows, int cols).
extern "C" __global__ void matvec(const float* A, const float* x, float* y, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float* a_row = A + (size_t)r * cols;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c) {
      acc += a_row[c] * x[c];
    }
    y[r] = acc;
  }
}
