extern "C" __global__ void broken(float* p) {
  p[threadIdx.x] = undefined_function(p);
}
