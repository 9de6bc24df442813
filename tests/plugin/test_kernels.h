// test_kernels.h - the kernel sources and the arch that the mode and cache tests compile.
#pragma once

#include <string>

namespace hipacm::test {

inline constexpr const char* kArch = "gfx90a";

/// An extern "C" kernel `name`(float* a, const float* b, int n) that adds b into a.
inline std::string vadd_source(const std::string& name = "vadd") {
  return "extern \"C\" __global__ void " + name +
         "(float* a, const float* b, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) a[i] += b[i];\n"
         "}\n";
}

/// A template `scale<T>`: its instances are reached through name expressions.
inline const char* kTemplatedSource =
    "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

}  // namespace hipacm::test
