#include "scale.cuh"
namespace blas {
template <class T, int N>
__global__ void scale(T* data, T factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) data[i] = scaled(data[i], factor) * SCALE;
}
template <class T>
__global__ void fill(T* data, T value) { data[threadIdx.x] = value; }
}  // namespace blas
