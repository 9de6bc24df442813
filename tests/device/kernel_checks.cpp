// SPDX-License-Identifier: MIT
// kernel_checks.cpp - launches each example kernel on fixed inputs and compares with a CPU result.
#include "kernel_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>

#include "device_buffer.h"

namespace hipacm::device {
namespace {

unsigned blocks_for(long n, unsigned block) {
  return static_cast<unsigned>((n + block - 1) / block);
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

/// "" when every element is within abs_tol + rel_tol * |want|; else the first miss and a count.
template <typename T, typename R>
std::string compare(const std::vector<T>& got, const std::vector<R>& want, double abs_tol,
                    double rel_tol) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  std::size_t misses = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (!(std::fabs(g - w) <= abs_tol + rel_tol * std::fabs(w))) {
      if (misses++ == 0) first = i;
    }
  }
  if (misses == 0) return "";
  std::ostringstream out;
  out.precision(9);
  out << misses << " of " << got.size() << " elements differ; first at " << first << ": got "
      << static_cast<double>(got[first]) << ", expected " << static_cast<double>(want[first]);
  return out.str();
}

void launch(const CudaDriver& cu, CuFunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
            std::vector<void*> args) {
  check_cu(cu, cu.launch(f, gx, gy, bx, by, args.data()), "cuLaunchKernel");
  check_cu(cu, cu.synchronize(), "cuCtxSynchronize after the launch");
}

float gelu_ref(float x) {
  const double xd = x;
  return static_cast<float>(0.5 * xd *
                            (1.0 + std::tanh(0.7978845608028654 * (xd + 0.044715 * xd * xd * xd))));
}

// ---- one function per example; each returns "" on a match ----

std::string check_vector_add(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("vector_add.hip", "vector_add", false);
  int n = 100003;
  const auto a = random_floats(n, 1), b = random_floats(n, 2);
  DeviceBuffer da(cu, a), db(cu, b), dc(cu, n * sizeof(float));
  launch(cu, f, blocks_for(n, 256), 1, 256, 1, {da.arg(), db.arg(), dc.arg(), &n});
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = a[i] + b[i];
  return compare(dc.download<float>(), want, 0.0, 0.0);
}

std::string check_saxpy(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("saxpy.hip", "saxpy", false);
  int n = 100003;
  float alpha = 2.5f;
  const auto x = random_floats(n, 3), y = random_floats(n, 4);
  DeviceBuffer dx(cu, x), dy(cu, y);
  launch(cu, f, blocks_for(n, 256), 1, 256, 1, {&n, &alpha, dx.arg(), dy.arg()});
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = static_cast<double>(alpha) * x[i] + y[i];
  return compare(dy.download<float>(), want, 1e-6, 1e-6);  // FMA contraction is allowed
}

std::string check_reduce_sum(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("reduce_sum.hip", "reduce_sum", false);
  int n = 1 << 20;
  const unsigned grid = 64, block = 256;
  const auto in = random_floats(n, 5);
  DeviceBuffer din(cu, in), dsums(cu, grid * sizeof(float));
  launch(cu, f, grid, 1, block, 1, {din.arg(), dsums.arg(), &n});
  // Block b owns every element whose 256-wide chunk index is b modulo the grid size.
  std::vector<double> want(grid, 0.0), magnitude(grid, 0.0);
  for (int i = 0; i < n; ++i) {
    want[(i / block) % grid] += in[i];
    magnitude[(i / block) % grid] += std::fabs(in[i]);
  }
  const auto got = dsums.download<float>();
  for (unsigned b = 0; b < grid; ++b) {
    if (std::fabs(got[b] - want[b]) > 1e-5 * magnitude[b] + 1e-4) {
      std::ostringstream out;
      out << "block " << b << " sum " << got[b] << ", expected " << want[b];
      return out.str();
    }
  }
  return "";
}

std::string check_gemm(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("gemm_tiled.hip", "gemm_tiled", false);
  int m = 70, n = 50, k = 33;  // not multiples of the 16-wide tile on purpose
  const auto a = random_floats(m * k, 6), b = random_floats(k * n, 7);
  DeviceBuffer da(cu, a), db(cu, b), dc(cu, m * n * sizeof(float));
  launch(cu, f, blocks_for(n, 16), blocks_for(m, 16), 16, 16,
         {da.arg(), db.arg(), dc.arg(), &m, &n, &k});
  std::vector<double> want(m * n, 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      for (int i = 0; i < k; ++i)
        want[r * n + c] += static_cast<double>(a[r * k + i]) * b[i * n + c];
  return compare(dc.download<float>(), want, 5e-4, 1e-4);
}

std::string check_softmax(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("softmax_rows.hip", "softmax_rows", false);
  int rows = 37, cols = 1000;
  const auto in = random_floats(rows * cols, 8, -8.0f, 8.0f);
  DeviceBuffer din(cu, in), dout(cu, rows * cols * sizeof(float));
  launch(cu, f, rows, 1, 256, 1, {din.arg(), dout.arg(), &rows, &cols});
  std::vector<double> want(rows * cols);
  for (int r = 0; r < rows; ++r) {
    const float* x = &in[r * cols];
    const double mx = *std::max_element(x, x + cols);
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) sum += std::exp(x[c] - mx);
    for (int c = 0; c < cols; ++c) want[r * cols + c] = std::exp(x[c] - mx) / sum;
  }
  return compare(dout.download<float>(), want, 1e-7, 1e-4);
}

std::string check_layernorm(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("layernorm.hip", "layernorm", false);
  int rows = 19, cols = 777;
  float eps = 1e-5f;
  const auto in = random_floats(rows * cols, 9, -3.0f, 5.0f);
  const auto gamma = random_floats(cols, 10, 0.5f, 1.5f), beta = random_floats(cols, 11);
  DeviceBuffer din(cu, in), dout(cu, rows * cols * sizeof(float)), dg(cu, gamma), dbeta(cu, beta);
  launch(cu, f, rows, 1, 256, 1,
         {din.arg(), dout.arg(), dg.arg(), dbeta.arg(), &rows, &cols, &eps});
  std::vector<double> want(rows * cols);
  for (int r = 0; r < rows; ++r) {
    const float* x = &in[r * cols];
    double mean = 0.0, var = 0.0;
    for (int c = 0; c < cols; ++c) mean += x[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (x[c] - mean) * (x[c] - mean);
    var /= cols;
    for (int c = 0; c < cols; ++c)
      want[r * cols + c] = (x[c] - mean) / std::sqrt(var + eps) * gamma[c] + beta[c];
  }
  return compare(dout.download<float>(), want, 1e-4, 1e-4);
}

std::string check_transpose(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("transpose_tiled.hip", "transpose_tiled", false);
  int rows = 67, cols = 45;
  const auto in = random_floats(rows * cols, 12);
  DeviceBuffer din(cu, in), dout(cu, rows * cols * sizeof(float));
  launch(cu, f, blocks_for(cols, 32), blocks_for(rows, 32), 32, 8,
         {din.arg(), dout.arg(), &rows, &cols});
  std::vector<float> want(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want[c * rows + r] = in[r * cols + c];
  return compare(dout.download<float>(), want, 0.0, 0.0);
}

std::string check_histogram(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("histogram.hip", "histogram", false);
  int n = 1000003;
  std::mt19937 gen(13);
  std::vector<unsigned char> data(n);
  for (auto& d : data) d = static_cast<unsigned char>(gen() % 256);
  DeviceBuffer ddata(cu, data), dhist(cu, 256 * sizeof(unsigned));
  dhist.zero();
  launch(cu, f, 120, 1, 256, 1, {ddata.arg(), &n, dhist.arg()});
  std::vector<unsigned> want(256, 0);
  for (unsigned char d : data) ++want[d];
  return compare(dhist.download<unsigned>(), want, 0.0, 0.0);
}

template <typename T>
std::string check_scale(const CudaDriver& cu, const FunctionLookup& fn, const char* expression) {
  const CuFunction f = fn("scale.hip", expression, true);
  int n = 5003;
  T factor = static_cast<T>(1.5);
  std::vector<T> data(n);
  for (int i = 0; i < n; ++i) data[i] = static_cast<T>(i) * static_cast<T>(0.25) - 100;
  DeviceBuffer dd(cu, data);
  launch(cu, f, blocks_for(n, 256), 1, 256, 1, {dd.arg(), &factor, &n});
  std::vector<T> want(n);
  for (int i = 0; i < n; ++i) want[i] = data[i] * factor;
  return compare(dd.download<T>(), want, 0.0, 0.0);
}

std::string check_sigmoid_blend(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("sigmoid_blend.hip", "sigmoid_blend", false);
  int n = 10007;
  const auto a = random_floats(n, 14), b = random_floats(n, 15), t = random_floats(n, 16, -6, 6);
  DeviceBuffer da(cu, a), db(cu, b), dt(cu, t), dout(cu, n * sizeof(float));
  launch(cu, f, blocks_for(n, 256), 1, 256, 1, {da.arg(), db.arg(), dt.arg(), dout.arg(), &n});
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(t[i])));
    want[i] = a[i] + s * (b[i] - a[i]);
  }
  return compare(dout.download<float>(), want, 1e-5, 1e-4);
}

std::string check_prefix_scan(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction blocks = fn("prefix_scan.hip", "scan_blocks", false);
  const CuFunction offsets = fn("prefix_scan.hip", "scan_add_offsets", false);
  int n = 50000;
  int num_blocks = static_cast<int>(blocks_for(n, 256));
  std::mt19937 gen(17);
  std::vector<int> in(n);
  for (auto& v : in) v = static_cast<int>(gen() % 10);
  DeviceBuffer din(cu, in), dout(cu, n * sizeof(int)), dsums(cu, num_blocks * sizeof(int));
  CuDevicePtr null_sums = 0;
  launch(cu, blocks, num_blocks, 1, 256, 1, {din.arg(), dout.arg(), dsums.arg(), &n});
  launch(cu, blocks, 1, 1, 256, 1, {dsums.arg(), dsums.arg(), &null_sums, &num_blocks});
  launch(cu, offsets, num_blocks, 1, 256, 1, {dout.arg(), dsums.arg(), &n});
  std::vector<int> want(n);
  int running = 0;
  for (int i = 0; i < n; ++i) want[i] = running += in[i];
  return compare(dout.download<int>(), want, 0.0, 0.0);
}

std::string check_conv2d(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("conv2d_3x3.hip", "conv2d_3x3", false);
  int w = 61, h = 47;
  const auto in = random_floats(w * h, 18), filter = random_floats(9, 19);
  DeviceBuffer din(cu, in), dout(cu, w * h * sizeof(float)), dfilter(cu, filter);
  launch(cu, f, blocks_for(w, 16), blocks_for(h, 16), 16, 16,
         {din.arg(), dout.arg(), dfilter.arg(), &w, &h});
  std::vector<double> want(w * h, 0.0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int fy = 0; fy < 3; ++fy)
        for (int fx = 0; fx < 3; ++fx) {
          const int sx = std::clamp(x + fx - 1, 0, w - 1), sy = std::clamp(y + fy - 1, 0, h - 1);
          want[y * w + x] += static_cast<double>(filter[fy * 3 + fx]) * in[sy * w + sx];
        }
  return compare(dout.download<float>(), want, 1e-5, 1e-5);
}

std::string check_activation(const CudaDriver& cu, const FunctionLookup& fn, bool gelu) {
  const CuFunction f = fn("activations.hip", gelu ? "gelu_f32" : "relu_f32", false);
  int n = 10007;
  const auto in = random_floats(n, 20, -5.0f, 5.0f);
  DeviceBuffer din(cu, in), dout(cu, n * sizeof(float));
  launch(cu, f, blocks_for(n, 256), 1, 256, 1, {din.arg(), dout.arg(), &n});
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = gelu ? gelu_ref(in[i]) : std::max(in[i], 0.0f);
  return gelu ? compare(dout.download<float>(), want, 1e-5, 1e-4)
              : compare(dout.download<float>(), want, 0.0, 0.0);
}

std::string check_dot(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("dot_shfl.hip", "dot_shfl", false);
  int n = 100000;
  const auto x = random_floats(n, 21), y = random_floats(n, 22);
  DeviceBuffer dx(cu, x), dy(cu, y), dresult(cu, sizeof(float));
  dresult.zero();
  launch(cu, f, 40, 1, 256, 1, {dx.arg(), dy.arg(), dresult.arg(), &n});
  double want = 0.0, magnitude = 0.0;
  for (int i = 0; i < n; ++i) {
    want += static_cast<double>(x[i]) * y[i];
    magnitude += std::fabs(static_cast<double>(x[i]) * y[i]);
  }
  const float got = dresult.download<float>()[0];
  if (std::fabs(got - want) <= 1e-5 * magnitude + 1e-4) return "";
  std::ostringstream out;
  out << "dot " << got << ", expected " << want;
  return out.str();
}

std::string check_bias_gelu(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("bias_gelu.hip", "bias_gelu", false);
  int rows = 33, cols = 129;
  const auto in = random_floats(rows * cols, 23, -4, 4), bias = random_floats(cols, 24);
  DeviceBuffer din(cu, in), dbias(cu, bias), dout(cu, rows * cols * sizeof(float));
  launch(cu, f, blocks_for(rows * cols, 256), 1, 256, 1,
         {din.arg(), dbias.arg(), dout.arg(), &rows, &cols});
  std::vector<float> want(rows * cols);
  for (int i = 0; i < rows * cols; ++i) want[i] = gelu_ref(in[i] + bias[i % cols]);
  return compare(dout.download<float>(), want, 1e-5, 1e-4);
}

std::string check_matvec(const CudaDriver& cu, const FunctionLookup& fn) {
  const CuFunction f = fn("matvec.hip", "matvec", false);
  int rows = 300, cols = 257;
  const auto a = random_floats(rows * cols, 25), x = random_floats(cols, 26);
  DeviceBuffer da(cu, a), dx(cu, x), dy(cu, rows * sizeof(float));
  launch(cu, f, blocks_for(rows, 256), 1, 256, 1, {da.arg(), dx.arg(), dy.arg(), &rows, &cols});
  std::vector<double> want(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want[r] += static_cast<double>(a[r * cols + c]) * x[c];
  return compare(dy.download<float>(), want, 1e-3, 1e-4);
}

}  // namespace

std::vector<KernelCheck> all_kernel_checks() {
  return {
      {"relu_f32", "activations.hip",
       [](const CudaDriver& cu, const FunctionLookup& fn) {
         return check_activation(cu, fn, false);
       }},
      {"gelu_f32", "activations.hip",
       [](const CudaDriver& cu, const FunctionLookup& fn) {
         return check_activation(cu, fn, true);
       }},
      {"bias_gelu", "bias_gelu.hip", check_bias_gelu},
      {"conv2d_3x3", "conv2d_3x3.hip", check_conv2d},
      {"dot_shfl", "dot_shfl.hip", check_dot},
      {"gemm_tiled", "gemm_tiled.hip", check_gemm},
      {"histogram", "histogram.hip", check_histogram},
      {"layernorm", "layernorm.hip", check_layernorm},
      {"matvec", "matvec.hip", check_matvec},
      {"prefix_scan (scan_blocks x2 + scan_add_offsets)", "prefix_scan.hip", check_prefix_scan},
      {"reduce_sum", "reduce_sum.hip", check_reduce_sum},
      {"saxpy", "saxpy.hip", check_saxpy},
      {"scale<float> (lowered name)", "scale.hip",
       [](const CudaDriver& cu, const FunctionLookup& fn) {
         return check_scale<float>(cu, fn, "scale<float>");
       }},
      {"scale<double> (lowered name)", "scale.hip",
       [](const CudaDriver& cu, const FunctionLookup& fn) {
         return check_scale<double>(cu, fn, "scale<double>");
       }},
      {"sigmoid_blend", "sigmoid_blend.hip", check_sigmoid_blend},
      {"softmax_rows", "softmax_rows.hip", check_softmax},
      {"transpose_tiled", "transpose_tiled.hip", check_transpose},
      {"vector_add", "vector_add.hip", check_vector_add},
  };
}

}  // namespace hipacm::device
