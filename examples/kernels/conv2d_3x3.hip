// SPDX-License-Identifier: MIT
// 3x3 filter, clamped edges; grid (ceil(W/16), ceil(H/16)), block (16,16); (in,out,filter,W,H)
// hipacm: option=-O3
//
// out[y][x] = sum_{fy,fx in 0..2} filter[fy*3+fx] * in[clamp(y+fy-1)][clamp(x+fx-1)]
// (cross-correlation, as in deep-learning "convolution"). Each block stages an 18x18 tile with a
// one-pixel halo in shared memory. Signature: (const float* in, float* out, const float* filter,
// int width, int height), images row-major.
#define CONV_BLOCK_X 16
#define CONV_BLOCK_Y 16

extern "C" __global__ void conv2d_3x3(const float* in, float* out, const float* filter, int width,
                                      int height) {
  __shared__ float tile[CONV_BLOCK_Y + 2][CONV_BLOCK_X + 2];
  const int origin_x = blockIdx.x * CONV_BLOCK_X - 1;
  const int origin_y = blockIdx.y * CONV_BLOCK_Y - 1;

  for (int ty = threadIdx.y; ty < CONV_BLOCK_Y + 2; ty += CONV_BLOCK_Y) {
    for (int tx = threadIdx.x; tx < CONV_BLOCK_X + 2; tx += CONV_BLOCK_X) {
      const int gx = min(max(origin_x + tx, 0), width - 1);
      const int gy = min(max(origin_y + ty, 0), height - 1);
      tile[ty][tx] = in[gy * width + gx];
    }
  }
  __syncthreads();

  const int x = blockIdx.x * CONV_BLOCK_X + threadIdx.x;
  const int y = blockIdx.y * CONV_BLOCK_Y + threadIdx.y;
  if (x < width && y < height) {
    float acc = 0.0f;
    for (int fy = 0; fy < 3; ++fy) {
      for (int fx = 0; fx < 3; ++fx) {
        acc += filter[fy * 3 + fx] * tile[threadIdx.y + fy][threadIdx.x + fx];
      }
    }
    out[y * width + x] = acc;
  }
}
