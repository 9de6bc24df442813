// SPDX-License-Identifier: MIT
// data[i] *= factor, T float/double; grid ceil(n/256), block 256; args (T* data, T factor, n)
// hipacm: name_expression=scale<float>
// hipacm: name_expression=scale<double>
//
// A function template: hipRTC instantiates it through the name expressions above and reports the
// lowered (mangled) name of each instantiation, the name a host passes to hipModuleGetFunction.
template <typename T>
__global__ void scale(T* data, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] *= factor;
  }
}
