// SPDX-License-Identifier: MIT
#include "a.h"
#include "sub/b.h"
__global__ void k(float* p) { p[0] = nope + a_fn() + b_fn(); }
template<class T> __device__ T t(T x) { return x.q; }
__global__ void k2(int* p) { p[0] = t(1); }
